// The bound classifier, the remedies and the `profile` object of the diagnosis
// (docs/profiling.md, docs/diagnosis.md).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kf/profile.h"

namespace kf {

using nlohmann::json;

namespace {

std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", v);
    return buf;
}

std::string num(double v, int precision = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    return buf;
}

bool known(double v) { return !std::isnan(v); }
double or0(double v) { return std::isnan(v) ? 0.0 : v; }

/** The largest stall that is not "selected" (a warp issuing is not a stall). */
const StallShare* top_stall(const KernelProfile& k) {
    for (const auto& s : k.stalls)
        if (s.reason != "selected") return &s;
    return nullptr;
}

double share_of(const KernelProfile& k, const std::string& reason) {
    for (const auto& s : k.stalls)
        if (s.reason == reason) return s.share;
    return 0;
}

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

std::string limiter_text(const std::string& l) {
    if (l == "shared_mem") return "shared memory";
    return l;
}

}  // namespace

BoundVerdict classify_bound(const ProfileData& p, const BoundThresholds& t) {
    BoundVerdict v;
    v.source = "profile";
    if (p.kernels.empty()) {
        v.source.clear();
        return v;
    }
    const ProfileSummary& s = p.summary;
    const KernelProfile& dom = p.kernels.front();
    double dram = s.dram_pct, mem = s.memory_pct, sm = s.sm_pct;
    double memory_side = std::max(or0(dram), or0(mem));
    if (memory_side >= t.saturated_pct || or0(sm) >= t.saturated_pct) {
        if (memory_side >= or0(sm)) {
            v.bound = "memory";
            if (known(dram)) v.evidence.push_back("dram " + pct(dram) + " of peak");
            if (known(mem)) v.evidence.push_back("memory throughput " + pct(mem) + " of peak");
            if (known(sm)) v.evidence.push_back("sm throughput " + pct(sm) + " of peak");
        } else {
            v.bound = "compute";
            v.evidence.push_back("sm throughput " + pct(sm) + " of peak");
            if (known(mem)) v.evidence.push_back("memory throughput " + pct(mem) + " of peak");
            if (const StallShare* ts = top_stall(dom))
                v.evidence.push_back("top stall " + ts->reason + " (" + pct(100 * ts->share) + " of stalls)");
        }
        return v;
    }
    v.evidence.push_back("sm throughput " + (known(sm) ? pct(sm) : std::string("n/a")) + ", memory throughput " +
                         pct(memory_side) + " of peak: neither saturated");
    double mean_launch_us = s.launches > 0 ? s.total_duration_us / s.launches : 0;
    if (s.launches >= t.launch_overhead_launches && s.total_duration_us > 0 && mean_launch_us < t.launch_overhead_us) {
        v.bound = "launch_overhead";
        v.evidence.push_back(std::to_string(s.launches) + " launches per call averaging " + num(mean_launch_us) + " us");
        return v;
    }
    double ach = dom.achieved_occupancy_pct, theo = dom.theoretical_occupancy_pct;
    std::string limiter = dom.occupancy_limiter();
    if (known(ach) && known(theo) && theo > 0 && ach < t.occupancy_gap * theo) {
        v.bound = "occupancy";
        v.evidence.push_back("achieved occupancy " + pct(ach) + " against theoretical " + pct(theo));
        if (theo <= t.low_theoretical_pct && !limiter.empty())
            v.evidence.push_back("theoretical occupancy limited by " + limiter_text(limiter));
        return v;
    }
    if (known(theo) && theo <= t.low_theoretical_pct && (limiter == "registers" || limiter == "shared_mem")) {
        v.bound = "occupancy";
        std::string what = "theoretical occupancy " + pct(theo) + " limited by " + limiter_text(limiter);
        if (limiter == "registers" && known(dom.registers_per_thread))
            what += " (" + num(dom.registers_per_thread) + " per thread)";
        if (limiter == "shared_mem")
            what += " (" + num(or0(dom.shared_static_bytes) + or0(dom.shared_dynamic_bytes)) + " B per block)";
        v.evidence.push_back(what);
        if (known(ach)) v.evidence.push_back("achieved occupancy " + pct(ach));
        return v;
    }
    v.bound = "latency";
    if (known(ach)) v.evidence.push_back("achieved occupancy " + pct(ach) + (known(theo) ? " of theoretical " + pct(theo) : ""));
    if (const StallShare* ts = top_stall(dom))
        v.evidence.push_back("top stall " + ts->reason + " (" + pct(100 * ts->share) + " of stalls)");
    return v;
}

