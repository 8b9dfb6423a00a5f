// Correctness, integrity and timing of one candidate (docs/worker-protocol.md,
// docs/diagnosis.md). Written once against the Device interface for every backend.
#include "evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <set>

#include "kf/diagnosis.h"
#include "candidate_site.h"
#include "case_buffers.h"
#include "rng.h"
#include "runner_checks.h"
#include "timing.h"

namespace kf::worker {

using nlohmann::json;

namespace {

constexpr std::uint8_t kPoison[2] = {0xFF, 0x7F};  // NaN / huge for floats; -1 / large for ints
/** The poison of every timed call and of the check after timing, which must look alike. */
constexpr std::uint8_t kTimedPoison = kPoison[0];
/** host_compute: a candidate's CPU time per call may exceed the reference's by this factor
 *  and by this much before the work is taken for the host's (launches cost microseconds). */
constexpr double kHostComputeRatio = 4.0;
constexpr double kHostComputeSlackMs = 1.0;
/**
 * Each timed call of a candidate is checked with this probability (and the last always): a
 * candidate that skips the work in half of n calls, enough to move the median, escapes with
 * a chance of (3/4)^(n/2) / 2, under 1 in 35 for the fewest calls (20), and fewer for more.
 * (Skipped work also spreads the times, so that the median is not soon known: the calls go
 * on to min_time_ms.)
 */
constexpr double kTimedCheckFraction = 1.0 / 4;
// How long the first accounted call's count goes on after its work is done (late work).
constexpr int kLateWorkMs = 20;
/** What overrun() names for the guards that belong to no tensor. */
const std::string kArenaGuard = "<guard>";

void add_check(json& checks, const std::string& name, const std::string& outcome, const std::string& detail) {
    checks.push_back({{"name", name}, {"outcome", outcome}, {"detail", detail}});
}

/**
 * Outputs of a timed call that miss the tolerance but lie within this multiple of it were
 * computed and rounded differently; skipped, cached or unfinished work misses by far more.
 * (A tolerance of zero stays zero: exact tasks allow no rounding.)
 */
constexpr double kRoundingScale = 16.0;

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string fmt_double(double v, int precision = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    return buf;
}

/**
 * Compares every output of `cand` with `ref`; accumulates the statistics into `into` when
 * given. Returns the number of mismatching elements.
 */
std::int64_t compare_outputs(Device& dev, const Task& task, const CaseContext& cc, TensorSet& cand, TensorSet& ref,
                             std::uint8_t poison, CaseCorrectness* into, double tolerance_scale = 1.0) {
    std::int64_t mismatches = 0;
    for (std::size_t ti = 0; ti < task.tensors.size(); ++ti) {
        const auto& t = task.tensors[ti];
        if (t.role != TensorRole::Output) continue;
        const Tolerance tol{t.tolerance.atol * tolerance_scale, t.tolerance.rtol * tolerance_scale};
        CompareResult r = dev.compare(cand.buffers[ti], ref.buffers[ti], t.dtype, cc.counts()[ti], tol, poison);
        mismatches += r.mismatches;
        if (!into) continue;
        into->max_abs_error = std::max(into->max_abs_error, r.max_abs);
        into->max_rel_error = std::max(into->max_rel_error, r.max_rel);
        into->mismatches += r.mismatches;
        into->nan_count += r.nan_count;
        into->inf_count += r.inf_count;
        into->unwritten += r.unwritten;
        if (r.mismatches > 0 && into->first_mismatch_index < 0) {
            into->first_mismatch_tensor = t.name;
            into->first_mismatch_index = r.first_index;
            into->first_expected = r.first_expected;
            into->first_actual = r.first_actual;
        }
    }
    return mismatches;
}

/** The primary case's work over the measured time, against the device's measured peaks. */
Roofline make_roofline(const Task& task, const TaskCase& c, Backend backend, const Peaks& peaks, double median_ms) {
    Roofline rl;
    rl.flops = task.flops_of(c);
    rl.bytes = task.bytes_of(c);
    rl.peak_gbps = peaks.bandwidth_gbps;
    rl.peak_gflops = peaks.fp32_gflops;
    if (median_ms > 0) {
        rl.achieved_gbps = rl.bytes / (median_ms * 1e6);
        rl.achieved_gflops = rl.flops / (median_ms * 1e6);
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
    bool use_flop_floor = backend == Backend::Cuda && fp32_only && !task.rules.allow_tf32 &&
                          task.rules.allowed_libraries.empty() && rl.peak_gflops > 0;
    double flop_floor = use_flop_floor ? rl.flops / (rl.peak_gflops * 1e6) : 0;
    rl.floor_ms = std::max(bw_floor, flop_floor);
    double frac = std::max(rl.bandwidth_fraction, rl.compute_fraction);
    if (median_ms < 0.01 || frac < 0.2) rl.bound = "latency";
    else if (rl.bandwidth_fraction >= rl.compute_fraction) rl.bound = "memory";
    else rl.bound = "compute";
    return rl;
}

Timing make_timing(const std::string& case_name, const TimingStats& cs, const TimingStats& rs) {
    Timing tm;
    tm.case_name = case_name;
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
    return tm;
}

/**
 * One candidate's evaluation: the correctness trials over every case, the verdict on what
 * they found, then timing with the checks that need it. State shared by the phases lives
 * in the members; the result is the worker's part of the diagnosis record.
 */
class CandidateEvaluation {
public:
    CandidateEvaluation(Device& dev, const EvalInputs& in, ReferenceTimes& ref_times, const ProgressFn& progress)
        : dev_(dev), in_(in), task_(*in.task), st_(in.settings), ref_times_(ref_times), progress_(progress) {
        base_seed_ = st_.seed ? st_.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
        corr_.trials = st_.trials;
        corr_.passed = true;
    }

    json run() {
        try {
            in_.candidate->cap_device_memory(st_.memory_mb << 20);
            auto cases = task_.cases_for(in_.backend);
            // The largest case's set: each case's one set fits there. On CUDA the timed calls'
            // sets of the primary case fit too: memory shared with a runner is then made and
            // mapped once per evaluation (milliseconds each time, in both processes).
            std::size_t most = 0;
            for (std::size_t ci = 0; ci < cases.size(); ++ci) {
                const CaseContext cc(dev_, task_, *cases[ci]);
                const bool timed_here = ci == 0 && st_.time && in_.backend == Backend::Cuda;
                most = std::max(most, (timed_here ? timing_sets(cc) : 1) * cc.arena_set_bytes());
            }
            in_.candidate->reserve(Arena::kLeadingGuard + most);
            const auto t0 = std::chrono::steady_clock::now();
            for (std::size_t ci = 0; ci < cases.size(); ++ci) {
                check_case(ci, *cases[ci]);
                if (!oob_tensor_.empty() || !modified_input_.empty()) break;
            }
            phases_["correctness_ms"] = ms_since(t0);
            result_["correctness"] = corr_;
            judge_correctness();
            if (result_["status"] == "ok" && st_.time) {
                time_primary(*cases.front());
            } else {
                add_check(checks_, "output_reuse", corr_.passed ? "pass" : "skipped",
                          corr_.passed ? "fresh poisoned outputs and fresh inputs in every trial" : "the candidate is not correct");
                add_check(checks_, "physical_floor", "skipped", st_.time ? "not timed: the candidate failed" : "timing disabled");
                if (result_["status"] == "ok") {
                    result_["message"] = "correct (not timed)";
                    result_["stage"] = "done";
                }
            }
            add_side_stream_check();
            add_bounds_check();
            judge_activity();
        } catch (const CandidateFault& f) {
            result_["status"] = f.integrity ? "integrity_violation" : "runtime_error";
            const bool named = f.message.rfind("the candidate", 0) == 0;
            result_["message"] = (f.integrity || named ? "" : "the candidate faulted: ") + f.message;
            if (f.integrity) add_check(checks_, f.check, "fail", f.message);
            result_["fatal"] = f.sticky;
            if (!corr_.cases.empty()) result_["correctness"] = corr_;
        } catch (const DeviceFault& f) {
            result_["status"] = "runtime_error";
            result_["message"] = std::string("device error outside the candidate: ") + f.what();
            result_["fatal"] = f.sticky();
        }
        result_["integrity"] = checks_;
        if (const json site = in_.candidate->phase_times(); !site.empty()) phases_["site"] = site;
        result_["phases"] = phases_;
        return result_;
    }

private:
    void report(const json& p) {
        if (progress_) progress_(p);
    }

    /** Runs the candidate once (on its set 0), under launch accounting for the very first
     *  call, and stops whatever it left running so that nothing changes while we look. The
     *  first accounted call also counts work launched in the kLateWorkMs after it: work a
     *  candidate leaves to a thread or a signal handler of its own is seen there (and in the
     *  runner, such a thread is spawned_work, and every later call is frozen as it returns). */
    void call_candidate(bool account) {
        CandidateSite& site = *in_.candidate;
        if (!account) {
            site.call(0);
        } else if (!launches_measured_) {
            launches_ = site.account(0, kLateWorkMs);
            launches_measured_ = true;
            modules_loaded_ = std::max(modules_loaded_, launches_.modules_loaded);
        } else {
            // Every accounted call counts: a candidate that behaves in the first call and moves
            // its work to another stream (or to no kernel at all) in a later one is seen there.
            LaunchReport r = site.account(0, 0);
            modules_loaded_ = std::max(modules_loaded_, r.modules_loaded);
            if (r.supported && launches_.supported) {
                launches_.kernels = std::min(launches_.kernels, r.kernels);
                launches_.kernels_other_streams += r.kernels_other_streams;
            }
        }
        site.freeze();
        look_for_loaded_libraries();
    }

    /** Vendor libraries the task does not allow, mapped in the candidate's process now. */
    void look_for_loaded_libraries() {
        MappedFiles m = in_.candidate->mapped();
        if (!m.readable) return;
        maps_read_ = true;
        for (auto& f : forbidden_libraries(m.paths, task_.rules)) loaded_forbidden_.insert(std::move(f));
    }

    void check_case(std::size_t ci, const TaskCase& c) {
        CaseContext cc(dev_, task_, c);
        TensorSet& ref = cc.new_set();
        TensorSet& cand = *in_.candidate->new_sets(cc, 1).front();
        CaseCorrectness cr;
        cr.name = c.name;
        cr.trials = st_.trials;
        for (std::size_t ti = 0; ti < task_.tensors.size(); ++ti)
            if (task_.tensors[ti].role == TensorRole::Output) cr.elements += cc.counts()[ti];
        for (int trial = 0; trial < st_.trials; ++trial) {
            // On CUDA every trial of the primary case runs under launch accounting; the first
            // trial alone elsewhere (on the host there is nothing to count).
            bool account = ci == 0 && (trial == 0 || in_.backend == Backend::Cuda);
            json where = {{"stage", "correctness"}, {"case", c.name}, {"trial", trial}};
            if (account) where["what"] = "launch accounting";
            report(where);
            std::uint64_t seed = splitmix64(base_seed_ ^ (static_cast<std::uint64_t>(ci) << 32) ^ static_cast<std::uint64_t>(trial));
            std::uint8_t poison = kPoison[trial % 2];
            cc.fill_inputs(ref, seed);
            cc.copy_inputs(cand, ref);
            cc.poison_outputs(ref, 0xFF);
            cc.poison_outputs(cand, poison);
            auto before = cc.input_checksums(cand);
            cc.call(in_.reference, ref)();
            dev_.synchronize();
            call_candidate(account);
            auto after = cc.input_checksums(cand);
            for (std::size_t ti = 0; ti < task_.tensors.size(); ++ti)
                if (before[ti] != after[ti] && !cr.inputs_modified) {
                    cr.inputs_modified = true;
                    cr.modified_input = task_.tensors[ti].name;
                    if (modified_input_.empty()) modified_input_ = task_.tensors[ti].name;
                }
            std::string oob = overrun(cc, cand);
            if (!oob.empty()) {
                cr.out_of_bounds_write = true;
                cr.out_of_bounds_tensor = oob == kArenaGuard ? "" : oob;
                if (oob_tensor_.empty()) oob_tensor_ = oob;
            }
            bool mismatched = compare_outputs(dev_, task_, cc, cand, ref, poison, &cr) > 0;
            in_.candidate->thaw();
            if (!mismatched && !cr.inputs_modified && oob.empty()) ++cr.trials_passed;
            if (cr.out_of_bounds_write || cr.inputs_modified) break;  // no point in more trials
        }
        cr.passed = cr.trials_passed == cr.trials;
        corr_.passed = corr_.passed && cr.passed;
        corr_.max_abs_error = std::max(corr_.max_abs_error, cr.max_abs_error);
        corr_.max_rel_error = std::max(corr_.max_rel_error, cr.max_rel_error);
        corr_.mismatches += cr.mismatches;
        if (ci == 0) primary_passed_ = cr.passed;
        else if (!cr.passed) validation_failed_ = true;
        corr_.cases.push_back(cr);
    }

    /**
     * The tensor of `set` whose canary (the kCanaryBytes after it) a write past its end
     * reached, kArenaGuard for the guards of the runner's memory that belong to no tensor, or
     * empty. Checked after every candidate call.
     */
    std::string overrun(CaseContext& cc, TensorSet& set) {
        std::string t = cc.overwritten_canary(set);
        if (!t.empty()) return t;
        for (const Buffer& g : in_.candidate->guards())
            if (!dev_.bytes_equal(g, 0, g.bytes, kCanaryByte)) return kArenaGuard;
        return {};
    }

    static std::string where_written(const std::string& overrun) {
        return overrun == kArenaGuard ? "outside every tensor (the guard at the start or end of its memory)"
                                      : "past the end of '" + overrun + "'";
    }

    /** The checks the trials decide, and the status they imply (worst first). */
    void judge_correctness() {
        bool accounted = launches_measured_ && launches_.supported;
        if (accounted) {
            result_["kernel_launches"] = launches_.kernels;
            json names = launches_.kernel_names;
            add_check(checks_, "kernel_launch", launches_.kernels > 0 ? "pass" : "fail",
                      launches_.kernels > 0 ? std::to_string(launches_.kernels) + " kernel(s): " + names.dump()
                                            : "the candidate launched no kernel (work done by a library, the host or not at all)");
            side_fail_ = launches_.kernels_other_streams > 0;
            side_detail_ = side_fail_ ? std::to_string(launches_.kernels_other_streams) +
                                            " kernel(s) ran on a stream other than the one given"
                                      : "every kernel ran on the given stream";
        } else {
            add_check(checks_, "kernel_launch", "skipped", launches_.note.empty() ? "launch accounting unavailable" : launches_.note);
        }
        add_check(checks_, "inputs_unmodified", modified_input_.empty() ? "pass" : "fail",
                  modified_input_.empty() ? "input checksums equal before and after every candidate call"
                                          : "the candidate modified input '" + modified_input_ + "'");
        if (primary_passed_)
            add_check(checks_, "shape_generality", validation_failed_ ? "fail" : "pass",
                      validation_failed_ ? "correct at the primary size but wrong at a validation size"
                                         : "correct at all " + std::to_string(corr_.cases.size()) + " sizes");
        else
            add_check(checks_, "shape_generality", "skipped", "the primary case is not correct");

        if (!oob_tensor_.empty()) {
            fail("integrity_violation", "out-of-bounds write " + where_written(oob_tensor_));
        } else if (!modified_input_.empty()) {
            fail("integrity_violation", "the candidate modified input '" + modified_input_ + "'");
        } else if (accounted && launches_.kernels == 0) {
            fail("integrity_violation", "the candidate launched no kernel");
        } else if (side_fail_) {
            fail("integrity_violation", side_detail_);
        } else if (!corr_.passed) {
            fail("incorrect", mismatch_message());
        }
    }

    std::string mismatch_message() const {
        for (const auto& cr : corr_.cases) {
            if (cr.passed) continue;
            std::string msg = "wrong output in case '" + cr.name + "': " + std::to_string(cr.mismatches) + " mismatches";
            if (cr.nan_count) msg += ", " + std::to_string(cr.nan_count) + " NaN";
            if (cr.unwritten) msg += ", " + std::to_string(cr.unwritten) + " unwritten";
            if (cr.first_mismatch_index >= 0)
                msg += "; first at " + cr.first_mismatch_tensor + "[" + std::to_string(cr.first_mismatch_index) +
                       "]: expected " + fmt_double(cr.first_expected, 7) + ", got " + fmt_double(cr.first_actual, 7);
            return msg;
        }
        return "wrong output";
    }

    void fail(const std::string& status, const std::string& message) {
        result_["status"] = status;
        result_["message"] = message;
    }

    /** Times the candidate and the reference side by side, then the checks that need a time. */
    void time_primary(const TaskCase& pc) {
        result_["stage"] = "timing";
        CaseContext cc(dev_, task_, pc);
        const std::size_t nsets = timing_sets(cc);
        const TimingStats& rs = reference_time(cc, pc, nsets);
        report({{"stage", "timing"}, {"what", "candidate"}});
        // The reference runs trusted code: what the judge's clock adds to its reported times
        // (the round trip and the switch between the judge's and the runner's contexts)
        // bounds how far a candidate's report may fall below the judge's clock.
        if (in_.backend == Backend::Cuda) in_.candidate->bound_by_overhead(rs.overhead_p90_ms);
        in_.candidate->settle();  // the timed calls run with nothing else of the worker's on the device
        std::vector<TensorSet*> sets = in_.candidate->new_sets(cc, nsets);
        TimingStats cs = time_calls(dev_, timed_calls(*in_.candidate, cc, sets, true), st_);
        phases_["timing"] = {{"reps", cs.reps},          {"warmup", cs.warmup},       {"loop_ms", cs.loop_ms},
                             {"prepare_ms", cs.prepare_ms}, {"flush_ms", cs.flush_ms}, {"call_ms", cs.call_ms},
                             {"after_ms", cs.after_ms}};
        Timing tm = make_timing(pc.name, cs, rs);
        result_["timing"] = tm;
        add_timed_outputs_check();

        // Event time against wall time: work left running on another stream or thread
        // finishes after the candidate's end event but before the device-wide sync.
        // (Less what the judge's clock adds around the reference's calls, which runs trusted code.)
        const double escaped = cs.wall_median_ms - rs.overhead_p90_ms - cs.median_ms;
        if (in_.backend == Backend::Cuda && escaped > std::max(0.2, 2.0 * cs.median_ms)) {
            side_fail_ = true;
            side_detail_ = "wall time " + fmt_double(cs.wall_median_ms) + " ms against event time " +
                           fmt_double(cs.median_ms) + " ms: work escapes the candidate's stream";
        }

        std::string host_detail;
        const bool host_fail = judge_host_compute(cs, rs, host_detail);
        const bool below_floor = check_physical_floor(pc, cs);
        const PostCheck post = check_after_timing(cc, *sets[0]);
        if (!timed_oob_.empty())
            fail("integrity_violation", "out-of-bounds write " + where_written(timed_oob_) +
                                            " in a timed call (the correctness trials wrote within bounds)");
        else if (post.gross)
            fail("integrity_violation", "output reuse: wrong results for fresh inputs after the timed calls");
        else if (timed_modified_ > 0)
            fail("integrity_violation", "the candidate wrote over its inputs in timed calls (a result that matches "
                                        "inputs of its own, not the ones it was given)");
        else if (timed_gross_ > 0)
            fail("integrity_violation", "wrong outputs in timed calls: the work is skipped, cached or finished after the call returns");
        else if (post.mismatch > 0 || timed_mismatch_ > 0)
            // Outside the tolerance for some inputs, yet within kRoundingScale times it: the
            // work was done, with too little precision for this task (e.g. a summation order
            // whose rounding the tolerance does not allow). Wrong, not cheating.
            fail("incorrect", "outputs of timed calls differ from the reference by more than the tolerance, by rounding only "
                              "(within " + fmt_double(kRoundingScale) + "x the tolerance): the result is not precise enough for "
                              "this task's tolerance on every input");
        else if (side_fail_)
            fail("integrity_violation", side_detail_);
        else if (host_fail)
            fail("integrity_violation", host_detail);
        else if (below_floor)
            fail("integrity_violation", "faster than the physical floor of the device");
        else {
            result_["message"] = "correct; " + fmt_double(tm.speedup) + "x the reference (" + fmt_double(tm.median_ms) +
                                 " ms against " + fmt_double(tm.reference_median_ms) + " ms)";
            result_["stage"] = "done";
        }
    }

    /** How many tensor sets of `cc` the timed calls rotate through (rotate_buffers, within
     *  a memory budget). */
    std::size_t timing_sets(const CaseContext& cc) const {
        const std::size_t budget = in_.backend == Backend::Cuda ? (8ull << 30) : (1ull << 30);
        return std::clamp<std::size_t>(budget / std::max<std::size_t>(cc.set_bytes(), 1), 1,
                                       static_cast<std::size_t>(st_.rotate_buffers));
    }

    /** The reference's time on case `pc`, measured in its own site the first time the worker
     *  needs it and kept for the worker's lifetime. */
    const TimingStats& reference_time(CaseContext& cc, const TaskCase& pc, std::size_t nsets) {
        std::string key = in_.reference_key + "#" + pc.name;
        auto rt = ref_times_.find(key);
        if (rt != ref_times_.end()) return rt->second;
        report({{"stage", "timing"}, {"what", "reference"}});
        std::unique_ptr<CandidateSite> site = in_.reference_timer();
        site->settle();
        std::vector<TensorSet*> sets = site->new_sets(cc, nsets);
        // Timed twice and the faster median kept: every speedup of the worker's lifetime is
        // over this time, and a first block that ran cold (a device at idle clocks, code
        // still loading) would inflate them all. (On the H200 the references of scale_add,
        // gelu and softmax timed no differently this way: docs/benchmarks.md.)
        const auto t0 = std::chrono::steady_clock::now();
        TimingStats first = time_calls(dev_, timed_calls(*site, cc, sets, false), st_);
        TimingStats second = time_calls(dev_, timed_calls(*site, cc, sets, false), st_);
        rt = ref_times_.emplace(key, second.median_ms < first.median_ms ? second : first).first;
        phases_["reference_timing_ms"] = ms_since(t0);
        return rt->second;
    }

    /** `timed_outputs`: what the checked timed calls showed. */
    void add_timed_outputs_check() {
        add_check(checks_, "timed_outputs", timed_gross_ == 0 && timed_modified_ == 0 ? "pass" : "fail",
                  timed_modified_ > 0
                      ? std::to_string(timed_modified_) + " of " + std::to_string(timed_checked_) +
                            " timed calls checked wrote over their inputs (checked against inputs drawn again by the judge)"
                  : timed_mismatch_ == 0
                      ? std::to_string(timed_checked_) + " timed calls, chosen at random, checked against the reference"
                  : timed_gross_ == 0
                      ? std::to_string(timed_mismatch_) + " of " + std::to_string(timed_checked_) +
                            " timed calls checked were outside the tolerance by rounding only (the work was done)"
                      : std::to_string(timed_gross_) + " of " + std::to_string(timed_checked_) +
                            " timed calls checked gave wrong outputs (work skipped, cached or left running after the call)");
    }

    /** The roofline of the candidate's median, and `physical_floor`: whether it is below the
     *  floor (the work is not being done). */
    bool check_physical_floor(const TaskCase& pc, const TimingStats& cs) {
        Roofline rl = make_roofline(task_, pc, in_.backend, in_.peaks, cs.median_ms);
        // The host's floor is a copy of the same number of bytes, timed here (the fastest of
        // warm and flushed caches): it holds whatever the machine's caches report, and a
        // candidate that does the work cannot beat it by much. On CUDA the measured peaks are the floor.
        std::string floor_basis = "bytes / peak bandwidth, flops / peak rate";
        if (in_.backend == Backend::Host && rl.bytes > 0) {
            report({{"stage", "timing"}, {"what", "calibrated copy"}});
            rl.floor_ms = dev_.copy_floor_ms(static_cast<std::size_t>(rl.bytes));
            floor_basis = "a copy of the same " + fmt_double(rl.bytes / 1e6) + " MB on this machine, the fastest of warm and flushed caches";
        }
        double slack = in_.backend == Backend::Cuda ? 0.8 : 0.5;
        bool below_floor = rl.floor_ms > 0 && cs.median_ms < slack * rl.floor_ms;
        // A host floor measured while other processes held the cores is too high: measure it
        // again (the device keeps the least) before calling a candidate impossibly fast.
        for (int again = 0; below_floor && in_.backend == Backend::Host && again < 2; ++again) {
            rl.floor_ms = dev_.copy_floor_ms(static_cast<std::size_t>(rl.bytes));
            below_floor = cs.median_ms < slack * rl.floor_ms;
        }
        result_["roofline"] = rl;
        if (rl.floor_ms <= 0)
            add_check(checks_, "physical_floor", "skipped", "no measured floor for this task on this device");
        else if (below_floor)
            add_check(checks_, "physical_floor", "fail",
                      "median " + fmt_double(cs.median_ms) + " ms is below the physical floor " + fmt_double(rl.floor_ms) +
                          " ms (" + floor_basis + "): the work is not being done");
        else
            add_check(checks_, "physical_floor", "pass",
                      "median " + fmt_double(cs.median_ms) + " ms, floor " + fmt_double(rl.floor_ms) + " ms (" + floor_basis + ")");
        return below_floor;
    }

    /** What the check after timing found: elements wrong for fresh inputs, and whether the
     *  candidate wrote over its inputs or was wrong by more than rounding. */
    struct PostCheck {
        std::int64_t mismatch = 0;
        bool gross = false;
    };

    /** After many timed calls, the candidate must still compute fresh inputs correctly:
     *  catches outputs cached across calls and behaviour that changes under timing
     *  (`output_reuse`). Runs on `probe`, a set of the timing loop's. */
    PostCheck check_after_timing(CaseContext& cc, TensorSet& probe) {
        report({{"stage", "timing"}, {"what", "post-timing check"}});
        const auto post0 = std::chrono::steady_clock::now();
        // Poisoned like the timed calls (kTimedPoison), so that it cannot be told apart from them.
        TensorSet& ref = cc.new_set();
        cc.fill_inputs(ref, splitmix64(base_seed_ ^ 0xC0FFEEull));
        cc.copy_inputs(probe, ref);
        cc.poison_outputs(ref, 0xFF);
        cc.poison_outputs(probe, kTimedPoison);
        cc.call(in_.reference, ref)();
        dev_.synchronize();
        const auto probe_inputs = cc.input_checksums(probe);
        in_.candidate->call(0);
        in_.candidate->freeze();
        const bool post_modified = cc.input_checksums(probe) != probe_inputs;
        if (timed_oob_.empty()) timed_oob_ = overrun(cc, probe);
        look_for_loaded_libraries();
        PostCheck post;
        post.mismatch = compare_outputs(dev_, task_, cc, probe, ref, kTimedPoison, nullptr);
        post.gross = post_modified || (post.mismatch > 0 && compare_outputs(dev_, task_, cc, probe, ref, kTimedPoison,
                                                                            nullptr, kRoundingScale) > 0);
        add_check(checks_, "output_reuse", post.gross ? "fail" : "pass",
                  post_modified        ? std::string("after timing, the candidate wrote over its inputs")
                  : post.mismatch == 0 ? "fresh poisoned outputs and fresh inputs in every trial, and after timing"
                  : !post.gross        ? "after timing, " + std::to_string(post.mismatch) +
                                      " output elements were outside the tolerance by rounding only (fresh results)"
                                       : "after timing, " + std::to_string(post.mismatch) +
                                           " output elements were wrong for fresh inputs (stale or cached results)");
        phases_["post_check_ms"] = ms_since(post0);
        return post;
    }

    /**
     * The calls timed on `sets` of `site`: every repetition gets fresh inputs and poisoned
     * outputs; for the candidate, the site is frozen after each call and a few repetitions
     * drawn at random are compared with the reference run here on the same inputs.
     */
    TimedCalls timed_calls(CandidateSite& site, CaseContext& cc, std::vector<TensorSet*>& sets, bool candidate) {
        TimedCalls tc;
        tc.sets = sets.size();
        // The seed each set was last filled from: a checked call is compared with the reference
        // run on inputs drawn again from it, never on what the candidate left in its buffers.
        auto seeds = std::make_shared<std::vector<std::uint64_t>>(sets.size());
        tc.prepare = [this, &cc, &sets, seeds](std::size_t i) {
            (*seeds)[i] = splitmix64(base_seed_ + 1000 + timed_round_++);
            cc.fill_inputs(*sets[i], (*seeds)[i]);
            cc.poison_outputs(*sets[i], kTimedPoison);
        };
        tc.call = [&site](std::size_t i) { return site.call(i); };
        // A call whose outputs are checked is followed by a stop of the candidate's process
        // (freeze) while the judge looks; the others only by a count of its threads, so that the
        // timed calls run as they would without a judge (a stop costs an OpenMP pool its warm
        // threads). Which calls are checked is drawn at random: a stop tells the candidate only
        // that the call it has already finished was one.
        tc.after = [this, &site, &cc, &sets, candidate, seeds](std::size_t i, bool verify) {
            if (!candidate) return;
            if (!verify) {
                site.count();
                if (timed_oob_.empty()) timed_oob_ = overrun(cc, *sets[i]);
                return;
            }
            site.freeze();
            if (timed_oob_.empty()) timed_oob_ = overrun(cc, *sets[i]);
            check_timed_call(cc, *sets[i], (*seeds)[i]);
            site.thaw();
        };
        tc.check_fraction = candidate ? kTimedCheckFraction : 0;
        return tc;
    }

    /** Compares a timed call's outputs with the reference run on inputs drawn again from
     *  `seed`, after checking that the candidate's inputs are still those. */
    void check_timed_call(CaseContext& cc, TensorSet& set, std::uint64_t seed) {
        if (!timed_ref_) timed_ref_ = &cc.new_set();
        cc.fill_inputs(*timed_ref_, seed);
        cc.poison_outputs(*timed_ref_, 0xFF);
        ++timed_checked_;
        look_for_loaded_libraries();
        if (cc.input_checksums(set) != cc.input_checksums(*timed_ref_)) {
            ++timed_modified_;
            return;
        }
        cc.call(in_.reference, *timed_ref_)();
        dev_.synchronize();
        if (compare_outputs(dev_, task_, cc, set, *timed_ref_, kTimedPoison, nullptr) > 0) {
            ++timed_mismatch_;
            // Within a loose multiple of the tolerance the outputs were computed, only
            // rounded differently (e.g. another summation order): not skipped or stale work.
            if (compare_outputs(dev_, task_, cc, set, *timed_ref_, kTimedPoison, nullptr, kRoundingScale) > 0)
                ++timed_gross_;
        }
    }

    void add_side_stream_check() {
        if (launches_measured_ && launches_.supported)
            add_check(checks_, "side_stream", side_fail_ ? "fail" : "pass", side_detail_);
        else if (in_.backend == Backend::Cuda)
            add_check(checks_, "side_stream", side_fail_ ? "fail" : "skipped",
                      side_fail_ ? side_detail_ : "launch accounting unavailable; event time checked against wall time");
        else
            add_check(checks_, "side_stream", "skipped", "host backend: threads of the candidate's own are spawned_work");
    }

    /**
     * CUDA: the runner's CPU time per timed call (its waits for the device sleep, so that is
     * host work) against the reference's. A candidate that computes the answer on the host
     * and launches a dummy kernel spends far more of it than any launch sequence.
     */
    bool judge_host_compute(const TimingStats& cs, const TimingStats& rs, std::string& detail) {
        if (in_.backend != Backend::Cuda) {
            add_check(checks_, "host_compute", "skipped", "the host backend computes on the host");
            return false;
        }
        if (!in_.candidate->activity().quiet_waits || cs.cpu_median_ms < 0 || rs.cpu_median_ms < 0) {
            add_check(checks_, "host_compute", "skipped", "the runner's CPU time per call is not known, or its waits spin");
            return false;
        }
        const double allowed = std::max(kHostComputeRatio * rs.cpu_median_ms, rs.cpu_median_ms + kHostComputeSlackMs);
        const bool host = cs.cpu_median_ms > allowed && cs.cpu_median_ms > 0.5 * cs.wall_median_ms;
        detail = fmt_double(cs.cpu_median_ms) + " ms of host CPU time per timed call (median) against the reference's " +
                 fmt_double(rs.cpu_median_ms) + " ms, in a call of " + fmt_double(cs.wall_median_ms) + " ms";
        if (host) detail = "the candidate computes on the host: " + detail;
        add_check(checks_, "host_compute", host ? "fail" : "pass", detail);
        return host;
    }

    void add_bounds_check() {
        const std::string& oob = oob_tensor_.empty() ? timed_oob_ : oob_tensor_;
        add_check(checks_, "out_of_bounds_write", oob.empty() ? "pass" : "fail",
                  oob.empty() ? "the " + std::to_string(kCanaryBytes) +
                                    " bytes after every tensor and the guards of the candidate's memory were intact after every call"
                              : "a write " + where_written(oob) + (oob_tensor_.empty() ? " in a timed call" : ""));
    }

    /** The checks decided from what the judge saw of the candidate's process (runner_checks.h);
     *  they turn `ok` and `incorrect` into their failure. */
    void judge_activity() {
        ProcessFindings f;
        f.activity = in_.candidate->activity();
        f.memory = in_.candidate->device_memory();
        f.maps_read = maps_read_;
        f.forbidden_loaded = loaded_forbidden_;
        f.modules_loaded = modules_loaded_;
        f.libraries_allowed = !task_.rules.allowed_libraries.empty();
        const ProcessVerdict v = judge_process(f, in_.backend, checks_);
        const std::string status = result_["status"];
        if (!v.status.empty() && (status == "ok" || status == "incorrect")) fail(v.status, v.message);
    }

    Device& dev_;
    const EvalInputs& in_;
    const Task& task_;
    const EvalSettings& st_;
    ReferenceTimes& ref_times_;
    const ProgressFn& progress_;
    std::uint64_t base_seed_ = 0;
    json result_ = {{"status", "ok"}, {"stage", "correctness"}, {"message", ""}, {"fatal", false}};
    json checks_ = json::array();
    json phases_ = json::object();  ///< where the evaluation's time went (docs/diagnosis.md, phases)
    Correctness corr_;
    LaunchReport launches_;
    bool launches_measured_ = false;
    std::string modified_input_, oob_tensor_;
    bool primary_passed_ = false, validation_failed_ = false;
    bool side_fail_ = false;
    std::string side_detail_;
    std::uint64_t timed_round_ = 0;
    TensorSet* timed_ref_ = nullptr;
    int timed_checked_ = 0, timed_mismatch_ = 0;
    int timed_gross_ = 0;  ///< timed mismatches beyond kRoundingScale times the tolerance
    int timed_modified_ = 0;  ///< checked timed calls after which the inputs differed from those drawn
    std::string timed_oob_;   ///< overrun() found after a timed call or the check after timing
    bool maps_read_ = false;
    std::int64_t modules_loaded_ = 0;         ///< device modules loaded after the library (the most any report gave)
    std::set<std::string> loaded_forbidden_;  ///< mapped vendor libraries the task does not allow
};

}  // namespace

json evaluate_candidate(Device& dev, const EvalInputs& in, ReferenceTimes& ref_times, const ProgressFn& progress) {
    return CandidateEvaluation(dev, in, ref_times, progress).run();
}

}  // namespace kf::worker
