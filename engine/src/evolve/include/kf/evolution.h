#pragma once
/**
 * A search run on a task, kept in a project: seeds from the task and the pattern library,
 * candidates and evaluations written to the project store as they happen, the search state
 * saved after every batch, so that a run killed at any point resumes where it stopped.
 */
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kf/evaluator.h"
#include "kf/expert_provider.h"
#include "kf/retrieval.h"
#include "kf/search.h"
#include "kf/store.h"

namespace kf {

/** Folder of bundled resources: $KF_RESOURCES_DIR, else <exe>/../../resources, else <exe>/../share/kernel-foundry. */
std::filesystem::path resources_dir();

/** Library patterns for a task and backend from a seed file (resources/library/seed.json). */
std::vector<PatternSource> load_seed_patterns(const std::filesystem::path& seed_json, const Task& task, Backend backend);

/**
 * What the project store keeps of a search child before it is evaluated: its source and
 * content key, expert, family, rationale (with the router's reason when there is one),
 * island, generation, tunables and parents; author "user" for a kernel the user wrote
 * (a hand-written seed, an injected edit), else "engine".
 */
CandidateRecord candidate_record(const Child& child, std::int64_t run_id, const std::string& task);

struct EvolveOptions {
    SearchConfig search;
    EvalOptions eval;
    bool resume = false;  ///< continue the task's latest unfinished run in the project
    std::filesystem::path seed_library;  ///< default: resources_dir()/library/seed.json
    /** Experience library that receives the librarian's evidence; empty: none. */
    std::filesystem::path experience_library;
    /** Experts beside the built-in ones. */
    std::vector<std::shared_ptr<Expert>> experts;
    /**
     * LLM experts (a kf::llm::LlmEnsemble, through the ExpertProvider interface); null: the
     * built-in experts only, and the run's log says so. evolve() adds the provider's experts
     * to the search, attaches it to the run (its calls are cancelled when the run stops),
     * shows it every event (the ensemble feeds its model bandit with every LLM child's gain
     * and asks for an insight, into the experience library as "proposed", when an LLM child
     * beats its parent), stops the run once its budget is spent, and keeps its state in the
     * run state ("llm"), restored on resume so that a resumed run keeps what it has spent.
     * Usage is reported in "llm_usage" events whose data is ExpertProvider::usage(). One
     * provider may serve several runs in turn; its budgets then cover them all.
     */
    std::shared_ptr<ExpertProvider> llm;
    /** Profile new bests and every 10th correct child with Nsight Compute (CUDA, where available). */
    bool profile = true;
    /** Compile threads of the evaluation pipeline; 0: all cores. */
    unsigned compile_threads = 0;
    /** Evaluators of further devices (not owned): the run's evaluations are spread over the
     *  main evaluator's device and these, each child timed with its reference on one device. */
    std::vector<Evaluator*> more_devices;
    /** Why a stop was asked for, when it was not the user (e.g. an LLM budget); may be empty. */
    std::function<std::optional<StopReason>()> stop_reason;
    /** Stop / pause / inject from another thread; may be null. */
    RunControl* control = nullptr;
    /**
     * Once the search has ended (not when stopped), its best correct candidate other than the
     * reference is timed again this many rounds side by side with the reference, on the main
     * evaluator's worker (confirm_best()); 0: not at all.
     */
    int confirm_rounds = 3;
    /** Called once the run exists in the store (created, or taken up again), before its first event. */
    std::function<void(std::int64_t run, bool resumed)> on_run;
};

struct EvolveOutcome {
    std::int64_t run_id = 0;
    SearchResult result;
    bool resumed = false;
};

// The steps of a run, for evolve() and for other drivers of a search over a project (e.g.
// one that runs KernelBench problems): each is one stage of a run's life in the store.

/** The first population: the task's reference and hand-written candidates, its op-class templates, then `patterns`. */
std::vector<Proposal> initial_seeds(const Task& task, Backend backend, const std::vector<PatternSource>& patterns);

/**
 * The library patterns for a run: from the experience library, ranked by their evidence
 * (the seed file fills it on first use), or from the seed file alone when `library` is null.
 */
Retrieval gather_patterns(const Task& task, Backend backend, const std::filesystem::path& seed_file,
                          ExperienceLibrary* library);

/** The run a search writes into. */
/**
 * The librarian's evidence for the experience library: an "evaluated" event of a child with
 * a parent, against that parent, keyed by op class (other events record nothing). Never
 * throws: the library is an aid.
 */
void record_child_evidence(ExperienceLibrary& library, const std::string& op_class, const SearchEvent& e, std::int64_t run);

struct RunStart {
    std::int64_t id = 0;
    bool resumed = false;
    /** The search's configuration: the options', or the resumed run's own (the same search). */
    SearchConfig config;
};

/**
 * Creates the run of a search in the store (state "running", its configuration kept with
 * it), or with `resume` takes up the task's latest unfinished run (throws kf::Error when
 * there is none).
 */
RunStart start_run(ProjectStore& store, const Task& task, Backend backend, const SearchConfig& config,
                   std::size_t patterns, bool resume);

/**
 * Brings a resumed run's search back: its saved state, then what it committed after that
 * state (evaluated children are adopted, unevaluated ones evaluated first), then the seeds
 * that a run killed while recording them had not yet recorded.
 */
void resume_search(Search& search, ProjectStore& store, std::int64_t run, const std::vector<Proposal>& seeds);

/** Ends a run in the store: "stopped" (by the user or a budget outside the search) or "done", with why. */
void finish_run(ProjectStore& store, std::int64_t run, const StopReason& why, bool stopped);

/**
 * Times the run's best correct candidate other than the reference again, `rounds` times side by
 * side with the reference evaluated as a candidate (one correctness trial each, the order
 * swapped every round), on `evaluator`'s worker, so both are over the same timing of the
 * reference. A search keeps the best of its measurements, so its best speedup is inflated by
 * their noise; the median of the rounds' ratios (candidate's speedup over the reference's) is
 * not. Kept in the run's state as "confirmation" (`candidate`, `reference`, `rounds`: each
 * round's two speedups, `speedup`: the median ratio, or `failed`: why there is none, and
 * `failed_by`: `best`, `reference` or `stop`) and
 * logged. Nothing when the run has no correct candidate other than the reference faster than
 * it in the search, or `should_stop` says so before the first round. Returns what it kept.
 */
std::optional<nlohmann::json> confirm_best(const Task& task, Evaluator& evaluator, ProjectStore& store, std::int64_t run,
                                           const EvalOptions& eval, int rounds,
                                           const std::function<void(const SearchEvent&)>& on_event = {},
                                           const std::function<bool()>& should_stop = {});

/** Runs (or resumes) a search on one task. Events go to on_event as they happen. */
EvolveOutcome evolve(const Task& task, Evaluator& evaluator, ProjectStore& store, const EvolveOptions& opt,
                     const std::function<void(const SearchEvent&)>& on_event = {},
                     const std::function<bool()>& should_stop = {});

}  // namespace kf
