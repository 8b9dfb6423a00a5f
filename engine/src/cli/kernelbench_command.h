#pragma once
// `kfoundry kernelbench eval|run|report`: KernelBench problems through the Python worker,
// and KernelBench's metrics (docs/kernelbench.md).
#include <cstdint>
#include <filesystem>
#include <string>

namespace CLI {
class App;
}

namespace kf::cli {

struct KernelBenchArgs {
    std::string action;  ///< eval, run, report
    std::filesystem::path kb;
    int level = 1;
    int problem = 0;
    std::string problems;  ///< "1-20,25"; empty: the whole level
    std::filesystem::path candidate;
    std::filesystem::path candidates_dir;
    std::filesystem::path project;
    int budget = 0;  ///< evaluations per problem; 0: each candidate once
    int jobs = 0;    ///< parallel compiles; 0: the number of cores
    int trials = 5;
    std::string tolerance = "current";  ///< current, v0 or strict (kb::kTolerancePolicies)
    int reps = 100;
    std::uint64_t seed = 42;
    double timeout_s = 900;
    bool no_compile_baseline = false;
    bool force = false;
    bool as_json = false;
    std::filesystem::path markdown;
    std::string python = "python3";
    std::filesystem::path worker_script;
    std::filesystem::path worker_log;
    std::string device = "0";
};

/** Adds the `kernelbench` command and its three subcommands, parsed into `args`. */
CLI::App* add_kernelbench_command(CLI::App& app, KernelBenchArgs& args);
int run_kernelbench(KernelBenchArgs& args);

}  // namespace kf::cli
