#pragma once
// `kfoundry evolve`, `kfoundry runs` and `kfoundry best`: search runs kept in a project.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "executor_options.h"
#include "kf/evolution.h"

namespace kf::cli {

struct EvolveArgs {
    std::vector<std::string> tasks;
    std::filesystem::path project;
    std::string backend = "cuda";
    EvolveOptions options;
    std::string worker;
    std::string llm_config;  ///< LLM experts configuration (docs/llm.md); empty: built-in experts only
    bool as_json = false;    ///< progress on stderr, the runs' summaries (kf::RunSummary) as JSON on stdout
    double min_gain = 1.02;  ///< speedup over the reference that counts as an improvement
    ExecutorArgs executor;   ///< where the worker runs (docs/cluster.md)
    std::vector<int> devices;  ///< devices to spread evaluations over, one worker each; empty: device 0
};

/** `evolve` ran, found correct candidates, but none beat the reference by min_gain. */
inline constexpr int kExitNoImprovement = 6;

int run_evolve(const EvolveArgs& args);
/** The best correct candidate over all runs of a project (of one task when given). */
std::optional<std::pair<CandidateRecord, EvaluationRecord>> best_in_project(ProjectStore& store, const std::string& task);
int list_runs(const std::filesystem::path& project, bool as_json);
int show_best(const std::filesystem::path& project, const std::string& task, bool as_json);

}  // namespace kf::cli
