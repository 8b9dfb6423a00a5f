#pragma once
/**
 * Op-class templates: parametrised kernels instantiated for a task from the description of
 * its computation (kf/computation.h), for the host (C++ with OpenMP) and CUDA backends. Each
 * instance is a complete candidate for the task's entry point, with `@kf tunable`
 * annotations (block size, threads per row, vector width, items per thread, accumulator
 * lanes...) so that the tuner and crossover work on it. See docs/search.md.
 */
#include <string>
#include <vector>

#include "kf/computation.h"
#include "kf/task.h"

namespace kf {

struct TemplateKernel {
    std::string name;         ///< e.g. "rows-group/warp"
    std::string family;       ///< e.g. "template/rows-group"
    std::string description;  ///< what it does and what its tunables move
    std::string source;       ///< the candidate, compilable as written
};

/**
 * Every template that applies to the computation on the backend, instantiated for the task's
 * signature. Empty when none applies (e.g. a tensor type the templates do not write).
 */
std::vector<TemplateKernel> instantiate_templates(const Task& task, const Computation& c, Backend backend);

}  // namespace kf
