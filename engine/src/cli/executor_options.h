#pragma once
// --executor local|slurm and the --slurm-* options (docs/cluster.md), shared by the commands
// that start evaluation workers.
#include <filesystem>
#include <string>

#include "kf/exec.h"

namespace CLI {
class App;
}

namespace kf::cli {

struct ExecutorArgs {
    std::string executor = "local";
    ExecutorOptions options;
    bool array = false;  ///< --slurm-array: the searches themselves run as one job array
};

/** Adds --executor and the --slurm-* options to a command. */
void add_executor_options(CLI::App* command, ExecutorArgs& args);

/**
 * Checks the parsed options and fills defaults: the Slurm spool folder goes under the project
 * (`<project>/slurm`) unless given. Returns 0, or an exit code after printing why not.
 */
int resolve_executor(ExecutorArgs& args, const std::filesystem::path& project);

}  // namespace kf::cli
