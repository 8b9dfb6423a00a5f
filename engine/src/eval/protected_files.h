#pragma once
// Files a candidate must never change: the task's folder, the compiled reference and the
// cached device peaks. Their contents are recorded, compared after every evaluation, and
// written back when they differ (docs/sandbox.md).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kf {

class ProtectedFiles {
public:
    /** Records `path` as it is now (a file, or every regular file under a folder), replacing
     *  what was recorded for it. Files over 16 MiB are not recorded. */
    void record(const std::filesystem::path& path);
    /** Records `path` only if it is not recorded yet. */
    void record_once(const std::filesystem::path& path);
    /** The recorded files that changed or vanished, each written back as recorded. */
    std::vector<std::string> restore_changed();

private:
    std::map<std::filesystem::path, std::string> files_;
};

}  // namespace kf
