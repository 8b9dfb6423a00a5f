#pragma once
/**
 * The router picks the expert for a parent from its diagnosis: hand-written priors per
 * diagnosis class, refined online by a UCB bandit on the improvement each expert brings
 * for that class. Every decision carries its reason. See docs/search.md.
 */
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"
#include "kf/population.h"

namespace kf {

/** The class a diagnosis falls in for routing: its failure, else memory, compute, latency, spills... */
DiagnosisClass diagnosis_class(const Diagnosis& d);
/** The same from a member's summary (status and bound). */
DiagnosisClass diagnosis_class(const Member& m);

struct RouteDecision {
    std::string expert;
    std::optional<DiagnosisClass> diagnosis_class;  ///< unset: no route (a seed, the user's kernel)
    std::string reason;  ///< e.g. "memory: prior 0.6 favours pattern; UCB 1.32 (5 tries, 2 improved)"
    double score = 0;
};

class Router {
public:
    /** `experts`: the names of the experts available in this run. */
    explicit Router(std::vector<std::string> experts, double exploration = 0.7);

    /** Prior preference (0..1) of an expert for a diagnosis class; 0.1 when none is set. */
    double prior(DiagnosisClass dclass, const std::string& expert) const;
    void set_prior(DiagnosisClass dclass, const std::string& expert, double weight);

    /**
     * Picks among `allowed` (default: all): the highest of prior + mean reward + exploration
     * bonus; experts in `favoured` (the island's specialty) get a bonus.
     */
    RouteDecision choose(DiagnosisClass dclass, const std::vector<std::string>& favoured = {},
                         const std::vector<std::string>& allowed = {}) const;
    /** Feedback: the child improved on its parent by `gain` (child/parent fitness; 0 when it failed). */
    void reward(DiagnosisClass dclass, const std::string& expert, double gain);
    /** Feedback for a child of a failed parent: reward 1 when it became correct, else 0. */
    void reward_repair(DiagnosisClass dclass, const std::string& expert, bool became_correct);

    struct Stats {
        int tries = 0;
        int improvements = 0;
        double reward_sum = 0;
    };
    Stats stats(DiagnosisClass dclass, const std::string& expert) const;
    const std::vector<std::string>& experts() const { return experts_; }
    /** Makes another expert available (no-op when it already is). */
    void add_expert(const std::string& name);

    nlohmann::json to_json() const;
    void load_stats(const nlohmann::json& j);

private:
    std::vector<std::string> experts_;
    double exploration_;
    std::map<DiagnosisClass, std::map<std::string, double>> priors_;
    std::map<DiagnosisClass, std::map<std::string, Stats>> stats_;
};

}  // namespace kf
