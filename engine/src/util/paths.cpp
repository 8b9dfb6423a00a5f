#include "kf/paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kf/process.h"
#include "kf/task.h"

namespace kf {

std::filesystem::path bundled_tasks_dir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (const char* env = std::getenv("KF_TASKS_DIR"); env && *env && fs::is_directory(env, ec)) return env;
    fs::path exe = executable_dir();
    for (const fs::path& p : {exe / ".." / ".." / "tasks", exe / ".." / "share" / "kernel-foundry" / "tasks", exe / ".." / "tasks"})
        if (fs::is_directory(p, ec)) return fs::weakly_canonical(p, ec);
    return {};
}

std::string read_text_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::optional<std::filesystem::path> resolve_task(const std::string& arg) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(arg, ec) || fs::is_regular_file(arg, ec)) return fs::path(arg);
    fs::path root = bundled_tasks_dir();
    if (root.empty()) return std::nullopt;
    if (fs::is_regular_file(root / arg / "task.json", ec)) return root / arg;
    for (const auto& dir : find_task_dirs(root))
        if (dir.filename() == arg) return dir;
    return std::nullopt;
}

}  // namespace kf
