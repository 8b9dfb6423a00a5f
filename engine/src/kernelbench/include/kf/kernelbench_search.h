#pragma once
/**
 * The search on KernelBench problems: the same islands, router, budgets, store and resume as
 * a native search (kf/search.h), with LLM experts that read the problem's PyTorch source,
 * its input shapes and its eager and torch.compile baselines, and answer with ModelNew files
 * (whole, or SEARCH/REPLACE edits of the parent) that the Python worker evaluates. What won
 * is distilled into the experience library, keyed by the problem's op class, and retrieved
 * for other problems of that class. See docs/kernelbench.md.
 */
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/kernelbench.h"
#include "kf/library.h"
#include "kf/llm/client.h"
#include "kf/llm/config.h"
#include "kf/search.h"

namespace kf {
class ProjectStore;
namespace llm {
class LlmEnsemble;
}
}  // namespace kf

namespace kf::kb {

/** What the prompts and the library know of a problem. */
struct ProblemFacts {
    std::string key;                  ///< "level1/19_ReLU"
    std::string source;               ///< the problem file
    std::string op_class;             ///< see op_class_of()
    std::vector<std::string> ops;     ///< the PyTorch operations found in it, e.g. "nn.Conv2d", "torch.relu"
    std::string shapes;               ///< the inputs (from the worker when it said, else from get_inputs' source)
    double eager_ms = 0;              ///< 0: unknown
    double compile_ms = 0;            ///< 0: unknown or failed
    std::string compile_error;        ///< why torch.compile failed, when it did
    /** The baselines in one line: "eager 2.0 ms, torch.compile 1.0 ms". */
    std::string baselines_line() const;
};

/**
 * The op class of a problem from the PyTorch operations its source calls: the heaviest of
 * conv, gemm (matmul, linear, bmm, einsum), attention, norm, softmax, pooling, scan,
 * reduction, elementwise; "other" when none is recognised. `ops` gets what was found.
 */
std::string op_class_of(const std::string& source, std::vector<std::string>* ops = nullptr);

/** Module-level constants and get_inputs()'s body, from the source alone. */
std::string shapes_from_source(const std::string& source);

/** Facts of a problem; `baselines` is a worker result's baselines (may be empty), `inputs` its input list. */
ProblemFacts problem_facts(const Problem& p, const nlohmann::json& baselines = {}, const nlohmann::json& inputs = {});

/** Empty when the bridge runs the problem; else the reason (Level 4: Hugging Face models). */
std::string unsupported_reason(const Problem& p);

/** The reference as a ModelNew (its Model under the new name): a parent for experts when nothing else is. */
std::string reference_as_model_new(const std::string& problem_source);

/** Given ModelNew files as the seeds of a search (expert "user", family "kernelbench"). */
std::vector<Proposal> model_new_seeds(const std::vector<std::filesystem::path>& files);

/**
 * The LLM experts for one problem: one per enabled role of the ensemble (named "llm:<role>",
 * with the role's router priors), prompts from resources/prompts/<role>.md with the
 * KernelBench context and rules (resources/prompts/kernelbench/), answers parsed as ModelNew
 * files. A child's rationale starts with "[model] ", as for native tasks.
 */
std::vector<std::shared_ptr<Expert>> llm_experts(const std::shared_ptr<llm::LlmEnsemble>& ens, const ProblemFacts& facts);

/** The user prompt an LLM expert of `role` would send for a parent (for tests and the docs). */
std::string render_prompt(const llm::LlmEnsemble& ens, const std::string& role, const ProblemFacts& facts, const ProposalContext& ctx);

/**
 * A ModelNew from an answer: the longest fenced block (```python or bare) that defines
 * `class ModelNew`, or SEARCH/REPLACE edits of `parent_source`. Throws kf::Error saying why not.
 */
std::string parse_model_new(const std::string& answer, const std::string& parent_source, std::string* form = nullptr);

/**
 * The evaluation queue over the Python worker: each child is written to `files_dir` and
 * compiled when submitted (`jobs` builds at a time, `kb_worker.py --compile`), while the
 * search's thread evaluates those already built, one at a time. `on_evaluated` sees each
 * worker result (baselines, verdicts) on the search's thread.
 */
std::shared_ptr<EvaluationQueue> make_queue(Evaluator& ev, const Problem& p, const EvalOptions& opt, int jobs,
                                            std::filesystem::path files_dir, int capacity,
                                            std::function<void(const Child&, const Result&)> on_evaluated = {});

/** A winning ModelNew as a library pattern (backend cuda, signature "class ModelNew(nn.Module)"). */
Pattern distil_pattern(const ProblemFacts& facts, const std::string& model_new, const std::string& rationale, double speedup,
                       std::int64_t run_id);
/** What a ModelNew does differently from the problem: its kernels' techniques and the operations it replaced. */
std::string technique_of(const ProblemFacts& facts, const std::string& model_new, const std::string& rationale);

/** The library's notes for a problem's op class: insights, then patterns with an excerpt of their ModelNew. */
std::vector<std::string> library_notes(const ExperienceLibrary& library, const ProblemFacts& facts, const std::string& dclass);

/** Limits of one problem's search beside SearchConfig's evaluations and wall time; 0: none. */
struct ProblemBudgets {
    std::int64_t max_tokens = 0;
    double max_cost = 0;
    std::int64_t max_calls = 0;
};

struct ProblemSearchOptions {
    SearchConfig search;  ///< islands, evaluations budget, wall time, seed
    EvalOptions eval;
    int jobs = 1;  ///< parallel compiles
    /** The LLM configuration; experts are built per problem with budgets from `budgets`. Null: given candidates and the tuner. */
    std::shared_ptr<const llm::LlmConfig> llm;
    std::filesystem::path prompts_dir;  ///< default: resources/prompts
    ProblemBudgets budgets;
    std::filesystem::path experience_library;  ///< empty: none
    std::vector<std::filesystem::path> candidates;  ///< given ModelNew files (seeds)
    nlohmann::json run_config = nlohmann::json::object();  ///< kept with a new run
    std::function<bool()> should_stop;
    std::function<void(const SearchEvent&)> on_event;
    /** Test hook: LLM providers by name, replacing the configured ones. */
    std::map<std::string, std::shared_ptr<llm::Provider>> providers;
};

struct ProblemSearchOutcome {
    std::int64_t run_id = 0;
    bool resumed = false;
    SearchResult result;
    nlohmann::json llm_usage;  ///< kf::llm::Accounting::to_json() of this problem (resumed runs: all of it)
    std::string pattern;       ///< the library pattern written from the winner, if any
};

/**
 * Runs (or, when the project holds an unfinished run of the problem, resumes) the search on
 * one problem. Without given candidates and with LLM experts, the first generation is asked
 * of the experts (one child per island, from the problem's source); the reference as a
 * ModelNew is the parent of last resort.
 */
ProblemSearchOutcome search_problem(const Problem& p, Evaluator& ev, ProjectStore& store, const ProblemSearchOptions& opt);

/** Budgets over all the problems one command searches (a level), beside each problem's own; 0: none. */
struct LevelBudgets {
    std::int64_t evaluations = 0, tokens = 0, calls = 0;
    double cost = 0;
    double time_s = 0;  ///< wall time of the whole command
};

/** What searches spent: evaluations and the LLM's calls, tokens (input and output) and cost. */
struct LevelSpent {
    std::int64_t evaluations = 0, tokens = 0, calls = 0;
    double cost = 0;
};

/** `level` with the LLM configuration's own budgets (tokens, cost, calls) holding over it too. */
LevelBudgets with_llm_budgets(LevelBudgets level, const llm::LlmConfig& cfg);

/**
 * The problems (their keys) whose latest finished KernelBench run in the project was judged
 * with `tolerance`: what a command over several problems skips unless told otherwise.
 */
std::set<std::string> finished_problems(ProjectStore& store, const std::string& tolerance);

/** What the latest search runs of `problems` in the project, other than the problem `except`'s, spent. */
LevelSpent spent_by_others(ProjectStore& store, const std::vector<Problem>& problems, const std::string& except);

/**
 * One problem's share of the level's budgets: what the others spent is taken from each
 * budget and the rest divided by the problems still to run (`left`, this one included), so
 * what one problem leaves unused goes to the next. Each share tightens the limit `o` already
 * has (a per-problem limit caps it); the wall time's rest is shared the same way. Returns the
 * name of a level budget that is spent ("evaluations", "tokens", "cost", "calls", "time"),
 * when the problem must not run, or an empty string.
 */
std::string share_level_budgets(const LevelBudgets& level, const LevelSpent& others, double elapsed_s, std::int64_t left,
                                ProblemSearchOptions& o);

/** The islands' experts of a KernelBench search with LLM experts: four islands, each with two
    LLM roles and the tuner (memory and fusion, compute and warp, fusion and occupancy, warp and memory). */
inline const std::vector<std::vector<std::string>> kLlmIslandExperts = {{"llm:memory", "llm:fusion", "tuner"},
                                                                        {"llm:compute", "llm:warp", "tuner"},
                                                                        {"llm:fusion", "llm:occupancy", "tuner"},
                                                                        {"llm:warp", "llm:memory", "tuner"}};

/** One command's search over KernelBench problems: a problem, or a set searched one after the other. */
struct ProblemSetRequest {
    std::vector<Problem> problems;
    /** One problem asked for by itself: one the bridge cannot run throws kf::Error with the
     *  reason, where a set skips it and says why. */
    bool single = false;
    /** Skip problems whose latest run in the project finished, judged with the same tolerance. */
    bool skip_finished = false;
    /** Every problem's options (search, evaluation, experts, library, should_stop, on_event);
     *  a problem's share of `level` tightens its budgets. */
    ProblemSearchOptions base;
    LevelBudgets level;
    /** Given ModelNew files, found per problem (find_candidates); empty: none. */
    std::filesystem::path candidates_dir;
    /** Kept with each new run beside what the driver adds (the problem's level, id, name and
     *  file, budget, seed, trials, timed calls, tolerance, baselines). */
    nlohmann::json run_config = nlohmann::json::object();
};

/** Why a problem of a set was not searched. */
struct ProblemSkip {
    enum class Why {
        Unsupported,  ///< the bridge cannot run it; `detail` is unsupported_reason's text
        Finished,     ///< a search of it in this project reached the tolerance (skip_finished)
        BudgetSpent,  ///< `detail` names the set's budget that is spent (share_level_budgets)
    };
    Why why = Why::Unsupported;
    std::string detail;
    /** In words, for a log: "already finished", "the set's tokens budget is spent"... */
    std::string message() const;
};

struct ProblemSetCallbacks {
    /** Before a problem's search, with its options (its budgets' share included). */
    std::function<void(std::size_t index, std::size_t total, const Problem&, const ProblemSearchOptions&)> on_problem;
    std::function<void(const Problem&, const ProblemSkip&)> on_skipped;
    std::function<void(const Problem&, const ProblemSearchOutcome&)> on_searched;
};

struct ProblemSetOutcome {
    std::vector<std::pair<Problem, ProblemSearchOutcome>> searched;
    std::vector<std::pair<std::string, ProblemSkip>> skipped;  ///< problem key, why
    bool stopped = false;  ///< base.should_stop said so before every problem was searched
};

/**
 * Searches the problems one after the other (search_problem), skipping those the bridge
 * cannot run, those finished before (skip_finished) and those for which the set's budgets
 * are spent, and sharing `level` out among the others as they run (share_level_budgets).
 * The run driver of `kfoundry kernelbench run` and of the app.
 */
ProblemSetOutcome search_problems(const ProblemSetRequest& request, Evaluator& ev, ProjectStore& store,
                                  const ProblemSetCallbacks& callbacks = {});

/** A ModelNew edited by hand from a candidate of a KernelBench run (the app's Evaluate). */
struct HandEvaluation {
    std::filesystem::path project;
    std::int64_t parent = 0;  ///< the candidate edited
    std::string source;       ///< the edited ModelNew file
    std::string rationale;
    WorkerOptions worker;     ///< the Python worker (its device: the run's, else this one's)
    /** Checked before the evaluation and before storing: a cancelled edit stores nothing. */
    std::function<bool()> cancelled;
    /** The worker for these options (its device the run's): a shared one, e.g. the engine's
     *  (kf::Engine::kernelbench_evaluator); empty: a worker of its own for this evaluation. */
    std::function<std::shared_ptr<Evaluator>(const WorkerOptions&)> evaluator_for;
};

struct HandEvaluationResult {
    bool cancelled = false;
    std::int64_t candidate = 0;  ///< the stored child; 0 when cancelled
    Diagnosis diagnosis;
};

/**
 * Evaluates an edited ModelNew with the Python worker, on the problem and with the evaluation
 * options (trials, timed calls, tolerance, baselines) its run was searched with, and stores it
 * as the user's child of the candidate it was edited from: the candidate, its evaluation and
 * its correctness verdict in one transaction, its file beside the run's other candidates.
 * Throws kf::Error when the candidate, its run or the run's problem cannot be found.
 */
HandEvaluationResult evaluate_by_hand(const HandEvaluation& request);

}  // namespace kf::kb