BoundVerdict classify_bound(const Roofline& r, std::int64_t kernel_launches, double median_ms, const BoundThresholds& t) {
    BoundVerdict v;
    v.source = "roofline";
    double bw = 100 * r.bandwidth_fraction, cf = 100 * r.compute_fraction;
    if (r.peak_gbps > 0)
        v.evidence.push_back("achieved " + num(r.achieved_gbps, 4) + " GB/s = " + pct(bw) + " of measured " +
                             num(r.peak_gbps, 4) + " GB/s");
    if (r.peak_gflops > 0)
        v.evidence.push_back("achieved " + num(r.achieved_gflops, 4) + " GFLOP/s = " + pct(cf) + " of measured " +
                             num(r.peak_gflops, 4) + " GFLOP/s");
    if (median_ms > 0) v.evidence.push_back("median " + num(median_ms, 4) + " ms");
    double per_launch_us = kernel_launches > 0 ? 1000.0 * median_ms / static_cast<double>(kernel_launches) : 0;
    if (bw < t.saturated_pct && cf < t.saturated_pct && kernel_launches >= t.launch_overhead_launches && median_ms > 0 &&
        per_launch_us < t.launch_overhead_us) {
        v.bound = "launch_overhead";
        v.evidence.push_back(std::to_string(kernel_launches) + " launches per call, " + num(per_launch_us) +
                             " us per launch on average");
        return v;
    }
    v.bound = r.bound.empty() ? "latency" : r.bound;
    return v;
}

