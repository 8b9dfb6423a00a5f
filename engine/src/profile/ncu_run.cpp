// Running Nsight Compute over the worker's one-shot profile mode (docs/profiling.md). ncu
// and the candidate run in child processes with a time limit; nothing here runs candidate
// code in the engine.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kf/process.h"
#include "kf/profile.h"

namespace kf {

using nlohmann::json;

namespace {

bool executable(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:@%+") ==
                          std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/** The last `n` lines of `text`, for messages. */
std::string tail_lines(const std::string& text, int n) {
    std::size_t pos = text.size();
    while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == '\r')) --pos;
    std::size_t end = pos;
    for (int i = 0; i < n && pos > 0; ++i) {
        std::size_t nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) {
            pos = 0;
            break;
        }
        pos = nl;
    }
    std::string t = text.substr(pos, end - pos);
    while (!t.empty() && (t.front() == '\n' || t.front() == '\r')) t.erase(t.begin());
    if (t.size() > 1200) t = "..." + t.substr(t.size() - 1200);
    return t;
}

/** Requested metrics that an ==ERROR== line of ncu says it does not know. */
std::vector<std::string> unknown_metrics(const std::string& output, const std::vector<std::string>& metrics) {
    std::vector<std::string> out;
    std::istringstream in(output);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("==ERROR==") == std::string::npos) continue;
        bool about_metric = line.find("find") != std::string::npos || line.find("found") != std::string::npos ||
                            line.find("nknown") != std::string::npos || line.find("nvalid") != std::string::npos ||
                            line.find("not available") != std::string::npos;
        if (!about_metric) continue;
        for (const auto& m : metrics) {
            std::string base = m.substr(0, m.find('.'));
            if (line.find(base) != std::string::npos && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
        }
    }
    return out;
}

void write_text(const std::filesystem::path& p, const std::string& text) {
    std::error_code ec;
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    std::ofstream out(p, std::ios::binary);
    out << text;
}

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::filesystem::path make_temp_dir() {
    std::string templ = (std::filesystem::temp_directory_path() / "kf-profile-XXXXXX").string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    char* made = mkdtemp(buf.data());
    return made ? std::filesystem::path(made) : std::filesystem::path();
}

}  // namespace

std::filesystem::path find_ncu(std::string& why) {
    if (const char* env = std::getenv("KF_NCU"); env && *env) {
        std::filesystem::path p(env);
        if (executable(p)) return p;
        why = "KF_NCU=" + p.string() + " is not an executable file";
        return {};
    }
    if (const char* path = std::getenv("PATH"); path && *path) {
        std::istringstream in(path);
        std::string dir;
        while (std::getline(in, dir, ':')) {
            if (dir.empty()) continue;
            std::filesystem::path p = std::filesystem::path(dir) / "ncu";
            if (executable(p)) return p;
        }
    }
    if (executable("/usr/local/cuda/bin/ncu")) return "/usr/local/cuda/bin/ncu";
    why = "Nsight Compute (ncu) not found: set KF_NCU, put ncu on PATH or install it in /usr/local/cuda/bin";
    return {};
}

std::vector<std::string> ncu_command(const NcuInvocation& inv) {
    std::vector<std::string> argv = {inv.ncu.string(),
                                     "--csv",
                                     "--page",
                                     "raw",
                                     "--print-units",
                                     "base",
                                     "--clock-control",
                                     "none",
                                     "--nvtx",
                                     "--nvtx-include",
                                     inv.range + "/",
                                     "--launch-count",
                                     std::to_string(std::max(inv.max_launches, 1)),
                                     "--metrics",
                                     join(inv.metrics, ",")};
    argv.insert(argv.end(), inv.target.begin(), inv.target.end());
    return argv;
}

