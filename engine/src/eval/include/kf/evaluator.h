#pragma once
/**
 * Evaluating candidates: compile (cached, in parallel), screen the library's symbols, then
 * run correctness, integrity and timing in an isolated worker process that the engine
 * restarts after a hang, crash or sticky device error. Never throws for a bad candidate:
 * every failure becomes a Diagnosis.
 */
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <memory>
#include <optional>
#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/compile.h"
#include "kf/diagnosis.h"
#include "kf/task.h"
#include "kf/tunables.h"
#include "kf/worker_protocol.h"

namespace kf {

/** How to evaluate a candidate: the worker's settings (kf::EvalSettings, sent with each
 *  `evaluate` request), and what stays on the engine's side. */
struct EvalOptions : EvalSettings {
    double timeout_s = 60;        ///< wall-time limit for the worker's part of one evaluation
    Assignment tunables;          ///< applied to the candidate's annotated tunables, if any
    /**
     * Polled (every 50 ms) while the worker runs the candidate; once it returns true the
     * worker is killed (it restarts for the next evaluation) and the evaluation throws
     * kf::Cancelled. Empty: the evaluation runs to its end or its time limit.
     */
    std::function<bool()> cancel;
};

/** Profiling one candidate with Nsight Compute (docs/profiling.md). */
struct ProfileOptions {
    double timeout_s = 120;       ///< wall-time limit for the ncu run; past it ncu and the worker are killed
    int warmup = 2;               ///< unprofiled candidate calls first
    int runs = 1;                 ///< profiled calls (kernel rows are averaged over them)
    int max_launches = 200;       ///< at most this many kernel launches are profiled
    std::uint64_t seed = 1;       ///< inputs of the profiled case
    std::string case_name;        ///< empty: the primary case
    Assignment tunables;          ///< applied to the candidate's annotated tunables, if any
    std::filesystem::path keep_output;  ///< when set, ncu's raw output (its CSV) is written to this file
};

struct WorkerConfig {
    Backend backend = Backend::Host;
    int device = 0;
    std::filesystem::path worker;  ///< kfoundry-worker; default: next to the running executable
    std::filesystem::path log;     ///< the worker's stderr; default: discarded
    /** The whole command line of another worker speaking the same protocol (e.g. the
     *  KernelBench Python worker); when set, `worker`, `backend` and `device` are not used. */
    std::vector<std::string> command;
};

/** Where the measured peaks of the device with this uuid are cached (docs/worker-protocol.md). */
std::filesystem::path device_peaks_file(const std::string& uuid);

/** Where a worker was, from its last progress line: "correctness of case 'odd', trial 2". */
std::string describe_worker_progress(const nlohmann::json& progress);
/** The stage a worker had reached, from its last progress line (Load when unknown). */
Stage worker_progress_stage(const nlohmann::json& progress);

/**
 * One worker process, speaking the JSON-lines protocol (docs/worker-protocol.md). Restarts
 * the process when it dies, hangs or reports a sticky fault. Not thread-safe: one owner.
 */
class WorkerClient {
public:
    explicit WorkerClient(WorkerConfig cfg);
    ~WorkerClient();

    /** Sends a request and waits for its reply (progress lines are passed to on_progress). */
    struct Reply {
        bool ok = false;           ///< a reply arrived
        nlohmann::json body;       ///< the reply when ok
        bool timed_out = false;
        bool crashed = false;      ///< the worker died; `exit` says how
        bool cancelled = false;    ///< `cancelled` turned true first; the worker was killed
        std::string exit;
        nlohmann::json last_progress;  ///< the last progress line before a failure
        /**
         * Where the request ran: what a relay (docs/cluster.md) named in its reply or
         * progress lines, else this host's name for a local worker, else "".
         */
        std::string ran_on(bool local_worker) const;
    };
    Reply request(nlohmann::json req, std::chrono::milliseconds timeout,
                  const std::function<void(const nlohmann::json&)>& on_progress = {},
                  const std::function<bool()>& cancelled = {});
    /** The worker's hello: backend, device info. Starts the worker if needed. */
    nlohmann::json hello();
    /** Stops the worker; the next request starts a fresh one. */
    void restart();
    int restarts() const { return restarts_; }
    const WorkerConfig& config() const { return cfg_; }

private:
    bool ensure_started(std::string& error);
    struct Impl;
    std::unique_ptr<Impl> impl_;
    WorkerConfig cfg_;
    int restarts_ = 0;
};

struct EvaluatorConfig {
    WorkerConfig worker;
    std::filesystem::path cache_dir;  ///< compile cache; default CompileCache::default_dir()
    unsigned compile_threads = 0;     ///< 0: all cores
    std::string arch;                 ///< CUDA arch; default: from the device, else sm_90
};

/** A candidate to evaluate: its source and file name (for diagnostics). */
struct Candidate {
    std::string source;
    std::string name = "candidate";  ///< file name without extension
};

class Evaluator {
public:
    explicit Evaluator(EvaluatorConfig cfg);
    ~Evaluator();

