#pragma once
// `kfoundry task computation`: the computation the op-class templates are written from, as the
// manifest declares it or as the recogniser derives it from the reference; written into the
// manifest on request (docs/cli.md).
#include <string>

namespace kf::cli {

struct ComputationArgs {
    std::string task;
    bool derive = false;            ///< derive from the reference even where the manifest declares one
    std::string recogniser = "best";  ///< best, libclang or tokens
    bool as_json = false;
    bool write = false;             ///< write the derived computation into the manifest
};

int run_task_computation(const ComputationArgs& args);

}  // namespace kf::cli
