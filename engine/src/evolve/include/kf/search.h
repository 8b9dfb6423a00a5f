#pragma once
/**
 * The search loop: islands of evaluated members, a router choosing an expert per parent
 * from its diagnosis, built-in experts proposing children, batches of children evaluated
 * together (compiled in parallel), migration between islands, and budgets by evaluations,
 * wall time or stagnation. The evaluator is a function, so the loop runs against the real
 * worker or a deterministic fake in tests. See docs/search.md.
 */
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"
#include "kf/experts.h"
#include "kf/population.h"
#include "kf/router.h"
#include "kf/run_control.h"

namespace kf {

/** Children of a failed parent that may fail before the parent is abandoned. */
inline constexpr int kMaxFailedRepairs = 3;

struct SearchConfig {
    IslandConfig islands;
    int budget = 100;            ///< evaluations (seeds included); 0: unlimited
    double time_limit_s = 0;     ///< wall time; 0: unlimited
    int stagnation_stop = 0;     ///< rounds without a new global best that end the run; 0: never
    /** Answers in a row from asynchronous (LLM) experts that bring no new child (a refusal,
     *  or a kernel already evaluated) after which the space counts as exhausted. */
    int max_fruitless = 64;
    std::uint64_t seed = 1;
    /** Experts each island favours (round-robin over islands when fewer lists than islands). */
    std::vector<std::vector<std::string>> island_experts = {
        {"tuner"}, {"pattern", "template"}, {"crossover", "tuner"}, {"template", "tuner"}};
    /** The task searched (given to experts that read it, e.g. for prompts); may be null. */
    const Task* task = nullptr;
    Backend backend = Backend::Host;
};

/** One child as the loop hands it to the evaluator. */
struct Child {
    Proposal proposal;
    int island = 0;
    int generation = 0;
    RouteDecision route;
    std::int64_t id = 0;  ///< filled by the loop (or by the on_child hook, e.g. the store's id)
    double parent_fitness = 0;  ///< the first parent's fitness when the child was proposed
};

/**
 * Where the search sends children to be evaluated. The search keeps capacity() children in
 * flight and takes results as they finish (steady state), so an asynchronous queue keeps
 * the compilers and the device busy. All calls come from the search's thread.
 */
class EvaluationQueue {
public:
    virtual ~EvaluationQueue() = default;
    /** How many children to keep in flight. */
    virtual int capacity() const = 0;
    virtual void submit(const Child& c) = 0;
    /** The next finished child and its diagnosis; nullopt when none finished within `wait`. */
    virtual std::optional<std::pair<Child, Diagnosis>> next(std::chrono::milliseconds wait) = 0;
    /**
     * Takes back every child not yet being evaluated (waits for compiles in progress); the
     * ones being evaluated still come out of next().
     */
    virtual std::vector<Child> cancel_waiting() = 0;
    /** Utilisation figures for reports (e.g. device busy and starved seconds); may be empty. */
    virtual nlohmann::json stats() const { return nlohmann::json::object(); }
    /**
     * Asks the queue to notify `wakeup` whenever a result becomes ready; true when it will (the
     * search then sleeps on the wake-up), false when it cannot (the search waits in next()).
     */
    virtual bool notify_results(std::shared_ptr<Wakeup> wakeup) {
        (void)wakeup;
        return false;
    }
};

/**
 * One thing that happened in a search. `kind` (stored as its spelling) and `data` are what
 * the project store keeps (its events table); `status` and `stop` carry the same facts typed,
 * for readers in this process, so that nobody parses `message` or `data` back.
 */
struct SearchEvent {
    SearchEvent() = default;
    SearchEvent(EventKind kind_, int island_, std::int64_t member_, std::string message_, nlohmann::json data_ = {})
        : kind(kind_), island(island_), member(member_), message(std::move(message_)), data(std::move(data_)) {}

