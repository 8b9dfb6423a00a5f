#pragma once
/**
 * The generic expert: kernels written from the reference's own loop nest, for any task,
 * whether or not an op-class template (kf/templates.h) knows its computation. The host
 * reference's kf_solve is read by libclang into the loop-nest model (statements the model
 * lacks inside a loop are kept as written); each top-level loop becomes a kernel launched in
 * order on the caller's stream, its iterations spread over the device only where that is
 * checked to be legal on the nest: no two iterations touch one element of a tensor that
 * either writes (or the tensor is only added to, then atomically), no scalar declared outside
 * is assigned inside, no return or break leaves it. Instances (family generic/...):
 *
 * - threads: the perfectly nested parallel loops (up to three) collapsed into one index over
 *   the grid, consecutive threads on consecutive innermost iterations (coalesced), ITEMS
 *   iterations per thread in a grid-stride loop, 32-bit index arithmetic where it fits;
 * - warp-rows, block-rows: a warp (a block) per outer iteration; each loop along the row is
 *   spread over its threads, a loop reducing into the row's scalars (`s += e`, `s = max(s,
 *   e)`, `if (e > s) s = e`...) combines its threads' partials by shuffles (and shared memory),
 *   writes outside those loops are made by the group's first thread;
 * - host: omp, parallel for over each independent nest (omp-collapse: its perfectly
 *   nested loops collapsed).
 *
 * Every instance carries tunables (BLOCK, ITEMS, RESTRICT; CHUNK on the host) and is verified
 * against the reference like any candidate. See docs/search.md.
 */
#include <memory>
#include <string>
#include <vector>

#include "kf/experts.h"
#include "kf/task.h"
#include "kf/templates.h"

namespace kf {

struct GenericKernels {
    std::vector<TemplateKernel> kernels;
    /** Why there are none (the construct and its line); else, what was kept as written, if anything. */
    std::string reason;
    /** One line per top-level loop: how it is spread, or why it runs on one thread. */
    std::vector<std::string> nests;
};

/** The generic kernels for the task on the backend, from its host reference. */
GenericKernels generic_kernels(const Task& task, Backend backend);

/** One line for a run's log: the generic kernels written, or why none. */
std::string generic_summary(const GenericKernels& g);

/** The expert proposing the generic kernels, an untried instance of another family than the parent's first. */
std::unique_ptr<Expert> make_generic_expert();

}  // namespace kf
