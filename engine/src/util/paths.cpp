#include "kf/paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kf/process.h"

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

}  // namespace kf
