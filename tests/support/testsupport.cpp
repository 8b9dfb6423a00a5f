#include "testsupport.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <unistd.h>

namespace kftest {

namespace {
std::filesystem::path env_path(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::filesystem::path(v) : std::filesystem::path(fallback);
}
struct TempDirs {
    std::vector<std::filesystem::path> dirs;
    ~TempDirs() {
        if (std::getenv("KF_KEEP_TEMP")) return;
        std::error_code ec;
        for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
    }
};
TempDirs& temp_dirs() {
    static TempDirs t;
    return t;
}
}  // namespace

std::filesystem::path source_dir() { return env_path("KF_SOURCE_DIR", "."); }
std::filesystem::path bin_dir() { return env_path("KF_BIN_DIR", "./bin"); }
std::filesystem::path worker_path() { return bin_dir() / "kfoundry-worker"; }
std::filesystem::path cli_path() { return bin_dir() / "kfoundry"; }
std::filesystem::path data(const std::string& relative) { return source_dir() / "tests" / "data" / relative; }
std::filesystem::path task(const std::string& relative) { return source_dir() / "tasks" / relative; }

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
}

std::filesystem::path temp_dir(const std::string& tag) {
    auto base = std::filesystem::temp_directory_path();
    std::string templ = (base / ("kftest-" + tag + "-XXXXXX")).string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    char* made = mkdtemp(buf.data());
    std::filesystem::path p = made ? std::filesystem::path(made) : base / ("kftest-" + tag);
    std::filesystem::create_directories(p);
    temp_dirs().dirs.push_back(p);
    return p;
}

bool gpu_available() {
    if (std::getenv("KF_FORCE_GPU")) return true;
    if (std::getenv("KF_NO_GPU")) return false;
    return std::system("nvidia-smi -L > /dev/null 2>&1") == 0;
}

std::map<std::string, std::string> snapshot(const std::vector<std::filesystem::path>& roots) {
    namespace fs = std::filesystem;
    std::map<std::string, std::string> out;
    for (const auto& root : roots) {
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec) break;
            if (it->is_regular_file()) out[it->path().string()] = read_file(it->path());
            else out[it->path().string()] = "<dir>";
        }
    }
    return out;
}

std::vector<std::string> escapees() {
    namespace fs = std::filesystem;
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmd, comm;
        try {
            cmd = read_file(e.path() / "cmdline");
            comm = read_file(e.path() / "comm");
        } catch (...) {
            continue;
        }
        if (cmd.find("kf-escapee") != std::string::npos || comm.find("kf-escapee") != std::string::npos)
            found.push_back(name);
    }
    return found;
}

int descendants_with_arg(const std::string& arg, const std::string& name) {
    namespace fs = std::filesystem;
    // Every process's parent, then the tree under this process.
    std::map<long, long> parent;
    std::map<long, std::string> cmdline;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string pid_name = e.path().filename().string();
        if (pid_name.empty() || pid_name.find_first_not_of("0123456789") != std::string::npos) continue;
        try {
            const std::string stat = read_file(e.path() / "stat");
            // pid (comm) state ppid ...: the command name may hold spaces and parentheses.
            const auto close = stat.rfind(')');
            if (close == std::string::npos) continue;
            long ppid = 0;
            char state = 0;
            if (std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) != 2) continue;
            parent[std::stol(pid_name)] = ppid;
            if (read_file(e.path() / "comm").rfind(name, 0) == 0) cmdline[std::stol(pid_name)] = read_file(e.path() / "cmdline");
        } catch (...) {
            continue;  // gone meanwhile
        }
    }
    const long self = static_cast<long>(getpid());
    int found = 0;
    for (const auto& [pid, cmd] : cmdline) {
        bool below = false;
        for (long p = parent.count(pid) ? parent[pid] : 0, hops = 0; p > 1 && hops < 64; p = parent.count(p) ? parent[p] : 0, ++hops)
            if (p == self) {
                below = true;
                break;
            }
        if (!below) continue;
        // The command line's words are separated by NUL bytes.
        std::size_t start = 0;
        while (start <= cmd.size()) {
            const std::size_t end = cmd.find('\0', start);
            if (cmd.compare(start, (end == std::string::npos ? cmd.size() : end) - start, arg) == 0) {
                ++found;
                break;
            }
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    return found;
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds deadline, std::chrono::milliseconds poll) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (!cond()) {
        if (std::chrono::steady_clock::now() >= until) return false;
        // How often the condition is looked at, not a wait for what it says.
        std::this_thread::sleep_for(poll);
    }
    return true;
}

}  // namespace kftest