    EventKind kind = EventKind::Log;  ///< Seeded ... LlmUsage (the run log's own kinds reach the caller as Log)
    int island = -1;
    std::int64_t member = 0;
    std::string message;
    nlohmann::json data;
    std::optional<Status> status;   ///< seeded, evaluated: the child's status
    std::optional<StopReason> stop;  ///< stopped: why
};

struct SearchHooks {
    /** The asynchronous evaluation queue; when null, `evaluate` is used in batches. */
    std::shared_ptr<EvaluationQueue> queue;
    /** Evaluates a batch of children; one diagnosis per child, in order (used without a queue). */
    std::function<std::vector<Diagnosis>(const std::vector<Child>&)> evaluate;
    /** Called on the search's thread for every finished child, before it joins its island. */
    std::function<void(const Child&, const Diagnosis&)> on_result;
    /** Called before evaluation; may assign ids (e.g. from the project store). */
    std::function<void(Child&)> on_child;
    std::function<void(const SearchEvent&)> on_event;
    /** Called after every processed result, when state() is consistent (to checkpoint it). */
    std::function<void()> on_batch_done;
    /** Polled between results; true stops the run cleanly (in-flight evaluations finish). */
    std::function<bool()> should_stop;
    /** Why should_stop() said so (e.g. an LLM budget); nullopt: StopKind::Requested. */
    std::function<std::optional<StopReason>()> stop_reason;
    /** The full diagnosis (kf::Diagnosis JSON) of a member, for experts that read it; may be empty. */
    std::function<nlohmann::json(std::int64_t member)> diagnosis_of;
    /** Library entries for the task and a diagnosis class, as short text (for experts' contexts). */
    std::function<std::vector<std::string>(DiagnosisClass dclass)> library_notes;
    /** Stop, pause and user injections from another thread; may be null. */
    RunControl* control = nullptr;
};

struct SearchResult {
    int evaluations = 0;
    StopReason stop_reason;
    std::optional<Member> best;
    std::map<std::string, int> outcomes;  ///< evaluations by status
};

class Search {
public:
    Search(SearchConfig cfg, std::vector<PatternSource> patterns, SearchHooks hooks);
    ~Search();

    /** Adds an expert (e.g. an LLM role) beside the built-in ones; its priors go to the router. */
    void add_expert(std::shared_ptr<Expert> expert);
    /** Seeds are evaluated first and spread over the islands round-robin. */
    void add_seeds(const std::vector<Proposal>& seeds);
    /** Adds an already evaluated member (resume: evaluated after the last saved state). */
    void adopt(const Member& m);
    /** Queues a proposed but unevaluated child (resume: lost mid-batch); evaluated first. */
    void add_pending(const Child& c);
    /** Runs until a budget is spent, the space is exhausted or should_stop() says so. */
    SearchResult run();

    const IslandModel& islands() const { return islands_; }
    const Router& router() const { return router_; }
    /** Everything needed to resume: islands, router statistics, RNG, counters, tried keys. */
    nlohmann::json state() const;
    void restore(const nlohmann::json& state);

private:
    struct AsyncProposal;
    struct RunLoop;  ///< one call of run() (search.cpp)
    enum class ProposeOutcome { Proposed, Started, Nothing };
    Member evaluate_into_member(const Child& c, const Diagnosis& d);
    ProposeOutcome propose_one(std::deque<Child>& ready);
    /** Counts a child of a failed parent as one of its repairs until its result comes. */
    void note_repair_in_flight(const Child& c);
    ProposeOutcome propose_for_island(int island, std::deque<Child>& ready);
    void collect_async(std::deque<Child>& ready, bool wait);
    void process_result(const Child& c, const Diagnosis& d);
    void notify(SearchEvent e);
    bool must_stop(StopReason& why) const;
    bool budget_allows(int more) const;

    SearchConfig cfg_;
    std::vector<PatternSource> patterns_;
    SearchHooks hooks_;
    IslandModel islands_;
    Router router_;
    SearchRng rng_;
    std::vector<std::shared_ptr<Expert>> experts_;
    std::set<std::string> tried_;
    std::vector<Proposal> pending_seeds_;
    std::vector<Child> pending_children_;
    std::vector<std::unique_ptr<AsyncProposal>> async_;
    std::map<std::int64_t, Child> in_flight_;  ///< submitted, not yet finished (saved for resume)
    int next_island_ = 0;
    int fruitless_ = 0;  ///< asynchronous answers in a row that brought no new child
    std::int64_t next_id_ = 1;
    int evaluations_ = 0;
    int evals_since_best_ = 0;
    double best_fitness_ = 0;
    std::map<std::string, int> outcomes_;
    std::map<std::int64_t, int> failed_repairs_;  ///< failed parent -> its children that failed too
    std::set<std::int64_t> abandoned_;            ///< failed parents no longer chosen
    std::map<std::int64_t, int> repairs_in_flight_;  ///< failed parent -> its children proposed, not yet evaluated
    std::chrono::steady_clock::time_point started_;
    /** What the loop sleeps on: results, finished proposals, stop / pause / injections. */
    std::shared_ptr<Wakeup> wake_ = std::make_shared<Wakeup>();
};

}  // namespace kf
