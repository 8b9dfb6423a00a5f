#pragma once
// The integrity checks the judge decides from what it saw of the candidate's process from
// outside, rather than from its outputs (docs/sandbox.md): threads and processes it started
// (spawned_work), CPU time while it was stopped (work_between_calls), device memory it kept
// (device_memory) and vendor libraries it mapped or device modules it loaded (forbidden_loading).
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "candidate_site.h"

namespace kf::worker {

/** What the candidate's process did, as the judge saw it over the evaluation. */
struct ProcessFindings {
    RunnerActivity activity;
    DeviceMemoryUse memory;
    bool maps_read = false;
    std::set<std::string> forbidden_loaded;  ///< mapped vendor libraries the task does not allow
    std::int64_t modules_loaded = 0;  ///< device modules loaded after the candidate's library (its runner's report)
    bool libraries_allowed = false;   ///< the task allows vendor libraries, which may load modules when first used
};

/** The failure that decides the status, if any: empty `status` when every check passed. */
struct ProcessVerdict {
    std::string status, message;
};

/** Appends the four checks to `checks` and returns the worst failure among them. */
ProcessVerdict judge_process(const ProcessFindings& f, Backend backend, nlohmann::json& checks);

}  // namespace kf::worker
