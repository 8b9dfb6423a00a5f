#pragma once
// `kfoundry kernelbench eval|run|report`: KernelBench problems through the Python worker,
// and KernelBench's metrics (docs/kernelbench.md).
#include <cstdint>
#include <filesystem>
#include <string>

#include "executor_options.h"

namespace CLI {
class App;
}

namespace kf::cli {

/**
 * `kernelbench run --llm-config`: the full search on each problem (islands, router, LLM
 * experts, library) and its per-problem and per-level budgets (docs/kernelbench.md).
 */
struct KernelBenchSearchArgs {
    std::filesystem::path llm_config;  ///< empty: given candidates and the tuner only
    int islands = 4;
    int population = 12;
    std::int64_t problem_tokens = 0;  ///< LLM tokens per problem; 0: no limit
    double problem_cost = 0;
    double problem_time_s = 0;
    int level_evaluations = 0;  ///< over the selected problems; 0: no limit
    std::int64_t level_tokens = 0;
    double level_cost = 0;
    double level_time_s = 0;
    bool no_library = false;
};

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
    KernelBenchSearchArgs search;
    ExecutorArgs executor;  ///< run: where the Python worker runs (--executor slurm)
};

/** Adds the `kernelbench` command and its three subcommands, parsed into `args`. */
CLI::App* add_kernelbench_command(CLI::App& app, KernelBenchArgs& args);
int run_kernelbench(KernelBenchArgs& args);

}  // namespace kf::cli
