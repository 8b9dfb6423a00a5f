#pragma once
/**
 * Experts that come with a life of their own, beside the built-in ones: a provider (the LLM
 * ensemble, kf::llm::LlmEnsemble) owns them, their budgets and what they learn. kf::evolve
 * adds its experts to the search, ties it to the run, shows it every event, stops the run
 * when its budget is spent and keeps its state with the run's. The evolve folder owns this
 * interface, so that it needs nothing from the folder that implements it.
 */
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/experts.h"
#include "kf/store.h"
#include "kf/vocabulary.h"

namespace kf {

class ExperienceLibrary;
class RunControl;
struct SearchEvent;

/** What a provider may read of the run while it observes it (on the engine thread). */
struct ProviderRun {
    const Task* task = nullptr;
    std::int64_t run_id = 0;
    /** The experience library of the run; null when it has none. */
    ExperienceLibrary* library = nullptr;
    /** A candidate of the project by id (from the run's store). */
    std::function<std::optional<CandidateRecord>(std::int64_t id)> candidate;
};

class ExpertProvider {
public:
    virtual ~ExpertProvider() = default;

    /** The experts to add to the search. */
    virtual std::vector<std::shared_ptr<Expert>> experts() = 0;
    /** One line for the run's log, e.g. "LLM experts: 7 roles (...), models ...". */
    virtual std::string summary() const = 0;
    /**
     * Ties the provider to a run: its task, its controls, and `stopping`, true once the run
     * stops (calls in flight are then cancelled). attach(nullptr, ...) unties it.
     */
    virtual void attach(const Task* task, Backend backend, RunControl* control, std::function<bool()> stopping) = 0;
    /** A budget of the provider's own that is spent (the run then stops); nullopt while none is. */
    virtual std::optional<StopReason> spent_budget() const = 0;
    /** Every event of the run, after the store has it (e.g. to learn from a child's gain). */
    virtual void observe(const SearchEvent& event, const ProviderRun& run) = 0;

    /** What is kept with the run (usage, learnt statistics); restore() adds a saved record. */
    virtual nlohmann::json state() const = 0;
    virtual void restore(const nlohmann::json& saved) = 0;
    /** The usage figures reported in "llm_usage" events. */
    virtual nlohmann::json usage() const = 0;
    /** Changes whenever the usage does (so that usage is reported only when it changed). */
    virtual std::int64_t usage_serial() const = 0;
};

}  // namespace kf
