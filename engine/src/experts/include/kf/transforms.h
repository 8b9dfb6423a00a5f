#pragma once
/**
 * Named rewrites of a parent's CUDA source that need no template: each either returns the
 * rewritten source or refuses with the reason, leaving the source alone. The transform
 * expert applies the first that applies and was not tried. See docs/search.md.
 */
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kf/experts.h"

namespace kf {

struct TransformResult {
    std::optional<std::string> source;  ///< the rewritten source; empty when refused
    std::string refusal;                ///< why not
};

struct CodeTransform {
    std::string name;  ///< block-size-tunable, launch-bounds, grid-stride, warp-rows, vector-loads, smem-tile
    std::string description;
    std::function<TransformResult(const std::string&)> apply;
};

/**
 * - block-size-tunable: a literal block size in the launches (`<<<grid, 256, ...>>>`, or a
 *   `const int block = 256;` they use) becomes `#define KF_BLOCK 256 // @kf tunable ...`;
 * - launch-bounds: kernels launched with a tunable block size get `__launch_bounds__(it)`;
 * - grid-stride: a one-element-per-thread kernel (`int i = blockIdx.x * blockDim.x +
 *   threadIdx.x; if (i < n) ...`) loops over a grid stride, and the launch covers the work
 *   with KF_ITEMS elements per thread (tunable);
 * - warp-rows: a thread-per-row kernel (`r = blockIdx.x * blockDim.x + threadIdx.x; if (r >=
 *   rows) return;`) whose loops over the row are reductions (`acc += e` from 0, `acc =
 *   fmaxf(acc, e)`, fminf, max, min) or stores, each loop body const definitions then one
 *   statement, gets a warp per row: lanes take every 32nd column, each reduction ends in a
 *   butterfly of warp shuffles, and the launch has 32 threads per row (a block size that is
 *   a multiple of 32). Nested loops, a sum that starts elsewhere than 0 and other statements
 *   are refused;
 * - vector-loads: a one-element-per-thread kernel over float tensors (`if (i < n) stmt` or
 *   `if (i >= n) return; body`), reading and writing its tensors at [i] only and without
 *   control flow, takes 4 consecutive elements per thread: float4 loads and stores where the
 *   4 are inside and the pointers 16-byte aligned, scalar accesses otherwise; the grid
 *   (`(n + block - 1) / block`) shrinks 4 times;
 * - smem-tile: a one-element-per-thread kernel whose body reads const inputs at constant offsets
 *   of the index (`x[i - 1]`, `x[i + 2]`, at most 32 away) stages the block's stretch of each
 *   with its halo in dynamic shared memory, loaded right before the guard (only plain
 *   declarations may precede it, so every thread reaches the barrier); a read comes from the
 *   tile where its element is inside [0, n), from global memory otherwise, and the launches
 *   pass the tiles' bytes. Inputs written too (in place), an existing shared-memory size and
 *   offsets computed at run time are refused.
 */
const std::vector<CodeTransform>& code_transforms();

/** The expert applying code_transforms() to a CUDA parent. */
std::unique_ptr<Expert> make_transform_expert();

}  // namespace kf
