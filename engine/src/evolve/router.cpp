#include "kf/router.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kf {

using nlohmann::json;

namespace {

DiagnosisClass class_of(Status status, const std::string& bound, bool spills) {
    if (auto failure = failure_class(status)) return *failure;
    if (spills) return DiagnosisClass::Spills;
    // The roofline's bound (memory, compute, latency) or the profile's (occupancy).
    auto c = parse_diagnosis_class(bound);
    return c && is_bound(*c) ? *c : DiagnosisClass::Latency;
}

}  // namespace

DiagnosisClass diagnosis_class(const Diagnosis& d) {
    bool spills = std::any_of(d.compile.resources.begin(), d.compile.resources.end(),
                              [](const ResourceUsage& r) { return r.spill_store_bytes > 0 || r.spill_load_bytes > 0; });
    return class_of(d.status, d.roofline ? d.roofline->bound : "", spills);
}

DiagnosisClass diagnosis_class(const Member& m) { return class_of(m.status, m.bound, false); }

Router::Router(std::vector<std::string> experts, double exploration)
    : experts_(std::move(experts)), exploration_(exploration) {
    // Hand-written priors: which built-in expert is likely to help for each class. Without an
    // LLM, a broken child is best answered by tuning its parent again or by another pattern.
    using C = DiagnosisClass;
    const std::map<DiagnosisClass, std::map<std::string, double>> defaults = {
        {C::CompileError, {{"tuner", 0.5}, {"pattern", 0.4}, {"crossover", 0.1}}},
        {C::LoadError, {{"tuner", 0.4}, {"pattern", 0.5}}},
        {C::RuntimeError, {{"tuner", 0.5}, {"pattern", 0.4}}},
        {C::Timeout, {{"tuner", 0.5}, {"pattern", 0.4}}},
        {C::Incorrect, {{"tuner", 0.4}, {"pattern", 0.5}}},
        {C::IntegrityViolation, {{"pattern", 0.7}, {"tuner", 0.2}}},
        {C::Memory, {{"pattern", 0.5}, {"tuner", 0.4}, {"crossover", 0.3}}},
        {C::Compute, {{"tuner", 0.5}, {"pattern", 0.4}, {"crossover", 0.3}}},
        {C::Latency, {{"tuner", 0.5}, {"crossover", 0.3}, {"pattern", 0.3}}},
        {C::Occupancy, {{"tuner", 0.7}, {"crossover", 0.2}}},
        {C::Spills, {{"tuner", 0.7}, {"pattern", 0.2}}},
    };
    priors_ = defaults;
}

double Router::prior(DiagnosisClass dclass, const std::string& expert) const {
    auto c = priors_.find(dclass);
    if (c == priors_.end()) return 0.1;
    auto e = c->second.find(expert);
    return e == c->second.end() ? 0.1 : e->second;
}

void Router::add_expert(const std::string& name) {
    if (std::find(experts_.begin(), experts_.end(), name) == experts_.end()) experts_.push_back(name);
}

void Router::set_prior(DiagnosisClass dclass, const std::string& expert, double weight) {
    priors_[dclass][expert] = weight;
}

Router::Stats Router::stats(DiagnosisClass dclass, const std::string& expert) const {
    auto c = stats_.find(dclass);
    if (c == stats_.end()) return {};
    auto e = c->second.find(expert);
    return e == c->second.end() ? Stats{} : e->second;
}

RouteDecision Router::choose(DiagnosisClass dclass, const std::vector<std::string>& favoured,
                             const std::vector<std::string>& allowed) const {
    int total = 0;
    if (auto c = stats_.find(dclass); c != stats_.end())
        for (const auto& [name, s] : c->second) total += s.tries;
    RouteDecision best;
    best.diagnosis_class = dclass;
    best.score = -1e300;
    for (const auto& e : experts_) {
        if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), e) == allowed.end()) continue;
        Stats s = stats(dclass, e);
        double mean = s.tries ? s.reward_sum / s.tries : 0;
        // UCB1 bonus; an untried expert gets the largest bonus, tempered by its prior.
        double bonus = exploration_ * std::sqrt(std::log(static_cast<double>(total) + 2.0) / (s.tries + 1.0));
        double fav = std::find(favoured.begin(), favoured.end(), e) != favoured.end() ? 0.25 : 0.0;
        double score = prior(dclass, e) + mean + bonus + fav;
        if (score > best.score) {
            best.score = score;
            best.expert = e;
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s: %s scored %.2f (prior %.2f, mean gain %.2f over %d tries, %d improved, bonus %.2f%s)",
                          std::string(to_string(dclass)).c_str(), e.c_str(), score, prior(dclass, e), mean, s.tries, s.improvements, bonus,
                          fav > 0 ? ", island specialty" : "");
            best.reason = buf;
        }
    }
    return best;
}

void Router::reward(DiagnosisClass dclass, const std::string& expert, double gain) {
    Stats& s = stats_[dclass][expert];
    ++s.tries;
    if (gain > 1.0) ++s.improvements;
    // Reward: the log-gain of an improvement (capped), nothing for a child that was not better.
    s.reward_sum += gain > 1.0 ? std::min(1.0, std::log(gain) * 2.0) : 0.0;
}

void Router::reward_repair(DiagnosisClass dclass, const std::string& expert, bool became_correct) {
    Stats& s = stats_[dclass][expert];
    ++s.tries;
    if (became_correct) {
        ++s.improvements;
        s.reward_sum += 1.0;
    }
}

json Router::to_json() const {
    json stats = json::object();
    for (const auto& [dclass, per] : stats_)
        for (const auto& [expert, s] : per)
            stats[std::string(to_string(dclass))][expert] = {{"tries", s.tries}, {"improvements", s.improvements}, {"reward_sum", s.reward_sum}};
    return {{"experts", experts_}, {"exploration", exploration_}, {"stats", stats}};
}

void Router::load_stats(const json& j) {
    stats_.clear();
    if (!j.contains("stats")) return;
    for (auto c = j["stats"].begin(); c != j["stats"].end(); ++c) {
        auto dclass = parse_diagnosis_class(c.key());
        if (!dclass) continue;  // a class this build does not route
        for (auto e = c->begin(); e != c->end(); ++e) {
            Stats s;
            s.tries = e->value("tries", 0);
            s.improvements = e->value("improvements", 0);
            s.reward_sum = e->value("reward_sum", 0.0);
            stats_[*dclass][e.key()] = s;
        }
    }
}

}  // namespace kf
