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
    /** After each call; `verify` on repetitions drawn at random (each with probability
     *  check_fraction), and on the last. */
    std::function<void(std::size_t set, bool verify)> after;
    double check_fraction = 0;
};

/**
 * Whether the median of `times` is known to within `precision` (a fraction of it): the
 * half-width of its distribution-free 95% interval, between the order statistics
 * n/2 -/+ 0.98 sqrt(n), is at most precision x median. False for precision 0.
 */
bool median_known(std::vector<double> times, double precision);

/** The fewest timed calls after which the median may be taken as known (median_known). */
constexpr int kMinCallsForPrecision = 20;

/**
 * Times the calls: warm-up, then repetitions, each preceded by prepare() and a cache flush
 * and timed as the site times (device events around a device-wide sync on CUDA, the judge's
 * clock around the runner's call on the host). At least min_reps of them; after
 * kMinCallsForPrecision they stop as soon as the median is known to within `precision`
 * (median_known), and at the latest when
 * they total min_time_ms (within min_reps..max_reps, and about ten times min_time_ms of wall
 * time with their preparation).
 */
TimingStats time_calls(Device& dev, const TimedCalls& tc, const EvalSettings& st);

}  // namespace kf::worker
