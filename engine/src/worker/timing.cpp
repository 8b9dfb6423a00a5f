#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kf::worker {

namespace {

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    double pos = q * static_cast<double>(v.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

TimingStats time_entry(Device& dev, CaseContext& cc, EntryFn fn, std::vector<TensorSet*>& sets,
                       const EvalSettings& st, bool candidate) {
    auto call = [&](std::size_t i) { return cc.call(fn, *sets[i % sets.size()]); };
    auto guarded = [&](const std::function<void()>& f) {
        if (!candidate) return dev.timed_call(f);
        try {
            return dev.timed_call(f);
        } catch (const DeviceFault& e) {
            throw CandidateFault{e.what(), e.sticky()};
        }
    };
    for (int w = 0; w < st.warmup; ++w) {
        dev.flush_cache();
        guarded(call(static_cast<std::size_t>(w)));
    }
    auto f0 = std::chrono::steady_clock::now();
    dev.flush_cache();
    dev.synchronize();
    double flush_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - f0).count();
    CallTime est = guarded(call(0));
    double per_call = std::max(est.event_ms, 1e-3);
    int reps = static_cast<int>(std::ceil(st.min_time_ms / per_call));
    // Bound the whole loop (flushes included) to about ten times the requested time.
    double per_rep_wall = std::max(est.wall_ms, per_call) + flush_ms;
    int wall_cap = static_cast<int>(std::floor(10.0 * std::max(st.min_time_ms, 1.0) / per_rep_wall));
    reps = std::clamp(std::min(reps, std::max(wall_cap, st.min_reps)), st.min_reps, st.max_reps);

    std::vector<double> ev, wall;
    ev.reserve(static_cast<std::size_t>(reps));
    wall.reserve(static_cast<std::size_t>(reps));
    for (int r = 0; r < reps; ++r) {
        dev.flush_cache();
        CallTime t = guarded(call(static_cast<std::size_t>(r)));
        ev.push_back(t.event_ms);
        wall.push_back(t.wall_ms);
    }
    TimingStats s;
    s.reps = reps;
    s.warmup = st.warmup;
    s.median_ms = percentile(ev, 0.5);
    s.min_ms = *std::min_element(ev.begin(), ev.end());
    s.max_ms = *std::max_element(ev.begin(), ev.end());
    double sum = 0;
    for (double x : ev) sum += x;
    s.mean_ms = sum / static_cast<double>(ev.size());
    s.spread = s.median_ms > 0 ? (percentile(ev, 0.9) - percentile(ev, 0.1)) / s.median_ms : 0;
    s.wall_median_ms = percentile(wall, 0.5);
    return s;
}

}  // namespace kf::worker