std::vector<Remedy> advise_from_profile(const ProfileData& p, const BoundVerdict& v) {
    // Two lists: remedies from the stalls and from the bound class. For a latency-bound
    // kernel the stalls name the cause; otherwise the bound class comes first.
    std::vector<Remedy> stall_list, bound_list;
    std::vector<Remedy>* target = &stall_list;
    auto add = [&](const std::string& remedy, const std::string& why) {
        for (const auto& r : *target)
            if (r.remedy == remedy) return;
        target->push_back({remedy, why});
    };
    if (p.kernels.empty()) return {};
    const KernelProfile& dom = p.kernels.front();
    const ProfileSummary& s = p.summary;
    double dram = or0(s.dram_pct), sm = or0(s.sm_pct);

    // Stall-driven remedies first: they name the most specific cause.
    double ls = share_of(dom, "long_scoreboard"), lg = share_of(dom, "lg_throttle"), bar = share_of(dom, "barrier");
    double mio = share_of(dom, "mio_throttle") + share_of(dom, "short_scoreboard");
    double math = share_of(dom, "math_pipe_throttle"), wait = share_of(dom, "wait"), noinst = share_of(dom, "no_instruction");
    if (ls >= 0.25 && dram < 60)
        add("improve_memory_access", "long-scoreboard stalls " + pct(100 * ls) + " with dram at " + pct(dram) +
                                         ": global loads wait; coalesce, use vector loads, cache reused data in shared memory");
    if (lg >= 0.2)
        add("improve_memory_access", "lg-throttle stalls " + pct(100 * lg) +
                                         ": too many global memory instructions; use wider (vector) loads and stores");
    if (bar >= 0.15)
        add("reduce_barriers", "barrier stalls " + pct(100 * bar) +
                                   ": fewer __syncthreads, warp-level reductions with shuffles, more work per block");
    if (mio >= 0.2)
        add("improve_shared_memory_access", "mio-throttle/short-scoreboard stalls " + pct(100 * mio) +
                                                ": shared-memory or special-function pressure; avoid bank conflicts, use shuffles");
    if (math >= 0.15 && sm >= 60) {
        add("use_tensor_cores", "math-pipe-throttle stalls " + pct(100 * math) + " with sm at " + pct(sm) +
                                    ": the arithmetic pipes are full; tensor cores where the task allows them");
        add("reduce_instructions", "math-pipe-throttle stalls " + pct(100 * math) + ": cheaper math (fewer, fused operations)");
    }
    if (wait >= 0.25)
        add("increase_ilp", "wait stalls " + pct(100 * wait) +
                                ": fixed-latency dependencies; more independent work per thread (unrolling)");
    if (noinst >= 0.2)
        add("reduce_instructions", "no-instruction stalls " + pct(100 * noinst) + ": instruction-cache misses; smaller unrolled code");

    target = &bound_list;
    const std::string limiter = dom.occupancy_limiter();
    if (v.bound == "memory") {
        if (dram >= 80) {
            add("fuse", "dram at " + pct(dram) + " of peak: only fewer bytes help; fuse with neighbouring work");
            add("improve_memory_access", "dram at " + pct(dram) + ": remove redundant reads and writes");
        } else {
            add("improve_memory_access", "memory-bound at " + pct(std::max(dram, or0(s.memory_pct))) +
                                             ": coalescing, vector loads, caching");
            add("fuse", "memory-bound: fewer bytes through fusion");
        }
    } else if (v.bound == "compute") {
        add("reduce_instructions", "sm at " + pct(sm) + " of peak: fewer or cheaper instructions");
        add("use_tensor_cores", "compute-bound: tensor cores where the task allows them");
    } else if (v.bound == "occupancy") {
        const bool limited = or0(dom.theoretical_occupancy_pct) < 100;
        if (limited && limiter == "registers")
            add("reduce_registers", "occupancy limited by registers (" + num(or0(dom.registers_per_thread)) +
                                        " per thread): __launch_bounds__, fewer live values");
        if (limited && limiter == "shared_mem")
            add("reduce_shared_memory", "occupancy limited by shared memory (" +
                                            num(or0(dom.shared_static_bytes) + or0(dom.shared_dynamic_bytes)) +
                                            " B per block): smaller tiles");
        double ach = or0(dom.achieved_occupancy_pct), theo = or0(dom.theoretical_occupancy_pct);
        if (theo > 0 && ach < 0.5 * theo)
            add("increase_parallelism", "achieved occupancy " + pct(ach) + " against theoretical " + pct(theo) +
                                            ": too few blocks or uneven work; more, smaller blocks");
        add("tune_launch", "occupancy-limited: block size and launch bounds");
    } else if (v.bound == "launch_overhead") {
        add("fuse", std::to_string(s.launches) + " short launches per call: fuse kernels or use one persistent kernel");
    } else if (v.bound == "latency") {
        add("increase_parallelism", "neither memory nor compute is saturated: more parallel work in flight");
        add("tune_launch", "latency-bound: block size, grid size and work per thread");
    }
    const bool stalls_first = v.bound == "latency";
    std::vector<Remedy> out = stalls_first ? stall_list : bound_list;
    for (const auto& r : stalls_first ? bound_list : stall_list)
        if (std::none_of(out.begin(), out.end(), [&](const Remedy& x) { return x.remedy == r.remedy; })) out.push_back(r);
    return out;
}

