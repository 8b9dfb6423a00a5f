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
#include "kf/search.h"
#include "kf/store.h"

namespace kf {

namespace llm {
class LlmEnsemble;
}

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
     * LLM experts (kf::llm::LlmEnsemble::create); null: the built-in experts only, and the
     * run's log says so. evolve() adds the ensemble's experts to the search, binds it to the
     * task, cancels its calls when the run stops, feeds its model bandit with every LLM
     * child's gain, asks it for an insight (into the experience library, as "proposed") when
     * an LLM child beats its parent, stops the run once an LLM budget is spent, and keeps its
     * accounting and bandit statistics in the run state ("llm"), restored on resume so that a
     * resumed run keeps what it has spent. Usage is reported in "llm_usage" events whose
     * data is kf::llm::Accounting::to_json(). One ensemble may serve several runs in turn;
     * its budgets then cover them all.
     */
    std::shared_ptr<llm::LlmEnsemble> llm;
    /** Profile new bests and every 10th correct child with Nsight Compute (CUDA, where available). */
    bool profile = true;
    /** Compile threads of the evaluation pipeline; 0: all cores. */
    unsigned compile_threads = 0;
    /** Why a stop was asked for, when it was not the user (e.g. an LLM budget); may be empty. */
    std::function<std::optional<StopReason>()> stop_reason;
    /** Stop / pause / inject from another thread; may be null. */
    RunControl* control = nullptr;
};

struct EvolveOutcome {
    std::int64_t run_id = 0;
    SearchResult result;
    bool resumed = false;
};

/** Runs (or resumes) a search on one task. Events go to on_event as they happen. */
EvolveOutcome evolve(const Task& task, Evaluator& evaluator, ProjectStore& store, const EvolveOptions& opt,
                     const std::function<void(const SearchEvent&)>& on_event = {},
                     const std::function<bool()>& should_stop = {});

}  // namespace kf
