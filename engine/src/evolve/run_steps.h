#pragma once
// The parts of a run that evolve() wires into the search's hooks: the provider of extra
// experts tied to the run, the librarian's evidence and notes, and the checkpoints.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kf/expert_provider.h"
#include "kf/library.h"
#include "kf/retrieval.h"
#include "kf/search.h"
#include "kf/store.h"

namespace kf::evolve_steps {

using EventSink = std::function<void(const SearchEvent&)>;

/** Ties an expert provider to one run, and unties it however the run ends. */
class ProviderBinding {
public:
    ProviderBinding(ExpertProvider* provider, const Task& task, Backend backend, RunControl* control);
    ~ProviderBinding();
    ProviderBinding(const ProviderBinding&) = delete;
    ProviderBinding& operator=(const ProviderBinding&) = delete;

    ExpertProvider* get() const { return provider_; }
    /** The run is stopping: the provider's calls in flight are cancelled. */
    void stopping() { stopping_ = true; }
    /** The provider's budget that is spent, if any. */
    std::optional<StopReason> spent_budget() const;

private:
    ExpertProvider* provider_;
    std::atomic<bool> stopping_{false};
};

/**
 * The librarian's side of a run: evidence for the experience library (every child against
 * its parent, every use of a library pattern) and what the library knows, as notes for
 * the experts. Without a library it records nothing and has no notes.
 */
class Librarian {
public:
    Librarian(ExperienceLibrary* library, const Task& task, std::int64_t run, const Retrieval& patterns, EventSink on_event);

    /** An "evaluated" event: the child against its parent. */
    void child_evaluated(const SearchEvent& e);
    /** A finished child built from a library pattern: a use, a success, or a broken template. */
    void pattern_used(const Child& c, const Diagnosis& d);
    /** Insights for the task's op class and a diagnosis class, and the best patterns, as short lines. */
    std::vector<std::string> notes(DiagnosisClass dclass) const;

private:
    ExperienceLibrary* library_;
    const Task& task_;
    std::int64_t run_;
    const Retrieval& patterns_;
    EventSink on_event_;
};

/**
 * Keeps a run resumable: the search state after every result, and the provider's state
 * (with "llm_usage" events when the usage changed), so that a kill loses at most the
 * children in flight.
 */
class Checkpoints {
public:
    Checkpoints(ProjectStore& store, std::int64_t run, ExpertProvider* provider, EventSink on_event);
    void search(const Search& s);
    /** Saves the provider's state; reports its usage when it changed, or always with `force`. */
    void provider(bool force);

private:
    ProjectStore& store_;
    std::int64_t run_;
    ExpertProvider* provider_;
    EventSink on_event_;
    std::int64_t reported_ = -1;
};

/** A line for the run's log: stored as an event of `kind` and sent to `on_event` as EventKind::Log. */
void log_line(ProjectStore& store, std::int64_t run, EventKind kind, const std::string& line,
              const EventSink& on_event, const nlohmann::json& data = {});

}  // namespace kf::evolve_steps
