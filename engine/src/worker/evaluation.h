#pragma once
// The worker's evaluation of one candidate against the reference on one device:
// correctness trials on fresh inputs, integrity checks and side-by-side timing.
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "device.h"
#include "kf/task.h"
#include "kf/worker_protocol.h"

#include <memory>

namespace kf::worker {

/** Timing statistics of one entry point on one case. */
struct TimingStats {
    double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, spread = 0, wall_median_ms = 0;
    double overhead_p90_ms = 0;  ///< 90th percentile of wall minus reported time over the calls
    int reps = 0, warmup = 0;
    double cpu_median_ms = -1;  ///< CPU time of the runner's process per call, median (-1 unknown)
    /** Where the timing loop's wall time went (ms, warm-ups included): fresh inputs and poison,
     *  cache flushes, the calls as the site makes them (round trips and the site's own checks
     *  around them included), and what follows each call (counts, canaries, checked outputs). */
    double loop_ms = 0, prepare_ms = 0, flush_ms = 0, call_ms = 0, after_ms = 0;
};

/** Reference timings kept for the worker's lifetime, keyed by reference library and case. */
using ReferenceTimes = std::map<std::string, TimingStats>;

class CandidateSite;

struct EvalInputs {
    const Task* task = nullptr;
    Backend backend = Backend::Host;
    CandidateSite* candidate = nullptr;  ///< where the candidate runs
    EntryFn reference = nullptr;         ///< the reference in this process: the expected outputs
    /** Where the reference is timed (a process of its own on the host), made when needed. */
    std::function<std::unique_ptr<CandidateSite>()> reference_timer;
    std::string reference_key;
    Peaks peaks;
    EvalSettings settings;
};

using ProgressFn = std::function<void(const nlohmann::json&)>;

/**
 * Runs the evaluation and returns the worker's part of the diagnosis record (status, stage,
 * message, correctness, timing, roofline, integrity, kernel_launches) plus "fatal": true
 * when the device is left unusable and the worker must exit.
 */
nlohmann::json evaluate_candidate(Device& dev, const EvalInputs& in, ReferenceTimes& ref_times,
                                  const ProgressFn& progress);

}  // namespace kf::worker
