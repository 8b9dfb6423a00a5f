#include "runner_activity.h"


#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kf::worker {

namespace {

/** The state letter of /proc/.../stat (after the command name in parentheses), or 0. */
char stat_state(const std::filesystem::path& stat_file) {
    std::ifstream in(stat_file);
    std::string stat;
    std::getline(in, stat);
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return 0;
    return stat[close + 2];
}

int count_words(const std::filesystem::path& file) {
    std::ifstream in(file);
    int n = 0;
    for (std::string w; in >> w;) ++n;
    return n;
}

}  // namespace

ThreadCensus take_census(pid_t pid) {
    ThreadCensus c;
    std::error_code ec;
    std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec);
    if (ec) return c;
    c.readable = true;
    for (const auto& t : it) {
        char state = stat_state(t.path() / "stat");
        if (state == 0) continue;  // gone meanwhile
        ++c.threads;
        if (state != 'T' && state != 't' && state != 'Z' && state != 'X') c.all_stopped = false;
        c.children += count_words(t.path() / "children");
    }
    return c;
}

bool process_gone(pid_t pid) {
    const char state = stat_state("/proc/" + std::to_string(pid) + "/stat");
    return state == 0 || state == 'Z' || state == 'X';
}

std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
        std::ifstream in(t.path() / "children");
        long child = 0;
        while (in >> child) out.push_back(static_cast<pid_t>(child));
    }
    return out;
}

pid_t only_child(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    long child = -1, more = -1;
    if (in >> child && !(in >> more)) return static_cast<pid_t>(child);
    if (child > 0) return -1;
    // Kernels without the children file: look for a process whose parent is pid.
    std::error_code ec;
    pid_t found = -1;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
        std::ifstream st(e.path() / "stat");
        std::string line;
        std::getline(st, line);
        auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state;
        long ppid = 0;
        if (rest >> state >> ppid && ppid == pid) {
            if (found != -1) return -1;
            found = static_cast<pid_t>(std::stol(name));
        }
    }
    return found;
}

ProcessCpuClock::ProcessCpuClock(pid_t pid) {
    if (pid > 0 && clock_getcpuclockid(pid, &clock_) == 0) valid_ = ns() >= 0;
}

long long ProcessCpuClock::ns() const {
    timespec ts{};
    if (clock_gettime(clock_, &ts) != 0) return -1;
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace kf::worker