json profile_to_json(const ProfileData& p, const BoundVerdict& v, const std::vector<Remedy>& advice) {
    json kernels = json::array();
    const double total = p.summary.total_duration_us;
    for (const auto& k : p.kernels) {
        json stalls = json::array();
        for (const auto& s : k.stalls) stalls.push_back({{"reason", s.reason}, {"ratio", s.ratio}, {"share", s.share}});
        json limits = json::object();
        for (const auto& [name, val] : k.occupancy_limits) limits[name] = number_or_null(val);
        // The metrics asked for (ncu adds many device and launch attributes of its own).
        json metrics = json::object();
        for (const auto& name : profile_metrics())
            if (auto it = k.metrics.find(name); it != k.metrics.end()) metrics[name] = number_or_null(it->second);
        const StallShare* ts = top_stall(k);
        kernels.push_back({{"name", k.name},
                           {"grid", k.grid},
                           {"block", k.block},
                           {"launches", k.launches},
                           {"duration_us", number_or_null(k.duration_us)},
                           {"total_us", k.total_us},
                           {"share", total > 0 ? k.total_us / total : 0.0},
                           {"sm_throughput_pct", number_or_null(k.sm_pct)},
                           {"memory_throughput_pct", number_or_null(k.memory_pct)},
                           {"dram_throughput_pct", number_or_null(k.dram_pct)},
                           {"achieved_occupancy_pct", number_or_null(k.achieved_occupancy_pct)},
                           {"theoretical_occupancy_pct", number_or_null(k.theoretical_occupancy_pct)},
                           {"registers_per_thread", number_or_null(k.registers_per_thread)},
                           {"shared_static_bytes", number_or_null(k.shared_static_bytes)},
                           {"shared_dynamic_bytes", number_or_null(k.shared_dynamic_bytes)},
                           {"l1_hit_pct", number_or_null(k.l1_hit_pct)},
                           {"l2_hit_pct", number_or_null(k.l2_hit_pct)},
                           {"occupancy_limits", limits},
                           {"occupancy_limiter", k.occupancy_limiter()},
                           {"top_stall", ts ? json(ts->reason) : json(nullptr)},
                           {"stalls", stalls},
                           {"metrics", metrics}});
    }
    json adv = json::array();
    for (const auto& r : advice) adv.push_back({{"remedy", r.remedy}, {"why", r.why}});
    const ProfileSummary& s = p.summary;
    return {{"available", true},
            {"reason", ""},
            {"tool", "ncu"},
            {"runs", p.runs},
            {"kernels", kernels},
            {"summary",
             {{"kernels", s.kernels},
              {"launches", s.launches},
              {"total_duration_us", s.total_duration_us},
              {"dominant", s.dominant},
              {"dominant_share", s.dominant_share},
              {"sm_throughput_pct", number_or_null(s.sm_pct)},
              {"memory_throughput_pct", number_or_null(s.memory_pct)},
              {"dram_throughput_pct", number_or_null(s.dram_pct)}}},
            {"bound", v.bound},
            {"bound_source", v.source},
            {"evidence", v.evidence},
            {"advice", adv}};
}

json profile_unavailable(const std::string& reason, const std::string& code) {
    return {{"available", false}, {"reason", reason}, {"code", code}};
}

void apply_profile(Diagnosis& d, json profile) {
    if (!profile.is_object()) profile = profile_unavailable("no profile");
    const bool available = profile.value("available", false);
    if (available) {
        std::string bound = profile.value("bound", "");
        profile["roofline_bound"] = d.roofline ? json(d.roofline->bound) : json(nullptr);
        if (d.roofline && !bound.empty()) d.roofline->bound = bound;
        std::vector<std::string> advice;
        if (profile.contains("advice"))
            for (const auto& a : profile["advice"]) {
                std::string r = a.value("remedy", "");
                if (!r.empty() && std::find(advice.begin(), advice.end(), r) == advice.end()) advice.push_back(r);
            }
        // Spills are read at compile time; the profile does not see them.
        if (std::find(d.advice.begin(), d.advice.end(), "reduce_registers") != d.advice.end() &&
            std::find(advice.begin(), advice.end(), "reduce_registers") == advice.end())
            advice.push_back("reduce_registers");
        if (d.ok() && !advice.empty()) d.advice = advice;
    } else if (d.roofline && d.timing) {
        BoundVerdict v = classify_bound(*d.roofline, d.kernel_launches, d.timing->median_ms);
        profile["bound"] = v.bound;
        profile["bound_source"] = v.source;
        profile["evidence"] = v.evidence;
    }
    d.profile = std::move(profile);
}

}  // namespace kf