json run_ncu(const NcuInvocation& inv) {
    if (inv.ncu.empty() || !executable(inv.ncu))
        return profile_unavailable("Nsight Compute (ncu) not found at '" + inv.ncu.string() + "'", "no_profiler");
    NcuInvocation cur = inv;
    std::vector<std::string> missing;
    double seconds = 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::vector<std::string> argv = ncu_command(cur);
        ProcessResult r = run_process(argv, cur.timeout, {}, 64u << 20);
        seconds += r.seconds;
        if (!inv.keep_output.empty()) write_text(inv.keep_output, r.output);
        std::vector<std::string> quoted;
        for (const auto& a : argv) quoted.push_back(shell_quote(a));
        auto finish = [&](json j) {
            j["tool"] = "ncu";
            j["command"] = join(quoted, " ");
            j["seconds"] = seconds;
            j["exit_code"] = r.exit_code;
            if (!missing.empty()) j["missing_metrics"] = missing;
            if (!inv.keep_output.empty()) j["raw_output"] = inv.keep_output.string();
            return j;
        };
        if (r.start_failed) return finish(profile_unavailable("cannot start ncu: " + r.output, "no_profiler"));
        if (r.timed_out)
            return finish(profile_unavailable(
                "ncu did not finish within " + std::to_string(cur.timeout.count() / 1000) + " s; it was killed", "timeout"));
        if (r.output.find("ERR_NVGPUCTRPERM") != std::string::npos)
            return finish(profile_unavailable(
                "access to the GPU performance counters is denied (ERR_NVGPUCTRPERM): run as root or set the driver option "
                "NVreg_RestrictProfilingToAdminUsers=0",
                "permission"));
        auto unknown = unknown_metrics(r.output, cur.metrics);
        if (!unknown.empty() && attempt == 0 && unknown.size() < cur.metrics.size()) {
            for (const auto& m : unknown) {
                missing.push_back(m);
                cur.metrics.erase(std::remove(cur.metrics.begin(), cur.metrics.end(), m), cur.metrics.end());
            }
            continue;
        }
        NcuTable table;
        try {
            table = parse_ncu_csv(r.output);
        } catch (const ProfileError& e) {
            std::string why = r.output.find("No kernels were profiled") != std::string::npos
                                  ? "ncu profiled no kernel: none ran inside the NVTX range '" + inv.range + "'"
                                  : std::string(e.what()) + "; ncu exited with " +
                                        (r.exit_code >= 0 ? "code " + std::to_string(r.exit_code)
                                                          : "signal " + std::to_string(r.signal)) +
                                        "; its output ends with: " + tail_lines(r.output, 6);
            return finish(profile_unavailable(
                why, r.output.find("No kernels were profiled") != std::string::npos ? "no_kernels" : "failed"));
        }
        try {
            ProfileData data = profile_from_table(table, inv.runs);
            BoundVerdict v = classify_bound(data);
            return finish(profile_to_json(data, v, advise_from_profile(data, v)));
        } catch (const ProfileError& e) {
            return finish(profile_unavailable(e.what(), table.rows.empty() ? "no_kernels" : "failed"));
        }
    }
    return profile_unavailable("unreachable", "failed");
}

json profile_library(const ProfileRequest& req) {
    if (req.backend != Backend::Cuda)
        return profile_unavailable("the " + std::string(to_string(req.backend)) +
                                       " backend has no hardware profiler: timing-only diagnosis",
                                   "backend");
    std::filesystem::path ncu = req.ncu;
    if (ncu.empty()) {
        std::string why;
        ncu = find_ncu(why);
        if (ncu.empty()) return profile_unavailable(why, "no_profiler");
    }
    std::filesystem::path tmp = make_temp_dir();
    if (tmp.empty()) return profile_unavailable("cannot create a temporary folder for the profile", "failed");
    json request = {{"task", req.task_dir.string()},
                    {"candidate", req.library.string()},
                    {"case", req.case_name},
                    {"warmup", req.warmup},
                    {"runs", req.runs},
                    {"seed", req.seed},
                    {"range", kProfileRange},
                    {"result", (tmp / "result.json").string()},
                    {"log", (tmp / "worker.log").string()}};
    write_text(tmp / "request.json", request.dump(2));

    NcuInvocation inv;
    inv.ncu = ncu;
    inv.target = {req.worker.string(), "--backend", std::string(to_string(req.backend)), "--device",
                  std::to_string(req.device), "--profile-request", (tmp / "request.json").string()};
    inv.runs = std::max(req.runs, 1);
    inv.max_launches = req.max_launches;
    inv.timeout = std::chrono::milliseconds(static_cast<long long>(std::max(req.timeout_s, 1.0) * 1000));
    inv.keep_output = req.keep_output;
    json j = run_ncu(inv);

    json result = json::parse(read_text(tmp / "result.json"), nullptr, false);
    std::string code = j.value("code", "");
    if (result.is_object()) {
        j["case"] = result.value("case", "");
        if (!result.value("ok", false) && code != "permission" && code != "no_profiler") {
            const bool candidate = result.value("status", "") != "error";
            json u = profile_unavailable((candidate ? "the candidate failed under the profiler: "
                                                    : "the profiled worker failed: ") +
                                             result.value("error", std::string("?")),
                                         candidate ? "candidate" : "failed");
            for (const char* k : {"tool", "command", "seconds", "exit_code", "raw_output", "case"})
                if (j.contains(k)) u[k] = j[k];
            j = u;
        }
    } else if (!j.value("available", false) && code == "failed") {
        std::string log = read_text(tmp / "worker.log");
        if (!log.empty()) j["reason"] = j.value("reason", "") + "; the worker wrote: " + tail_lines(log, 4);
    }
    if (!std::getenv("KF_KEEP_PROFILE_TMP")) {
        std::error_code ec;
        std::filesystem::remove_all(tmp, ec);
    }
    return j;
}

}  // namespace kf
