#pragma once
/**
 * The engine's fixed words as types: the status of an evaluation, the class of a diagnosis
 * the router reads, a run's state, the kind of a run's event, and why a search stopped. Each
 * has one spelling, written by to_string() and read by the matching *_from_string(), which is
 * what the project store, the events and the JSON of older projects hold; the app translates
 * the values, never the text.
 */
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kf {

/** Outcome of one evaluation, in the order a candidate can fail. */
enum class Status { Ok, CompileError, LoadError, RuntimeError, Timeout, Incorrect, IntegrityViolation };
inline constexpr std::array<Status, 7> kStatuses = {Status::Ok,      Status::CompileError, Status::LoadError,
                                                    Status::RuntimeError, Status::Timeout, Status::Incorrect,
                                                    Status::IntegrityViolation};
/** ok, compile_error, load_error, runtime_error, timeout, incorrect, integrity_violation. */
std::string_view to_string(Status s);
/** Throws kf::Error for a word that is no status. */
Status status_from_string(std::string_view s);
std::optional<Status> parse_status(std::string_view s);

/**
 * The class of a diagnosis for routing: the failure of a failed candidate (its status), else
 * what bounds a correct one (memory, compute, latency, occupancy, spills).
 */
enum class DiagnosisClass {
    CompileError,
    LoadError,
    RuntimeError,
    Timeout,
    Incorrect,
    IntegrityViolation,
    Memory,
    Compute,
    Latency,
    Occupancy,
    Spills,
};
inline constexpr std::array<DiagnosisClass, 11> kDiagnosisClasses = {
    DiagnosisClass::CompileError, DiagnosisClass::LoadError, DiagnosisClass::RuntimeError, DiagnosisClass::Timeout,
    DiagnosisClass::Incorrect,    DiagnosisClass::IntegrityViolation, DiagnosisClass::Memory, DiagnosisClass::Compute,
    DiagnosisClass::Latency,      DiagnosisClass::Occupancy, DiagnosisClass::Spills};
std::string_view to_string(DiagnosisClass c);
/** Throws kf::Error for a word that is no class. */
DiagnosisClass diagnosis_class_from_string(std::string_view s);
std::optional<DiagnosisClass> parse_diagnosis_class(std::string_view s);
/** The classes of failed candidates (compile_error ... integrity_violation). */
bool is_failure(DiagnosisClass c);
/** The classes of correct candidates: what bounds them (memory ... spills). */
inline bool is_bound(DiagnosisClass c) { return !is_failure(c); }
/** The class of a failed candidate's status; nullopt for Status::Ok. */
std::optional<DiagnosisClass> failure_class(Status s);
/** The status a failure class stands for; Status::Ok for a bound class. */
Status status_of(DiagnosisClass c);

/** Where a search run is in its life, as the project store keeps it. */
enum class RunState { Running, Paused, Done, Failed, Stopped };
inline constexpr std::array<RunState, 5> kRunStates = {RunState::Running, RunState::Paused, RunState::Done,
                                                       RunState::Failed, RunState::Stopped};
/** running, paused, done, failed, stopped. */
std::string_view to_string(RunState s);
std::optional<RunState> parse_run_state(std::string_view s);

/**
 * What a run's event says happened: the kind of a kf::SearchEvent and of a stored event. The
 * search sends seeded ... llm_usage; the run's log adds lines of its own kinds (confirmation,
 * retrieval, templates, generic), which the store keeps and the caller hears as Log.
 */
enum class EventKind {
    Seeded,     ///< a seed evaluated
    Proposed,   ///< a child handed to the evaluator (not stored)
    Evaluated,  ///< a child evaluated
    Improved,   ///< a new best of its island
    Migrated,   ///< a member copied to another island
    Refused,    ///< an expert brought no child
    Stopped,    ///< the search ended (SearchEvent::stop says why)
    Paused,
    Resumed,
    Log,           ///< a line for the run's log
    LlmUsage,      ///< the LLM experts' calls, tokens and cost so far
    Confirmation,  ///< log: the best timed again beside the reference
    Retrieval,     ///< log: the library's patterns retrieved for the task
    Templates,     ///< log: the templates that apply to the task
    Generic,       ///< log: the generic kernels from the reference's loops
};
inline constexpr std::array<EventKind, 15> kEventKinds = {
    EventKind::Seeded,   EventKind::Proposed,     EventKind::Evaluated, EventKind::Improved,  EventKind::Migrated,
    EventKind::Refused,  EventKind::Stopped,      EventKind::Paused,    EventKind::Resumed,   EventKind::Log,
    EventKind::LlmUsage, EventKind::Confirmation, EventKind::Retrieval, EventKind::Templates, EventKind::Generic};
/** seeded, proposed, evaluated, improved, migrated, refused, stopped, paused, resumed, log, llm_usage,
 *  confirmation, retrieval, templates, generic. */
std::string_view to_string(EventKind k);
/** nullopt for a word this build does not know; the store reads such an event as EventKind::Log. */
std::optional<EventKind> parse_event_kind(std::string_view s);

/** Why a search stopped. */
enum class StopKind {
    Requested,         ///< the user (or a signal) asked for it
    EvaluationBudget,  ///< limit: the budget in evaluations
    TimeLimit,         ///< limit: seconds
    Stagnation,        ///< used: rounds without a new best
    Exhausted,         ///< no expert can propose a new child on any island
    LlmCalls,          ///< used, limit: calls
    LlmTokens,         ///< used, limit: tokens
    LlmCost,           ///< used, limit: cost in the configured currency
    Other,             ///< text: a reason this build has no word for (read from a store)
};

/** A stop reason: its kind and the figures that go with it. */
struct StopReason {
    StopKind kind = StopKind::Requested;
    double used = 0;
    double limit = 0;
    std::string text;  ///< StopKind::Other only

    /** The run was stopped (by the user or a budget outside the search), not finished. */
    bool stopped() const;
    bool operator==(const StopReason&) const = default;

    static StopReason requested() { return {}; }
    static StopReason evaluation_budget(int budget) { return {StopKind::EvaluationBudget, 0, double(budget), {}}; }
    static StopReason time_limit(double seconds) { return {StopKind::TimeLimit, 0, seconds, {}}; }
    static StopReason stagnation(int rounds) { return {StopKind::Stagnation, double(rounds), 0, {}}; }
    static StopReason exhausted() { return {StopKind::Exhausted, 0, 0, {}}; }
};

/**
 * The reason as the store and the events keep it, e.g. "evaluation budget of 60 spent",
 * "LLM budget spent: 6 of 6 calls", "stopped on request".
 */
std::string to_string(const StopReason& r);
/** Reads to_string()'s text back; text it does not know gives StopKind::Other. Empty: Requested. */
StopReason stop_reason_from_string(std::string_view s);

}  // namespace kf
