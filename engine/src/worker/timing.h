#pragma once
// Timing an entry point: warm-up, cache flushes, adaptive repetitions over rotated buffers.
#include <vector>

#include "case_buffers.h"
#include "evaluation.h"

namespace kf::worker {

/**
 * Times fn over rotated tensor sets: warm-up, then repetitions adapted to min_time_ms, each
 * preceded by a cache flush, each timed with device events around a device-wide sync. A
 * device fault while timing the candidate becomes a CandidateFault.
 */
TimingStats time_entry(Device& dev, CaseContext& cc, EntryFn fn, std::vector<TensorSet*>& sets,
                       const EvalSettings& st, bool candidate);

}  // namespace kf::worker
