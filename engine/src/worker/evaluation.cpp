// Correctness, integrity and timing of one candidate (docs/worker-protocol.md,
// docs/diagnosis.md). Written once against the Device interface for every backend.
#include "evaluation.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

#include "kf/diagnosis.h"
#include "rng.h"

namespace kf::worker {

using nlohmann::json;

EvalSettings EvalSettings::from_json(const json& j) {
    EvalSettings s;
    s.trials = std::clamp(j.value("trials", s.trials), 1, 100);
    s.time = j.value("time", s.time);
    s.warmup = std::clamp(j.value("warmup", s.warmup), 0, 1000);
    s.min_time_ms = std::clamp(j.value("min_time_ms", s.min_time_ms), 0.0, 60000.0);
    s.min_reps = std::clamp(j.value("min_reps", s.min_reps), 1, 100000);
    s.max_reps = std::clamp(j.value("max_reps", s.max_reps), s.min_reps, 1000000);
    s.rotate_buffers = std::clamp(j.value("rotate_buffers", s.rotate_buffers), 1, 16);
    s.seed = j.value("seed", std::uint64_t{0});
    return s;
}

namespace {

constexpr std::uint8_t kPoison[2] = {0xFF, 0x7F};  // NaN / huge for floats; -1 / large for ints

/** Thrown when the candidate itself faults; carries where. */
struct CandidateFault {
    std::string message;
    bool sticky;
};

/** One set of tensors (inputs and outputs) for one case, in manifest order. */
struct TensorSet {
    std::vector<Buffer> buffers;
    std::vector<void*> ptrs;
};

class CaseContext {
public:
    CaseContext(Device& dev, const Task& task, const TaskCase& c) : dev_(dev), task_(task), case_(c) {
        for (const auto& name : task.size_names) sizes_.push_back(static_cast<long long>(c.sizes.at(name)));
        for (const auto& p : task.params) params_.push_back(task.param_value(p, c));
        for (const auto& t : task.tensors) {
            counts_.push_back(task.elements_of(t, c));
            bytes_.push_back(static_cast<std::size_t>(counts_.back()) * size_of(t.dtype));
        }
    }
    CaseContext(const CaseContext&) = delete;
    CaseContext& operator=(const CaseContext&) = delete;
    ~CaseContext() {
        for (auto& s : sets_)
            for (auto& b : s.buffers)
                if (b.ptr) dev_.release(b);
    }

    std::size_t set_bytes() const {
        std::size_t total = 0;
        for (auto b : bytes_) total += b;
        return total;
    }

    TensorSet& new_set() {
        sets_.emplace_back();
        TensorSet& s = sets_.back();
        for (std::size_t i = 0; i < task_.tensors.size(); ++i) {
            s.buffers.push_back(dev_.alloc(bytes_[i]));
            s.ptrs.push_back(s.buffers.back().ptr);
        }
        return s;
    }

    void fill_inputs(TensorSet& s, std::uint64_t seed) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i) {
            const auto& t = task_.tensors[i];
            if (t.role == TensorRole::Input)
                dev_.fill_random(s.buffers[i], t.dtype, counts_[i], t.init, splitmix64(seed + i));
        }
    }

    void poison_outputs(TensorSet& s, std::uint8_t byte) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            if (task_.tensors[i].role == TensorRole::Output) dev_.fill_bytes(s.buffers[i], 0, bytes_[i], byte);
    }

    /** Copies the inputs of `from` into `to` (the reference and candidate see identical inputs). */
    void copy_inputs(TensorSet& to, const TensorSet& from) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            if (task_.tensors[i].role == TensorRole::Input) dev_.copy(to.buffers[i], from.buffers[i], bytes_[i]);
    }

    std::vector<std::uint64_t> input_checksums(TensorSet& s) {
        std::vector<std::uint64_t> out;
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            out.push_back(task_.tensors[i].role == TensorRole::Input ? dev_.checksum(s.buffers[i]) : 0);
        return out;
    }

    /** The first tensor whose canary was overwritten, or empty. */
    std::string overwritten_canary(TensorSet& s) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            if (!dev_.bytes_equal(s.buffers[i], bytes_[i], kCanaryBytes, kCanaryByte)) return task_.tensors[i].name;
        return {};
    }

    std::function<void()> call(EntryFn fn, TensorSet& s) {
        void* stream = dev_.stream();
        return [this, fn, &s, stream] { fn(s.ptrs.data(), sizes_.data(), params_.data(), stream); };
    }

    const std::vector<std::int64_t>& counts() const { return counts_; }
    const std::vector<std::size_t>& bytes() const { return bytes_; }
    const TaskCase& task_case() const { return case_; }

