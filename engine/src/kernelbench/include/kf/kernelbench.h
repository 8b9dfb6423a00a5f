#pragma once
/**
 * The KernelBench bridge: KernelBench problem files (a PyTorch `Model` with `get_inputs` and
 * `get_init_inputs`) as tasks, `ModelNew` files as candidates, evaluated by the Python worker
 * in resources/kernelbench (docs/kernelbench-worker.md) over the same JSON-lines protocol and
 * diagnosis record as the native worker, and KernelBench's metrics (correctness, fast_p,
 * geometric-mean speedup) computed from the results. See docs/kernelbench.md.
 */
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"
#include "kf/error.h"
#include "kf/exec.h"

namespace kf {
class ProjectStore;
class ProjectView;
}

namespace kf::kb {

/** One problem file of a KernelBench checkout, e.g. level1/19_ReLU.py. */
struct Problem {
    int level = 0;
    int id = 0;
    std::string name;  ///< "ReLU"
    std::filesystem::path file;
    /** "level1/19_ReLU": the task name used in projects and reports. */
    std::string key() const;
};

/** The folder of a level: KB/KernelBench/levelN or KB/levelN; throws kf::Error when neither exists. */
std::filesystem::path level_dir(const std::filesystem::path& kb_root, int level);
/** The problems of a level sorted by id; files not named `<id>_<name>.py` are ignored. */
std::vector<Problem> list_problems(const std::filesystem::path& kb_root, int level);
/** One problem by id; throws kf::Error naming the level folder when it is missing. */
Problem find_problem(const std::filesystem::path& kb_root, int level, int id);
/** "1-20,25,30-32" to sorted unique ids; throws kf::Error on anything else. */
std::vector<int> parse_id_list(const std::string& spec);
/**
 * Candidates for a problem in a folder, in any of these layouts:
 * DIR/levelL/ID_*.py, DIR/ID_*.py, DIR/level_L_problem_ID_sample_S_kernel.py.
 */
std::vector<std::filesystem::path> find_candidates(const std::filesystem::path& dir, const Problem& p);

/** How to start the Python worker. */
struct WorkerOptions {
    std::string python = "python3";       ///< or $KF_PYTHON
    std::filesystem::path script;         ///< default: resources/kernelbench/kb_worker.py
    std::string device = "0";  ///< a CUDA ordinal, or "cpu" (the worker's testing mode, no GPU)
    std::filesystem::path log;            ///< the worker's stderr; default: discarded
    std::filesystem::path build_root;     ///< compiled extensions, one folder per source hash
    /** Where the worker runs: here, or as a Slurm job (docs/cluster.md); compiles stay here. */
    ExecutorOptions executor;
    std::vector<std::string> command() const;
};

/**
 * Named tolerance policies (docs/kernelbench-worker.md): `current` is KernelBench today (fp32
 * atol = rtol = 1e-4), `v0` the 1e-2 of KernelBench v0/v0.1 that most published results used,
 * `strict` today's tolerance and the fp64 rule together. With `current` and `v0` an output no
 * further from an fp64 run of the reference than the fp32 reference is (within a small factor)
 * is correct too.
 */
inline constexpr const char* kTolerancePolicies[] = {"current", "v0", "strict"};
/** One line saying what a policy means; "" for an unknown name. */
std::string describe_tolerance(const std::string& policy);

/** Evaluation options (the worker's defaults are KernelBench's: 5 trials, 100 timed calls). */
struct EvalOptions {
    int trials = 5;
    bool time = true;
    int warmup = 3;
    int reps = 100;
    int rotate_buffers = 3;
    std::uint64_t seed = 42;
    std::string tolerance = "current";  ///< a kTolerancePolicies name
    std::optional<double> atol, rtol;  ///< override the policy's fp32 tolerance
    std::vector<std::string> baselines = {"eager", "compile"};
    double timeout_s = 900;            ///< the whole request, baselines and compile included
    double compile_timeout_s = 600;    ///< one candidate's compile (`--compile` mode)
    nlohmann::json to_json() const;
};

/** What the worker returned for one problem (and candidate, when given). */
struct Result {
    Diagnosis diagnosis;
    nlohmann::json baselines = nlohmann::json::object();  ///< {"eager": {median_ms...}, "compile": {...} | {"error"}}
    nlohmann::json means = nlohmann::json::object();      ///< KernelBench-style mean ms: candidate, eager, compile
    nlohmann::json raw;                                    ///< the worker's whole result
    double eager_ms() const;    ///< median; 0 when unknown
    double compile_ms() const;  ///< median; 0 when unknown or failed
    /**
     * How correctness was judged: `tolerance` (the policy's name), `passed_by` ("tolerance",
     * "fp64" or ""), `fp64_available`, `candidate_error_fp64` and `reference_error_fp64` (the
     * largest absolute errors of the candidate and of the fp32 reference against an fp64 run
     * of the reference). An empty object when the worker gave no correctness record.
     */
    nlohmann::json verdict() const;
};

/**
 * One Python worker process (one GPU) plus parallel one-shot compiles. Threads may share it:
 * its worker serves one request (hello, evaluate) at a time, the others wait their turn.
 */
class Evaluator {
public:
    explicit Evaluator(WorkerOptions opt);
    ~Evaluator();
    /** Starts the worker and checks PyTorch and CUDA; throws kf::Error saying what is missing. */
    nlohmann::json hello();
    /** The extension build folder of a candidate source (one per content hash). */
    std::filesystem::path build_dir_for(const std::string& source) const;
    /**
     * Compiles candidate files in parallel (`kb_worker.py --compile`, `jobs` at a time), each into
     * its build folder, so that evaluate() finds them built. One CompileInfo per file, in order.
     */
    std::vector<CompileInfo> compile_all(const std::vector<std::filesystem::path>& candidates, int jobs,
                                         double timeout_s);
    /**
     * Evaluates `candidate` against the problem (or, with none, times the baselines only). A
     * worker that hangs, crashes or cannot start gives a diagnosis (timeout, runtime_error),
     * never an exception.
     */
    Result evaluate(const Problem& p, const std::optional<std::filesystem::path>& candidate, const EvalOptions& opt,
                    const std::function<void(const nlohmann::json&)>& on_progress = {});
    const WorkerOptions& options() const { return opt_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    WorkerOptions opt_;
};

/** Speedup thresholds of KernelBench's fast_p. */
inline constexpr double kFastP[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};

/** One problem's line in a report. */
struct ProblemOutcome {
    int level = 0, id = 0;
    std::string name;
    std::string status = "missing";  ///< a kf::Status name, or "missing" (no candidate evaluated)
    bool correct = false;
    double candidate_ms = 0, eager_ms = 0, compile_ms = 0;  ///< medians; 0 when unknown
    std::int64_t candidate_id = 0;  ///< in the project store
    int evaluations = 0;
    std::string message;
    std::string tolerance;   ///< the policy the problem was run with; "" when not recorded
    std::string passed_by;   ///< "tolerance" or "fp64" for a correct kernel
    double error_fp64 = -1;            ///< the kernel's max abs error against fp64; -1 unknown
    double reference_error_fp64 = -1;  ///< the fp32 reference's max abs error against fp64; -1 unknown
    double speedup_eager() const;    ///< 0 unless correct and both times known
    double speedup_compile() const;  ///< 0 unless correct and both times known
};

/** KernelBench's metrics over a set of problems; a missing problem counts as a failure. */
struct Report {
    int problems = 0, attempted = 0, correct = 0;
    double correctness_rate = 0;
    std::vector<std::pair<double, double>> fast_eager, fast_compile;  ///< (p, share of all problems)
    double geomean_eager = 0, geomean_compile = 0;  ///< over correct problems with the baseline
    int without_compile_baseline = 0;
    /** The tolerance policy of the rows ("v0"), "mixed: current, v0", or "unrecorded". */
    std::string tolerance;
    std::vector<ProblemOutcome> rows;
};

Report make_report(std::vector<ProblemOutcome> rows);
nlohmann::json to_json(const Report& r);
std::string to_markdown(const Report& r);

/** The outcome of every KernelBench problem run in a project (its latest run per problem). */
std::vector<ProblemOutcome> outcomes_from_store(ProjectStore& store);
/** The same, read through a read-only view (the app's). */
std::vector<ProblemOutcome> outcomes_from_view(const ProjectView& view);

}  // namespace kf::kb
