#pragma once
// `kfoundry profile`: evaluate a candidate, then profile it with Nsight Compute (docs/cli.md,
// docs/profiling.md).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/evaluator.h"

namespace kf::cli {

struct ProfileArgs {
    std::string task;
    std::string candidate;
    std::string backend = "cuda";
    bool as_json = false;
    bool list_metrics = false;
    EvalOptions eval;
    ProfileOptions profile;
    std::string keep_csv;  ///< folder for ncu's raw output (<task>__<candidate>.csv)
    std::vector<std::string> tunables;
    std::string worker;
};

int run_profile(const ProfileArgs& args);
/** The readable part of a profile object: kernels, bound with evidence, stalls, advice. */
std::string render_profile(const nlohmann::json& profile);

}  // namespace kf::cli