private:
    Device& dev_;
    const Task& task_;
    const TaskCase& case_;
    std::vector<long long> sizes_;
    std::vector<double> params_;
    std::vector<std::int64_t> counts_;
    std::vector<std::size_t> bytes_;
    std::deque<TensorSet> sets_;
};

/** Runs fn (a candidate call) and synchronises; a device fault becomes a CandidateFault. */
void run_candidate(Device& dev, const std::function<void()>& fn) {
    try {
        fn();
        dev.synchronize();
    } catch (const DeviceFault& f) {
        throw CandidateFault{f.what(), f.sticky()};
    }
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    double pos = q * static_cast<double>(v.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

/**
 * Times fn over rotated tensor sets: warm-up, then repetitions adapted to min_time_ms, each
 * preceded by a cache flush, each timed with device events around a device-wide sync.
 */
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

void add_check(json& checks, const std::string& name, const std::string& outcome, const std::string& detail) {
    checks.push_back({{"name", name}, {"outcome", outcome}, {"detail", detail}});
}

std::string fmt_double(double v, int precision = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    return buf;
}

}  // namespace

json evaluate_candidate(Device& dev, const EvalInputs& in, ReferenceTimes& ref_times, const ProgressFn& progress) {
    const Task& task = *in.task;
    const EvalSettings& st = in.settings;
    json result = {{"status", "ok"}, {"stage", "correctness"}, {"message", ""}, {"fatal", false}};
    json checks = json::array();
    std::uint64_t base_seed = st.seed ? st.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();

    Correctness corr;
    corr.trials = st.trials;
    corr.passed = true;
    LaunchReport launches;
    bool launches_measured = false;
    std::string modified_input, oob_tensor;
    bool primary_passed = false, validation_failed = false;
    auto cases = task.cases_for(in.backend);
    auto report = [&](const json& p) {
        if (progress) progress(p);
    };

    try {
        for (std::size_t ci = 0; ci < cases.size(); ++ci) {
            const TaskCase& c = *cases[ci];
            CaseContext cc(dev, task, c);
            TensorSet& ref = cc.new_set();
            TensorSet& cand = cc.new_set();
            CaseCorrectness cr;
            cr.name = c.name;
            cr.trials = st.trials;
            for (std::size_t ti = 0; ti < task.tensors.size(); ++ti)
                if (task.tensors[ti].role == TensorRole::Output) cr.elements += cc.counts()[ti];
            for (int trial = 0; trial < st.trials; ++trial) {
                report({{"stage", "correctness"}, {"case", c.name}, {"trial", trial}});
                std::uint64_t seed = splitmix64(base_seed ^ (static_cast<std::uint64_t>(ci) << 32) ^ static_cast<std::uint64_t>(trial));
                std::uint8_t poison = kPoison[trial % 2];
                cc.fill_inputs(ref, seed);
                cc.copy_inputs(cand, ref);
                cc.poison_outputs(ref, 0xFF);
                cc.poison_outputs(cand, poison);
                auto before = cc.input_checksums(cand);
                cc.call(in.reference, ref)();
                dev.synchronize();
                if (ci == 0 && trial == 0) {
                    report({{"stage", "correctness"}, {"case", c.name}, {"trial", trial}, {"what", "launch accounting"}});
                    try {
                        launches = dev.account_launches(cc.call(in.candidate, cand));
                        dev.synchronize();
                    } catch (const DeviceFault& f) {
                        throw CandidateFault{f.what(), f.sticky()};
                    }
                    launches_measured = true;
                } else {
                    run_candidate(dev, cc.call(in.candidate, cand));
                }
                auto after = cc.input_checksums(cand);
                for (std::size_t ti = 0; ti < task.tensors.size(); ++ti)
                    if (before[ti] != after[ti] && !cr.inputs_modified) {
                        cr.inputs_modified = true;
                        cr.modified_input = task.tensors[ti].name;
                        if (modified_input.empty()) modified_input = task.tensors[ti].name;
                    }
                std::string oob = cc.overwritten_canary(cand);
                if (!oob.empty()) {
                    cr.out_of_bounds_write = true;
                    cr.out_of_bounds_tensor = oob;
                    if (oob_tensor.empty()) oob_tensor = oob;
                }
                bool trial_ok = !cr.inputs_modified && oob.empty();
                for (std::size_t ti = 0; ti < task.tensors.size(); ++ti) {
                    const auto& t = task.tensors[ti];
                    if (t.role != TensorRole::Output) continue;
                    CompareResult r = dev.compare(cand.buffers[ti], ref.buffers[ti], t.dtype, cc.counts()[ti], t.tolerance, poison);
                    cr.max_abs_error = std::max(cr.max_abs_error, r.max_abs);
                    cr.max_rel_error = std::max(cr.max_rel_error, r.max_rel);
                    cr.mismatches += r.mismatches;
                    cr.nan_count += r.nan_count;
                    cr.inf_count += r.inf_count;
                    cr.unwritten += r.unwritten;
                    if (r.mismatches > 0) {
                        trial_ok = false;
                        if (cr.first_mismatch_index < 0) {
                            cr.first_mismatch_tensor = t.name;
                            cr.first_mismatch_index = r.first_index;
                            cr.first_expected = r.first_expected;
                            cr.first_actual = r.first_actual;
                        }
                    }
                }
                if (trial_ok) ++cr.trials_passed;
                if (cr.out_of_bounds_write || cr.inputs_modified) break;  // no point in more trials
            }
            cr.passed = cr.trials_passed == cr.trials;
            corr.passed = corr.passed && cr.passed;
            corr.max_abs_error = std::max(corr.max_abs_error, cr.max_abs_error);
            corr.max_rel_error = std::max(corr.max_rel_error, cr.max_rel_error);
            corr.mismatches += cr.mismatches;
            if (ci == 0) primary_passed = cr.passed;
            else if (!cr.passed) validation_failed = true;
            corr.cases.push_back(cr);
            if (!oob_tensor.empty() || !modified_input.empty()) break;
        }
        result["correctness"] = corr;

        // Launch accounting and streams.
        if (launches_measured && launches.supported) {
            result["kernel_launches"] = launches.kernels;
            json names = launches.kernel_names;
            add_check(checks, "kernel_launch", launches.kernels > 0 ? "pass" : "fail",
                      launches.kernels > 0 ? std::to_string(launches.kernels) + " kernel(s): " + names.dump()
                                           : "the candidate launched no kernel (work done by a library, the host or not at all)");
        } else {
            add_check(checks, "kernel_launch", "skipped", launches.note.empty() ? "launch accounting unavailable" : launches.note);
        }
        add_check(checks, "inputs_unmodified", modified_input.empty() ? "pass" : "fail",
                  modified_input.empty() ? "input checksums equal before and after every candidate call"
                                         : "the candidate modified input '" + modified_input + "'");
        if (primary_passed)
            add_check(checks, "shape_generality", validation_failed ? "fail" : "pass",
                      validation_failed ? "correct at the primary size but wrong at a validation size"
                                        : "correct at all " + std::to_string(corr.cases.size()) + " sizes");
        else
            add_check(checks, "shape_generality", "skipped", "the primary case is not correct");

        std::string side_detail;
        bool side_fail = false;
        if (launches_measured && launches.supported) {
            side_fail = launches.kernels_other_streams > 0;
            side_detail = side_fail ? std::to_string(launches.kernels_other_streams) + " kernel(s) ran on a stream other than the one given"
                                    : "every kernel ran on the given stream";
        }

        if (!oob_tensor.empty()) {
            result["status"] = "runtime_error";
            result["message"] = "out-of-bounds write past the end of '" + oob_tensor + "'";
        } else if (!modified_input.empty()) {
            result["status"] = "integrity_violation";
            result["message"] = "the candidate modified input '" + modified_input + "'";
        } else if (launches_measured && launches.supported && launches.kernels == 0) {
            result["status"] = "integrity_violation";
            result["message"] = "the candidate launched no kernel";
        } else if (side_fail) {
            result["status"] = "integrity_violation";
            result["message"] = side_detail;
        } else if (!corr.passed) {
            result["status"] = "incorrect";
            const CaseCorrectness* bad = nullptr;
            for (const auto& cr : corr.cases)
                if (!cr.passed) {
                    bad = &cr;
                    break;
                }
            std::string msg = "wrong output";
            if (bad) {
                msg += " in case '" + bad->name + "': " + std::to_string(bad->mismatches) + " mismatches";
                if (bad->nan_count) msg += ", " + std::to_string(bad->nan_count) + " NaN";
                if (bad->unwritten) msg += ", " + std::to_string(bad->unwritten) + " unwritten";
                if (bad->first_mismatch_index >= 0)
                    msg += "; first at " + bad->first_mismatch_tensor + "[" + std::to_string(bad->first_mismatch_index) +
                           "]: expected " + fmt_double(bad->first_expected, 7) + ", got " + fmt_double(bad->first_actual, 7);
            }
            result["message"] = msg;
        }

        // Timing: only for a candidate that is correct and clean so far.
        if (result["status"] == "ok" && st.time) {
            result["stage"] = "timing";
            const TaskCase& pc = *cases.front();
            CaseContext cc(dev, task, pc);
            std::size_t budget = in.backend == Backend::Cuda ? (8ull << 30) : (1ull << 30);
            std::size_t nsets = std::clamp<std::size_t>(budget / std::max<std::size_t>(cc.set_bytes(), 1), 1,
                                                        static_cast<std::size_t>(st.rotate_buffers));
            std::vector<TensorSet*> sets;
            for (std::size_t i = 0; i < nsets; ++i) {
                TensorSet& s = cc.new_set();
                cc.fill_inputs(s, splitmix64(base_seed + 1000 + i));
                cc.poison_outputs(s, 0xFF);
                sets.push_back(&s);
            }
            dev.synchronize();
            std::string key = in.reference_key + "#" + pc.name;
            auto rt = ref_times.find(key);
            if (rt == ref_times.end()) {
                report({{"stage", "timing"}, {"what", "reference"}});
                rt = ref_times.emplace(key, time_entry(dev, cc, in.reference, sets, st, false)).first;
            }
            report({{"stage", "timing"}, {"what", "candidate"}});
            TimingStats cs = time_entry(dev, cc, in.candidate, sets, st, true);
            const TimingStats& rs = rt->second;
            Timing tm;
            tm.case_name = pc.name;
            tm.median_ms = cs.median_ms;
            tm.min_ms = cs.min_ms;
            tm.max_ms = cs.max_ms;
            tm.mean_ms = cs.mean_ms;
            tm.spread = cs.spread;
            tm.reps = cs.reps;
            tm.warmup = cs.warmup;
            tm.wall_median_ms = cs.wall_median_ms;
            tm.reference_median_ms = rs.median_ms;
            tm.reference_min_ms = rs.min_ms;
            tm.reference_spread = rs.spread;
            tm.reference_reps = rs.reps;
            tm.speedup = cs.median_ms > 0 ? rs.median_ms / cs.median_ms : 0;
            result["timing"] = tm;

            // Event time against wall time: work left running on another stream or thread
            // finishes after the candidate's end event but before the device-wide sync.
            if (in.backend == Backend::Cuda) {
                double gap = cs.wall_median_ms - cs.median_ms;
                if (gap > std::max(0.2, 2.0 * cs.median_ms)) {
                    side_fail = true;
                    side_detail = "wall time " + fmt_double(cs.wall_median_ms) + " ms against event time " +
                                  fmt_double(cs.median_ms) + " ms: work escapes the candidate's stream";
                }
            }

            // Roofline against the device's measured peaks.
            Roofline rl;
            rl.flops = task.flops_of(pc);
            rl.bytes = task.bytes_of(pc);
            rl.peak_gbps = in.peaks.bandwidth_gbps;
            rl.peak_gflops = in.peaks.fp32_gflops;
            if (cs.median_ms > 0) {
                rl.achieved_gbps = rl.bytes / (cs.median_ms * 1e6);
                rl.achieved_gflops = rl.flops / (cs.median_ms * 1e6);
            }
            if (rl.peak_gbps > 0) rl.bandwidth_fraction = rl.achieved_gbps / rl.peak_gbps;
            if (rl.peak_gflops > 0) rl.compute_fraction = rl.achieved_gflops / rl.peak_gflops;
            rl.arithmetic_intensity = rl.bytes > 0 ? rl.flops / rl.bytes : 0;
            rl.ridge_point = rl.peak_gbps > 0 ? rl.peak_gflops / rl.peak_gbps : 0;
            double bw_floor = rl.peak_gbps > 0 ? rl.bytes / (rl.peak_gbps * 1e6) : 0;
            // The FMA floor holds only where no faster unit may legally do the arithmetic.
            bool fp32_only = std::all_of(task.tensors.begin(), task.tensors.end(), [](const TensorSpec& t) {
                return t.dtype == DType::F32 || t.dtype == DType::F64 || !is_floating(t.dtype);
            });
            bool use_flop_floor = in.backend == Backend::Cuda && fp32_only && !task.rules.allow_tf32 &&
                                  task.rules.allowed_libraries.empty() && rl.peak_gflops > 0;
            double flop_floor = use_flop_floor ? rl.flops / (rl.peak_gflops * 1e6) : 0;
            rl.floor_ms = std::max(bw_floor, flop_floor);
            double frac = std::max(rl.bandwidth_fraction, rl.compute_fraction);
            if (cs.median_ms < 0.01 || frac < 0.2) rl.bound = "latency";
            else if (rl.bandwidth_fraction >= rl.compute_fraction) rl.bound = "memory";
            else rl.bound = "compute";
            result["roofline"] = rl;
            double slack = in.backend == Backend::Cuda ? 0.8 : 0.5;
            if (rl.floor_ms <= 0)
                add_check(checks, "physical_floor", "skipped", "no measured peaks for this device");
            else if (cs.median_ms < slack * rl.floor_ms)
                add_check(checks, "physical_floor", "fail",
                          "median " + fmt_double(cs.median_ms) + " ms is below the physical floor " + fmt_double(rl.floor_ms) +
                              " ms (bytes / peak bandwidth, flops / peak rate): the work is not being done");
            else
                add_check(checks, "physical_floor", "pass",
                          "median " + fmt_double(cs.median_ms) + " ms, floor " + fmt_double(rl.floor_ms) + " ms");

            // After many timed calls, the candidate must still compute fresh inputs correctly:
            // catches outputs cached across calls and behaviour that changes under timing.
            report({{"stage", "timing"}, {"what", "post-timing check"}});
            TensorSet& ref = cc.new_set();
            TensorSet& probe = *sets[0];
            cc.fill_inputs(ref, splitmix64(base_seed ^ 0xC0FFEEull));
            cc.copy_inputs(probe, ref);
            cc.poison_outputs(ref, 0xFF);
            cc.poison_outputs(probe, kPoison[1]);
            cc.call(in.reference, ref)();
            dev.synchronize();
            run_candidate(dev, cc.call(in.candidate, probe));
            std::int64_t post_mismatch = 0;
            for (std::size_t ti = 0; ti < task.tensors.size(); ++ti) {
                const auto& t = task.tensors[ti];
                if (t.role == TensorRole::Output)
                    post_mismatch += dev.compare(probe.buffers[ti], ref.buffers[ti], t.dtype, cc.counts()[ti], t.tolerance, kPoison[1]).mismatches;
            }
            add_check(checks, "output_reuse", post_mismatch == 0 ? "pass" : "fail",
                      post_mismatch == 0 ? "fresh poisoned outputs and fresh inputs in every trial, and after timing"
                                         : "after timing, " + std::to_string(post_mismatch) +
                                               " output elements were wrong for fresh inputs (stale or cached results)");
            if (post_mismatch > 0) {
                result["status"] = "integrity_violation";
                result["message"] = "output reuse: wrong results for fresh inputs after the timed calls";
            } else if (side_fail) {
                result["status"] = "integrity_violation";
                result["message"] = side_detail;
            } else {
                for (const auto& ch : checks)
                    if (ch["name"] == "physical_floor" && ch["outcome"] == "fail") {
                        result["status"] = "integrity_violation";
                        result["message"] = "faster than the physical floor of the device";
                    }
            }
            if (result["status"] == "ok") {
                result["message"] = "correct; " + fmt_double(tm.speedup) + "x the reference (" + fmt_double(cs.median_ms) +
                                    " ms against " + fmt_double(rs.median_ms) + " ms)";
                result["stage"] = "done";
            }
        } else {
            add_check(checks, "output_reuse", corr.passed ? "pass" : "skipped",
                      corr.passed ? "fresh poisoned outputs and fresh inputs in every trial" : "the candidate is not correct");
            add_check(checks, "physical_floor", "skipped", st.time ? "not timed: the candidate failed" : "timing disabled");
            if (result["status"] == "ok") {
                result["message"] = "correct (not timed)";
                result["stage"] = "done";
            }
        }
        if (launches_measured && launches.supported) add_check(checks, "side_stream", side_fail ? "fail" : "pass", side_detail);
        else if (in.backend == Backend::Cuda)
            add_check(checks, "side_stream", side_fail ? "fail" : "skipped",
                      side_fail ? side_detail : "launch accounting unavailable; event time checked against wall time");
        else
            add_check(checks, "side_stream", "skipped", "host backend: thread creation is screened by forbidden_symbols");
    } catch (const CandidateFault& f) {
        result["status"] = "runtime_error";
        result["message"] = "the candidate faulted: " + f.message;
        result["fatal"] = f.sticky;
        if (!corr.cases.empty()) result["correctness"] = corr;
    } catch (const DeviceFault& f) {
        result["status"] = "runtime_error";
        result["message"] = std::string("device error outside the candidate: ") + f.what();
        result["fatal"] = f.sticky();
    }
    result["integrity"] = checks;
    return result;
}

}  // namespace kf::worker
