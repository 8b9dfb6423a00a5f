#pragma once
/**
 * The search loop: islands of evaluated members, a router choosing an expert per parent
 * from its diagnosis, built-in experts proposing children, batches of children evaluated
 * together (compiled in parallel), migration between islands, and budgets by evaluations,
 * wall time or stagnation. The evaluator is a function, so the loop runs against the real
 * worker or a deterministic fake in tests. See docs/search.md.
 */
#include <chrono>
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

struct SearchConfig {
    IslandConfig islands;
    int budget = 100;            ///< evaluations (seeds included); 0: unlimited
    double time_limit_s = 0;     ///< wall time; 0: unlimited
    int stagnation_stop = 0;     ///< rounds without a new global best that end the run; 0: never
    std::uint64_t seed = 1;
    /** Experts each island favours (round-robin over islands when fewer lists than islands). */
    std::vector<std::vector<std::string>> island_experts = {{"tuner"}, {"pattern"}, {"crossover", "tuner"}, {"pattern", "tuner"}};
};

/** One child as the loop hands it to the evaluator. */
struct Child {
    Proposal proposal;
    int island = 0;
    int generation = 0;
    RouteDecision route;
    std::int64_t id = 0;  ///< filled by the loop (or by the on_child hook, e.g. the store's id)
};

struct SearchEvent {
    std::string kind;  ///< seeded, proposed, evaluated, improved, migrated, refused, stopped
    int island = -1;
    std::int64_t member = 0;
    std::string message;
    nlohmann::json data;
};

struct SearchHooks {
    /** Evaluates a batch of children; one diagnosis per child, in order. Required. */
    std::function<std::vector<Diagnosis>(const std::vector<Child>&)> evaluate;
    /** Called before evaluation; may assign ids (e.g. from the project store). */
    std::function<void(Child&)> on_child;
    std::function<void(const SearchEvent&)> on_event;
    /** Called after every evaluated batch, when state() is consistent (to checkpoint it). */
    std::function<void()> on_batch_done;
    /** Polled between batches; true stops the run cleanly. */
    std::function<bool()> should_stop;
    /** The full diagnosis (kf::Diagnosis JSON) of a member, for experts that read it; may be empty. */
    std::function<nlohmann::json(std::int64_t member)> diagnosis_of;
    /** Library entries for the task and a diagnosis class, as short text (for experts' contexts). */
    std::function<std::vector<std::string>(const std::string& diagnosis_class)> library_notes;
    /** Stop, pause and user injections from another thread; may be null. */
    RunControl* control = nullptr;
};

struct SearchResult {
    int evaluations = 0;
    std::string stop_reason;
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
    Member evaluate_into_member(const Child& c, const Diagnosis& d);
    std::vector<Child> propose_round();
    void notify(SearchEvent e);
    bool out_of_budget(std::string& why) const;

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
    std::int64_t next_id_ = 1;
    int evaluations_ = 0;
    int rounds_since_best_ = 0;
    double best_fitness_ = 0;
    std::map<std::string, int> outcomes_;
    std::chrono::steady_clock::time_point started_;
};

}  // namespace kf
