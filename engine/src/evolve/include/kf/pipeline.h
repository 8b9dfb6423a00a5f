#pragma once
/**
 * The asynchronous evaluation queue of a search: children compile on a pool of threads (all
 * cores by default) while one thread per device owns that device's worker and evaluates
 * compiled children as soon as they are ready, so no device is idle while work waits. Each
 * child is timed with its reference on the device that evaluates it. A device whose worker
 * cannot be used any more (it does not start, or reports a device error outside the
 * candidate) is taken out and the child goes to another device. On the host backend compiles
 * and evaluations share the same cores, so a timed evaluation runs alone (compiles, and other
 * evaluations, pause meanwhile) to keep timings honest.
 */
#include <memory>
#include <vector>

#include "kf/evaluator.h"
#include "kf/search.h"

namespace kf {

struct PipelineConfig {
    unsigned compile_threads = 0;  ///< 0: all cores
    /** Children kept in flight beyond the compile threads (ready for the device); default 2. */
    int device_queue = 2;
    /** Evaluations run alone, compiles paused (default: on for the host backend). */
    bool exclusive_evaluation = false;
    /** Evaluators of further devices (not owned; they outlive the queue): evaluations are
     *  spread over the main evaluator's device and these. */
    std::vector<Evaluator*> more_devices;
    /**
     * Profiling policy (Nsight Compute, CUDA backend, where available): a correct child that
     * is the fastest so far, and every `profile_every`-th correct child (0: never), while the
     * time spent profiling stays under `profile_max_share` of the run's wall time. Profiles run
     * on the device's thread, between evaluations, so they never overlap a timed run.
     */
    bool profile = false;
    bool profile_new_best = true;
    int profile_every = 10;
    double profile_max_share = 0.15;
    ProfileOptions profile_options;
};

class PipelinedEvaluator : public EvaluationQueue {
public:
    /** `evaluator`, `task` and `opt` must outlive the queue. prepare(task) is called here. */
    PipelinedEvaluator(Evaluator& evaluator, const Task& task, const EvalOptions& opt, PipelineConfig cfg = {});
    ~PipelinedEvaluator() override;

    int capacity() const override;
    void submit(const Child& c) override;
    std::optional<std::pair<Child, Diagnosis>> next(std::chrono::milliseconds wait) override;
    std::vector<Child> cancel_waiting() override;
    /**
     * device_busy_s (evaluating), device_starved_s (idle while children were compiling),
     * device_idle_s (idle for any reason, e.g. nothing proposed yet),
     * compile_busy_s (summed over threads), wall_s, evaluations, compiles, profiles,
     * profile_s (time spent profiling), profile_skipped (due but over the time share), and
     * "devices": per device {device, evaluations, busy_s, per_minute, out, reason}.
     */
    nlohmann::json stats() const override;
    bool notify_results(std::shared_ptr<Wakeup> wakeup) override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kf
