#pragma once
// `kfoundry library ...` (curating the experience library) and `kfoundry export` (the best
// kernel of a project, its header and a Markdown report with its lineage).
#include <filesystem>
#include <string>

namespace kf::cli {

struct LibraryArgs {
    std::string action;  ///< list, show, approve, reject, export, import
    std::filesystem::path library;  ///< default: the user's library
    std::string what = "insights";  ///< list: insights or patterns
    std::string text, status, op_class;
    long long id = 0;
    std::filesystem::path file;
    bool as_json = false;
};

int run_library(const LibraryArgs& args);
int run_export(const std::filesystem::path& project, const std::string& task, const std::filesystem::path& out_dir);

}  // namespace kf::cli
