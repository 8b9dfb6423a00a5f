#pragma once
// The engine's entry point for one process (docs/architecture.md). It holds the evaluators of
// the process's devices, one per device and worker, shared by every search, hand evaluation
// and profile that the CLI or the app starts there: one worker process per GPU, and a hand
// evaluation made while a search runs waits for the search's current evaluation, then runs
// on the same worker (Evaluator::evaluate_stage). It also owns what a run writes: a search
// (run_search) and a hand evaluation (evaluate_by_hand) each open the project's store
// connection on the calling thread, write through it and close it; callers see the project
// through read-only views (kf::ProjectView) only. Profiles (profile) go through it too.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kf/evaluator.h"
#include "kf/evolution.h"
#include "kf/kernelbench_search.h"
#include "kf/store.h"
#include "kf/task.h"

namespace kf {

/** One search, as a caller asks for it (the CLI's `evolve`, the app's Run button). */
struct SearchRequest {
    std::filesystem::path project;  ///< the project folder (or its project.kfproj)
    bool create_project = false;    ///< create the project when the folder holds none
    Task task;
    /** The evaluator of the run's device (its backend decides the run's backend). */
    EvaluatorConfig evaluator;
    /** Further devices of the same backend: the run's evaluations are spread over them too. */
    std::vector<int> more_devices;
    /** The search's options; the engine fills in `more_devices`. */
    EvolveOptions options;
};

/** What a caller of run_search hears while the run goes on, on the run's thread. */
struct SearchCallbacks {
    /** The run exists in the store (created, or taken up again with `resume`). */
    std::function<void(std::int64_t run, bool resumed)> on_run;
    /** Every event, with a read-only view of the run's own connection (what was committed so far). */
    std::function<void(const SearchEvent&, const ProjectView&)> on_event;
    /** Polled between results: true asks the search to stop. */
    std::function<bool()> should_stop;
};

/** A search over KernelBench problems, as a caller asks for it (`kfoundry kernelbench run
    --llm-config`, the app's Start Search on a problem or a problem set). */
struct KernelBenchRequest {
    std::filesystem::path project;  ///< the project folder
    bool create_project = true;     ///< create the project when the folder holds none
    kb::WorkerOptions worker;       ///< the Python worker: its device and interpreter pick the shared one
    kb::ProblemSetRequest problems; ///< the problems, their options and the set's budgets
};

/** What a caller of run_kernelbench hears, on the run's thread. */
struct KernelBenchCallbacks {
    /** A problem's run exists in the store (created, or taken up again). */
    std::function<void(std::int64_t run, const kb::Problem&)> on_run;
    /** Every event of every problem's search, with a read-only view of the run's connection. */
    std::function<void(const SearchEvent&, const ProjectView&)> on_event;
    /** Polled between results: true stops the search (it resumes on the next start). */
    std::function<bool()> should_stop;
    /** Before each problem, what was skipped and why, each problem's outcome. */
    kb::ProblemSetCallbacks set;
};

/** A kernel the user wrote from a candidate, to evaluate and keep in the candidate's run. */
struct HandEvaluation {
    std::filesystem::path project;
    Task task;                 ///< the run's task
    CandidateRecord parent;    ///< the candidate edited (read from the project)
    std::string source;        ///< the edited kernel
    std::string rationale;     ///< why, in the user's words or the app's
    EvaluatorConfig evaluator; ///< the device it runs on (the backend of the parent's run)
    /** The evaluation's options; the parent's integer tunables are added to them. */
    EvalOptions options;
    /** Polled before and after each stage, and while waiting for the device. */
    std::function<bool()> cancelled;
};

/** A candidate to evaluate and then profile with Nsight Compute (`kfoundry profile`). */
struct CandidateProfile {
    Task task;
    Candidate candidate;
    EvaluatorConfig evaluator;
    EvalOptions eval;
    ProfileOptions profile;
    /** Told "evaluating" and "profiling" as each begins (e.g. for a progress line). */
    std::function<void(const std::string& stage)> on_stage;
};

struct HandEvaluationResult {
    bool cancelled = false;        ///< nothing was stored
    std::int64_t candidate = 0;    ///< the stored candidate (author "user")
    Diagnosis diagnosis;
};

class Engine {
public:
    Engine();
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /**
     * The evaluator of cfg's device: the backend, device, worker executable and worker
     * command pick it. Made with `cfg` on first use; later calls get the same one and their
     * other settings (compile threads, cache folder) do not apply. Thread-safe.
     */
    std::shared_ptr<Evaluator> evaluator(const EvaluatorConfig& cfg);
    /** How many evaluators (and so, at most, worker processes) this engine holds. */
    std::size_t evaluators() const;

    /**
     * Runs (or with options.resume takes up) a search, on the calling thread, to its end. The
     * run's life: checks that the task has a reference for the backend, asks every device for
     * its identity (throws kf::Error naming the device that does not answer, before anything
     * is stored), opens the project's store, creates or resumes the run, evolves it, and
     * ends it "done" or "stopped" — or "failed" with the error's text when the search
     * throws, which is then rethrown. Thread-safe: runs on different threads share the
     * evaluators (and queue on a device's worker).
     */
    EvolveOutcome run_search(const SearchRequest& request, const SearchCallbacks& callbacks = {});

    /**
     * The Python worker for KernelBench problems with these options: made on first use, then
     * shared by every later call with the same interpreter, script, device and executor (one
     * worker process per device). Thread-safe; the worker serves one request at a time.
     */
    std::shared_ptr<kb::Evaluator> kernelbench_evaluator(const kb::WorkerOptions& options);

    /**
     * Searches KernelBench problems (kb::search_problems) on the calling thread, to the end:
     * starts or reuses the device's Python worker and asks it for its identity (throws
     * kf::NoDevice saying what is missing, before anything is stored), opens the project's
     * store connection for the run's whole life, and marks a problem's run "failed" with the
     * error's text when its search throws, which is then rethrown.
     */
    kb::ProblemSetOutcome run_kernelbench(const KernelBenchRequest& request, const KernelBenchCallbacks& callbacks = {});

    /**
     * Evaluates a hand-edited kernel on the device's shared evaluator (after the evaluation
     * a search there is running, if any), then stores it as a child of the parent (author
     * "user", the parent's family, island and tunables) with its evaluation, in one
     * transaction. A cancel before the result is stored stores nothing.
     */
    HandEvaluationResult evaluate_by_hand(const HandEvaluation& request);

    /**
     * Evaluates a candidate on the device's shared evaluator, then profiles it there when it
     * passed (Evaluator::profile_into): the diagnosis with its `profile` object. Throws
     * kf::NoDevice when the device does not answer.
     */
    Diagnosis profile(const CandidateProfile& request);

private:
    using Key = std::tuple<Backend, int, std::string, std::string>;
    mutable std::mutex mutex_;
    std::map<Key, std::shared_ptr<Evaluator>> evaluators_;
    std::map<std::string, std::shared_ptr<kb::Evaluator>> kb_evaluators_;
};

}  // namespace kf
