#include "testsupport.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

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

}  // namespace kftest
