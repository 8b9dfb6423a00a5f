#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>

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

bool median_known(std::vector<double> v, double precision) {
    if (precision <= 0 || v.size() < 3) return false;
    std::sort(v.begin(), v.end());
    // A distribution-free 95% interval of the median: the order statistics n/2 -/+ 0.98 sqrt(n).
    const double n = static_cast<double>(v.size());
    const double half = 0.98 * std::sqrt(n);
    const auto lo = static_cast<std::size_t>(std::max(0.0, std::floor(n / 2 - half)));
    const auto hi = static_cast<std::size_t>(std::min(n - 1, std::ceil(n / 2 + half)));
    const double median = percentile(v, 0.5);
    return median > 0 && (v[hi] - v[lo]) / 2 <= precision * median;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TimingStats time_calls(Device& dev, const TimedCalls& tc, const EvalSettings& st) {
    auto set_of = [&](int i) { return static_cast<std::size_t>(i) % tc.sets; };
    const auto loop0 = std::chrono::steady_clock::now();
    double prepare_ms = 0, flush_ms = 0, call_ms = 0, after_ms = 0;
    // Fresh inputs, a flushed cache and the call; what follows it is after().
    auto call = [&](int i) {
        auto t0 = std::chrono::steady_clock::now();
        tc.prepare(set_of(i));
        prepare_ms += ms_since(t0);
        t0 = std::chrono::steady_clock::now();
        dev.flush_cache();
        flush_ms += ms_since(t0);
        t0 = std::chrono::steady_clock::now();
        CallTime t = tc.call(set_of(i));
        call_ms += ms_since(t0);
        return t;
    };
    auto after = [&](int i, bool verify) {
        const auto t0 = std::chrono::steady_clock::now();
        tc.after(set_of(i), verify);
        after_ms += ms_since(t0);
    };
    for (int w = 0; w < st.warmup; ++w) {
        call(w);
        after(w, false);
    }
    auto f0 = std::chrono::steady_clock::now();
    tc.prepare(0);
    dev.flush_cache();
    dev.synchronize();
    double prep_ms = ms_since(f0);
    CallTime est = tc.call(0);
    tc.after(0, false);
    double per_call = std::max(est.event_ms, 1e-3);
    int reps = static_cast<int>(std::ceil(st.min_time_ms / per_call));
    // Bound the whole loop (preparation and flushes included) to about ten times the requested time.
    double per_rep_wall = std::max(est.wall_ms, per_call) + prep_ms;
    int wall_cap = static_cast<int>(std::floor(10.0 * std::max(st.min_time_ms, 1.0) / per_rep_wall));
    reps = std::clamp(std::min(reps, std::max(wall_cap, st.min_reps)), st.min_reps, st.max_reps);

    // Which repetitions are checked is drawn call by call, after the library has been loaded
    // and called: it cannot know in advance. The last is checked too; since the loop stops
    // once the median is known well enough, which call is the last depends on the times.
    std::mt19937_64 rng(std::random_device{}());
    std::bernoulli_distribution checked(std::clamp(tc.check_fraction, 0.0, 1.0));

    std::vector<double> ev, wall, cpu;
    ev.reserve(static_cast<std::size_t>(reps));
    wall.reserve(static_cast<std::size_t>(reps));
    for (int r = 0; r < reps; ++r) {
        CallTime t = call(r);
        ev.push_back(t.event_ms);
        wall.push_back(t.wall_ms);
        if (t.cpu_ms >= 0) cpu.push_back(t.cpu_ms);
        const bool last = r + 1 == reps || (r + 1 >= std::max(st.min_reps, kMinCallsForPrecision) && median_known(ev, st.precision));
        const bool verify = tc.check_fraction > 0 && (last || checked(rng));
        after(r, verify);
        if (last) break;
    }
    TimingStats s;
    s.reps = static_cast<int>(ev.size());
    s.warmup = st.warmup;
    s.median_ms = percentile(ev, 0.5);
    s.min_ms = *std::min_element(ev.begin(), ev.end());
    s.max_ms = *std::max_element(ev.begin(), ev.end());
    double sum = 0;
    for (double x : ev) sum += x;
    s.mean_ms = sum / static_cast<double>(ev.size());
    s.spread = s.median_ms > 0 ? (percentile(ev, 0.9) - percentile(ev, 0.1)) / s.median_ms : 0;
    s.wall_median_ms = percentile(wall, 0.5);
    if (!cpu.empty() && cpu.size() == ev.size()) s.cpu_median_ms = percentile(cpu, 0.5);
    std::vector<double> overhead;
    for (std::size_t i = 0; i < ev.size(); ++i) overhead.push_back(std::max(0.0, wall[i] - ev[i]));
    s.overhead_p90_ms = percentile(overhead, 0.9);
    s.loop_ms = ms_since(loop0);
    s.prepare_ms = prepare_ms;
    s.flush_ms = flush_ms;
    s.call_ms = call_ms;
    s.after_ms = after_ms;
    return s;
}

}  // namespace kf::worker
