// Builds bubblewrap command lines from a SandboxView (kf/sandbox_view.h). The view is
// allow-listed: nothing of the host's file system is visible unless named.
#include "kf/sandbox_view.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include <unistd.h>

#include "kf/process.h"

namespace kf {

namespace fs = std::filesystem;

namespace {

std::string find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path && *path ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        std::size_t colon = dirs.find(':', start);
        std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!dir.empty()) {
            fs::path p = fs::path(dir) / name;
            if (access(p.c_str(), X_OK) == 0) return p.string();
        }
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return {};
}

bool is_within(const fs::path& p, const fs::path& dir) {
    auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
    return d == dir.end();
}

/**
 * Adds the arguments that show `p` read-only. Symbolic links are recreated (--symlink) and
 * their targets followed, so that /bin -> usr/bin and /usr/local/cuda -> cuda-13.0 look as
 * on the host; a path inside a folder bound already is visible with it (only a link's
 * target outside it is added). `seen` stops loops and duplicates.
 */
void add_read_only(std::vector<std::string>& args, const fs::path& p, std::set<fs::path>& seen,
                   std::vector<fs::path>& bound, int depth = 0) {
    if (p.empty() || !p.is_absolute() || depth > 8 || !seen.insert(p).second) return;
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    if (ec || !fs::exists(st)) return;
    bool visible = std::any_of(bound.begin(), bound.end(), [&](const fs::path& b) { return is_within(p, b); });
    if (fs::is_symlink(st)) {
        fs::path target = fs::read_symlink(p, ec);
        if (ec) return;
        if (!visible) args.insert(args.end(), {"--symlink", target.string(), p.string()});
        fs::path resolved = target.is_absolute() ? target : p.parent_path() / target;
        add_read_only(args, resolved.lexically_normal(), seen, bound, depth + 1);
        return;
    }
    if (visible) return;
    args.insert(args.end(), {"--ro-bind", p.string(), p.string()});
    bound.push_back(p);
}

}  // namespace

std::vector<fs::path> system_read_only_paths() {
    return {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives",
            "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"};
}

std::string bwrap_program() {
    if (const char* v = std::getenv("KF_BWRAP"); v && *v) return v;
    return find_program("bwrap");
}

std::vector<std::string> bwrap_prefix(const SandboxView& view) {
    std::string program = bwrap_program();
    std::vector<std::string> args = {program.empty() ? std::string("bwrap") : program,
                                     "--die-with-parent", "--new-session", "--unshare-all"};
    if (view.network) args.push_back("--share-net");
    if (view.unprivileged)
        args.insert(args.end(), {"--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL"});
    args.insert(args.end(), {"--dev", "/dev", "--proc", "/proc"});
    if (view.tmp_bytes > 0) args.insert(args.end(), {"--size", std::to_string(view.tmp_bytes)});
    args.insert(args.end(), {"--tmpfs", "/tmp", "--setenv", "TMPDIR", "/tmp"});
    std::set<fs::path> seen;
    std::vector<fs::path> bound;
    for (const auto& p : view.read_only) add_read_only(args, p.lexically_normal(), seen, bound);
    for (const auto& d : view.devices) {
        std::error_code ec;
        if (fs::exists(d, ec)) args.insert(args.end(), {"--dev-bind", d.string(), d.string()});
    }
    if (!view.scratch.empty()) {
        args.insert(args.end(), {"--bind", view.scratch.string(), view.scratch.string()});
        args.insert(args.end(), {"--chdir", view.scratch.string()});
    } else {
        args.insert(args.end(), {"--chdir", "/tmp"});
    }
    if (view.info_fd >= 0) args.insert(args.end(), {"--info-fd", std::to_string(view.info_fd)});
    args.push_back("--");
    return args;
}

bool bwrap_usable(std::string* why) {
    if (const char* off = std::getenv("KF_SANDBOX"); off && std::string(off) == "off") {
        if (why) *why = "KF_SANDBOX=off";
        return false;
    }
    // One probe per bwrap program (KF_BWRAP may change, e.g. in tests).
    static std::mutex mutex;
    static std::map<std::string, std::pair<bool, std::string>> probed;
    std::string program = bwrap_program();
    std::lock_guard lock(mutex);
    auto it = probed.find(program);
    if (it == probed.end()) {
        bool usable = false;
        std::string reason;
        if (program.empty()) {
            reason = "bwrap (Debian package bubblewrap) is not installed";
        } else {
            ProcessResult r = run_process({program, "--ro-bind", "/", "/", "true"}, std::chrono::seconds(20));
            usable = !r.start_failed && !r.timed_out && r.exit_code == 0;
            if (!usable) {
                std::string out = r.output.substr(0, 300);
                while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
                reason = program + " cannot create a sandbox here (are user namespaces forbidden?)" +
                         (out.empty() ? std::string() : ": " + out);
            }
        }
        it = probed.emplace(program, std::make_pair(usable, reason)).first;
    }
    if (why) *why = it->second.second;
    return it->second.first;
}

}  // namespace kf
