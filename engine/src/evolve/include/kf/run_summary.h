#pragma once
/**
 * What a finished search run achieved, read back from the project store: whether anything
 * beat the task's reference, how fast the best is, how far it stands from the device's
 * measured bound, and how many evaluations it took to get within 10% of it. The CLI's
 * summary line, `evolve --json` and the from-scratch benchmark all read this.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/store.h"

namespace kf {

/** How a run ended, as far as the user is concerned. */
enum class RunOutcome {
    Improved,        ///< a candidate other than the reference is correct and faster by the margin
    NoImprovement,   ///< correct candidates exist, but none beats the reference by the margin
    NoCorrect,       ///< not a single correct candidate (not even the reference)
};
std::string_view to_string(RunOutcome o);

/** Speedup a candidate needs over the reference to count as an improvement (timing noise). */
inline constexpr double kDefaultMinGain = 1.02;

struct RunSummary {
    std::int64_t run_id = 0;
    std::string task;
    RunOutcome outcome = RunOutcome::NoCorrect;
    int evaluations = 0;
    int correct = 0;
    double min_gain = kDefaultMinGain;
    /** The best correct candidate (the reference itself when nothing beat it). */
    std::optional<std::int64_t> best_id;
    double best_speedup = 0;
    std::string best_family, best_expert;
    bool best_is_reference = false;
    /**
     * No improvement, with the reference itself the best (its speedup is its own timing
     * noise): the fastest other correct candidate, the one short of `min_gain`; none when no
     * other was correct.
     */
    std::optional<std::int64_t> other_id;
    double other_speedup = 0;
    std::string other_family;
    /**
     * The best's roofline (docs/diagnosis.md): its bound class and the fraction of the
     * device's measured peak for that bound (copy bandwidth for memory, FMA rate for compute;
     * the larger of the two otherwise). Negative when the diagnosis has no roofline.
     */
    std::string bound;
    double bound_fraction = -1;
    double bandwidth_fraction = -1, compute_fraction = -1;
    double achieved_gbps = 0, peak_gbps = 0, achieved_gflops = 0, peak_gflops = 0;
    /** The reference's own fraction of that bound, for comparison; negative when unknown. */
    double reference_bound_fraction = -1;
    /**
     * The reference's own evaluation as a candidate: its speedup over the judge's timing of the
     * same code, 1 but for timing noise. Where it is far from 1, every speedup of the run carries
     * noise of that size. Negative when the reference was not evaluated correct.
     */
    double reference_self_speedup = -1;
    /**
     * The best, timed again side by side with the reference once the search ended
     * (kf::confirm_best): the median ratio of its speedup over the reference's, and the rounds;
     * negative when it was not (or could not be) timed again. Where there is one, the run
     * improved only if it too reaches min_gain.
     */
    double confirmed_speedup = -1;
    int confirmed_rounds = 0;
    /** Why the best could not be timed again (e.g. it came out incorrect); empty otherwise. */
    std::string confirmation_failed;
    /** The run's confirmation as stored (null when none). */
    nlohmann::json confirmation;
    /** Evaluations (in order, seeds included) until one reached 90% of the best speedup; 0: none. */
    int evals_to_90pct = 0;
    /** The generic expert's kernels the run evaluated (kf/generic.h), one entry per family. */
    struct GenericTried {
        std::string family;
        int evaluations = 0, correct = 0;
        double best_speedup = 0;   ///< of the correct ones (0: none)
        std::string last_status;   ///< of the last evaluation, when none was correct
    };
    std::vector<GenericTried> generic;

    nlohmann::json to_json() const;
    /** One line for the terminal, e.g. "improved: 1.63x the reference (...), at 71% of the measured copy bandwidth". */
    std::string line() const;
};

/** Reads the run's candidates and evaluations; throws StoreError for an unknown run. */
RunSummary summarize_run(const ProjectView& project, std::int64_t run, double min_gain = kDefaultMinGain);
RunSummary summarize_run(ProjectStore& store, std::int64_t run, double min_gain = kDefaultMinGain);

}  // namespace kf