    /** Compile + evaluate one candidate. */
    Diagnosis evaluate(const Task& task, const Candidate& cand, const EvalOptions& opt = {});
    /** Compiles all candidates in parallel, then evaluates them one after another on the worker. */
    std::vector<Diagnosis> evaluate_all(const Task& task, const std::vector<Candidate>& cands,
                                        const EvalOptions& opt = {},
                                        const std::function<void(std::size_t, const Diagnosis&)>& on_done = {});
    /**
     * The evaluation in stages, for pipelines that compile on many threads while one thread
     * owns the worker. prepare() (any thread; call it once before the others) finds the target
     * and compiles the task's reference, throwing when the reference does not compile.
     * compile_stage() is thread-safe; on failure it fills d (compile_error) and returns a
     * result with ok == false. evaluate_stage() uses the worker: call it from one thread at a
     * time, or from several: each evaluate_stage() waits for the device's turn (one
     * evaluation on the worker at a time; kf::Engine shares one Evaluator between a search
     * and hand evaluations), giving up with Cancelled when opt.cancel says so.
     * finish() completes d (device name, advice) whatever happened.
     */
    void prepare(const Task& task);
    CompileResult compile_stage(const Task& task, const Candidate& cand, const EvalOptions& opt, Diagnosis& d);
    /** `device_failure`, when given, is set to why the device (not the candidate) failed:
     *  the worker died before reaching the candidate, or its own context broke; else cleared. */
    void evaluate_stage(const Task& task, const CompileResult& compiled, const EvalOptions& opt, Diagnosis& d,
                        std::string* device_failure = nullptr);
    void finish(Diagnosis& d);
    /** Compile only (cached). */
    CompileResult compile(const Task& task, const Candidate& cand, const Assignment& tunables = {});
    /**
     * Profiles a candidate with Nsight Compute, run over a one-shot worker (never in this
     * process), and returns the diagnosis's `profile` object (docs/diagnosis.md). Compiles
     * through the cache (free after evaluate()). Returns {"available": false, "reason", "code"}
     * at once, without compiling, on the host backend or where ncu is missing or was found
     * to be denied counter access earlier in this Evaluator. Never throws for a bad candidate.
     */
    nlohmann::json profile(const Task& task, const Candidate& cand, const ProfileOptions& opt = {});
    /**
     * profile() folded into an evaluated diagnosis (kf::apply_profile): profile metrics, the
     * refined bound and the profile's advice; a candidate that did not pass is not profiled
     * and gets {"available": false, "code": "not_profiled"} with the roofline-based bound.
     */
    void profile_into(Diagnosis& d, const Task& task, const Candidate& cand, const ProfileOptions& opt = {});
    /** True when profile() can run here (CUDA backend, ncu found, counters not known to be denied). */
    bool profiler_available(std::string* why = nullptr);
    /** Device name, SMs and measured peaks (measured once per device, then cached). */
    nlohmann::json device_info();
    /** The worker's hello (protocol, backend, device), starting the worker if needed, in the
     *  device's turn (after the evaluation running there, if any). Throws kf::Error when the
     *  worker does not start or refuses (e.g. no such device). */
    nlohmann::json hello();
    Backend backend() const;
    WorkerClient& worker();

private:
    using DeviceTurn = std::unique_lock<std::recursive_timed_mutex>;
    /** Waits for the device (see evaluate_stage); throws Cancelled when `cancelled` says so. */
    DeviceTurn device_turn(const std::function<bool()>& cancelled = {});
    /** prepare(), and the compiled reference of `task`, under one lock. */
    CompileResult reference_for(const Task& task);
    /** Sends one evaluate request and fills `d` from whatever comes back. */
    void run_worker(const nlohmann::json& req, const EvalOptions& opt, Diagnosis& d);

    std::optional<CompileRequest> compile_request(const Task& task, const Candidate& cand, const EvalOptions& opt,
                                                  Diagnosis& d);
    bool accept_compiled(const CompileResult& cr, Diagnosis& d);
    void evaluate_compiled(const Task& task, const CompileResult& cand, const CompileResult& ref,
                           const EvalOptions& opt, Diagnosis& d);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/** Exit codes of the kfoundry CLI (docs/cli.md). */
enum ExitCode : int {
    kExitOk = 0,             ///< success; for eval: the candidate is correct
    kExitError = 1,          ///< the command failed (I/O, internal error)
    kExitUsage = 2,          ///< bad command line
    kExitBadTask = 3,        ///< a malformed task manifest
    kExitCandidateFailed = 4,  ///< eval ran; the candidate did not pass (see the diagnosis)
    kExitNoDevice = 5,       ///< the requested backend or device is not available
};

}  // namespace kf
