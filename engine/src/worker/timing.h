#pragma once
// Timing a library's calls: warm-up, cache flushes, adaptive repetitions over rotated tensor
// sets, each prepared afresh (new inputs, poisoned outputs) and checked where asked.
#include <functional>
#include <vector>

#include "candidate_site.h"
#include "evaluation.h"

namespace kf::worker {

/** What is done around each timed call; only `call` is inside the timed region. */
struct TimedCalls {
    std::size_t sets = 1;
    /** Before each call (warm-ups included): fresh inputs and poisoned outputs for `set`. */
    std::function<void(std::size_t set)> prepare;
    std::function<CallTime(std::size_t set)> call;
    /** After each call; `verify` on a few repetitions chosen at random, and on the last. */
    std::function<void(std::size_t set, bool verify)> after;
    int verified_reps = 0;
};

/**
 * Times the calls: warm-up, then repetitions adapted to min_time_ms, each preceded by
 * prepare() and a cache flush and timed as the site times (device events around a
 * device-wide sync on CUDA, the judge's clock around the runner's call on the host).
 */
TimingStats time_calls(Device& dev, const TimedCalls& tc, const EvalSettings& st);

}  // namespace kf::worker
