#include "kf/router.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kf {

using nlohmann::json;

namespace {

std::string class_of(const std::string& status, const std::string& bound, bool spills) {
    if (status != "ok") return status;
    if (spills) return "spills";
    return bound.empty() ? "latency" : bound;
}

}  // namespace

std::string diagnosis_class(const Diagnosis& d) {
    bool spills = std::any_of(d.compile.resources.begin(), d.compile.resources.end(),
                              [](const ResourceUsage& r) { return r.spill_store_bytes > 0 || r.spill_load_bytes > 0; });
    return class_of(std::string(to_string(d.status)), d.roofline ? d.roofline->bound : "", spills);
}

std::string diagnosis_class(const Member& m) { return class_of(m.status, m.bound, false); }

bool is_failure_class(const std::string& dclass) {
    return dclass == "compile_error" || dclass == "load_error" || dclass == "runtime_error" || dclass == "timeout" ||
           dclass == "incorrect" || dclass == "integrity_violation";
}

Router::Router(std::vector<std::string> experts, double exploration)
    : experts_(std::move(experts)), exploration_(exploration) {
    // Hand-written priors: which built-in expert is likely to help for each class. Without an
    // LLM, a broken child is best answered by tuning its parent again or by another pattern.
    const std::map<std::string, std::map<std::string, double>> defaults = {
        {"compile_error", {{"tuner", 0.5}, {"pattern", 0.4}, {"crossover", 0.1}}},
        {"load_error", {{"tuner", 0.4}, {"pattern", 0.5}}},
        {"runtime_error", {{"tuner", 0.5}, {"pattern", 0.4}}},
        {"timeout", {{"tuner", 0.5}, {"pattern", 0.4}}},
        {"incorrect", {{"tuner", 0.4}, {"pattern", 0.5}}},
        {"integrity_violation", {{"pattern", 0.7}, {"tuner", 0.2}}},
        {"memory", {{"pattern", 0.5}, {"tuner", 0.4}, {"crossover", 0.3}}},
        {"compute", {{"tuner", 0.5}, {"pattern", 0.4}, {"crossover", 0.3}}},
        {"latency", {{"tuner", 0.5}, {"crossover", 0.3}, {"pattern", 0.3}}},
        {"occupancy", {{"tuner", 0.7}, {"crossover", 0.2}}},
        {"spills", {{"tuner", 0.7}, {"pattern", 0.2}}},
    };
    priors_ = defaults;
}

double Router::prior(const std::string& dclass, const std::string& expert) const {
    auto c = priors_.find(dclass);
    if (c == priors_.end()) return 0.1;
    auto e = c->second.find(expert);
    return e == c->second.end() ? 0.1 : e->second;
}

void Router::add_expert(const std::string& name) {
    if (std::find(experts_.begin(), experts_.end(), name) == experts_.end()) experts_.push_back(name);
}

void Router::set_prior(const std::string& dclass, const std::string& expert, double weight) {
    priors_[dclass][expert] = weight;
}

Router::Stats Router::stats(const std::string& dclass, const std::string& expert) const {
    auto c = stats_.find(dclass);
    if (c == stats_.end()) return {};
    auto e = c->second.find(expert);
    return e == c->second.end() ? Stats{} : e->second;
}

RouteDecision Router::choose(const std::string& dclass, const std::vector<std::string>& favoured,
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
                          dclass.c_str(), e.c_str(), score, prior(dclass, e), mean, s.tries, s.improvements, bonus,
                          fav > 0 ? ", island specialty" : "");
            best.reason = buf;
        }
    }
    return best;
}

void Router::reward(const std::string& dclass, const std::string& expert, double gain) {
    Stats& s = stats_[dclass][expert];
    ++s.tries;
    if (gain > 1.0) ++s.improvements;
    // Reward: the log-gain of an improvement (capped), nothing for a child that was not better.
    s.reward_sum += gain > 1.0 ? std::min(1.0, std::log(gain) * 2.0) : 0.0;
}

void Router::reward_repair(const std::string& dclass, const std::string& expert, bool became_correct) {
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
            stats[dclass][expert] = {{"tries", s.tries}, {"improvements", s.improvements}, {"reward_sum", s.reward_sum}};
    return {{"experts", experts_}, {"exploration", exploration_}, {"stats", stats}};
}

void Router::load_stats(const json& j) {
    stats_.clear();
    if (!j.contains("stats")) return;
    for (auto c = j["stats"].begin(); c != j["stats"].end(); ++c)
        for (auto e = c->begin(); e != c->end(); ++e) {
            Stats s;
            s.tries = e->value("tries", 0);
            s.improvements = e->value("improvements", 0);
            s.reward_sum = e->value("reward_sum", 0.0);
            stats_[c.key()][e.key()] = s;
        }
}

}  // namespace kf
