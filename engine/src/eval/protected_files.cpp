#include "protected_files.h"

#include <fstream>
#include <sstream>

namespace kf {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxBytes = 16u << 20;

bool read_all(const fs::path& p, std::string& out) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

}  // namespace

void ProtectedFiles::record(const fs::path& path) {
    std::error_code ec;
    auto keep = [this](const fs::path& f) {
        std::error_code e;
        if (!fs::is_regular_file(f, e) || fs::is_symlink(f, e) || fs::file_size(f, e) > kMaxBytes) return;
        std::string bytes;
        if (read_all(f, bytes)) files_[f] = std::move(bytes);
    };
    if (fs::is_directory(path, ec)) {
        for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec) break;
            keep(it->path());
        }
    } else {
        keep(path);
    }
}

void ProtectedFiles::record_once(const fs::path& path) {
    if (files_.count(path) == 0) record(path);
}

std::vector<std::string> ProtectedFiles::restore_changed() {
    std::vector<std::string> changed;
    for (const auto& [path, bytes] : files_) {
        std::string now;
        if (read_all(path, now) && now == bytes) continue;
        changed.push_back(path.string());
        std::error_code ec;
        // In place where it is still a plain file (so that a process that has it mapped, like
        // a loaded reference, sees the clean bytes again); a link put in its place goes.
        if (fs::is_symlink(path, ec) || !fs::is_regular_file(path, ec)) fs::remove_all(path, ec);
        fs::create_directories(path.parent_path(), ec);
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    return changed;
}

}  // namespace kf
