#include "kf/search.h"

#include <algorithm>
#include <sstream>

namespace kf {

using nlohmann::json;

Search::Search(SearchConfig cfg, std::vector<PatternSource> patterns, SearchHooks hooks)
    : cfg_(std::move(cfg)),
      patterns_(std::move(patterns)),
      hooks_(std::move(hooks)),
      islands_(cfg_.islands),
      router_({"tuner", "crossover", "pattern"}),
      rng_(cfg_.seed) {
    experts_.push_back(make_tuner());
    experts_.push_back(make_crossover());
    experts_.push_back(make_pattern_expert());
    started_ = std::chrono::steady_clock::now();
}

Search::~Search() = default;

void Search::notify(SearchEvent e) {
    if (hooks_.on_event) hooks_.on_event(e);
}

void Search::add_expert(std::shared_ptr<Expert> expert) {
    for (const auto& [dclass, w] : expert->priors()) router_.set_prior(dclass, expert->name(), w);
    router_.add_expert(expert->name());
    experts_.push_back(std::move(expert));
}

void Search::add_seeds(const std::vector<Proposal>& seeds) {
    for (const auto& s : seeds) pending_seeds_.push_back(s);
}

void Search::adopt(const Member& m) {
    tried_.insert(proposal_key(m.source, m.tunables));
    ++evaluations_;
    ++outcomes_[m.status];
    islands_.add(m);
    best_fitness_ = std::max(best_fitness_, m.fitness);
    next_id_ = std::max(next_id_, m.id + 1);
}

void Search::add_pending(const Child& c) {
    tried_.insert(proposal_key(c.proposal.source, c.proposal.tunables));
    next_id_ = std::max(next_id_, c.id + 1);
    pending_children_.push_back(c);
}

bool Search::out_of_budget(std::string& why) const {
    if (cfg_.budget > 0 && evaluations_ >= cfg_.budget) {
        why = "evaluation budget of " + std::to_string(cfg_.budget) + " spent";
        return true;
    }
    if (cfg_.time_limit_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() >= cfg_.time_limit_s) {
        why = "time limit of " + std::to_string(static_cast<int>(cfg_.time_limit_s)) + " s reached";
        return true;
    }
    if (cfg_.stagnation_stop > 0 && rounds_since_best_ >= cfg_.stagnation_stop) {
        why = "no improvement in " + std::to_string(rounds_since_best_) + " rounds";
        return true;
    }
    if (hooks_.should_stop && hooks_.should_stop()) {
        why = "stopped on request";
        return true;
    }
    return false;
}

Member Search::evaluate_into_member(const Child& c, const Diagnosis& d) {
    Member m;
    m.id = c.id;
    m.source = c.proposal.source;
    m.tunables = c.proposal.tunables;
    m.family = c.proposal.family;
    m.expert = c.proposal.expert;
    m.status = std::string(to_string(d.status));
    m.bound = d.roofline ? d.roofline->bound : "";
    m.fitness = d.fitness();
    m.island = c.island;
    m.generation = c.generation;
    m.parents = c.proposal.parents;
    return m;
}

std::vector<Child> Search::propose_round() {
    std::vector<Child> batch;
    for (int i = 0; i < islands_.islands(); ++i) {
        const Member* chosen = islands_.select(i, rng_);
        if (!chosen) continue;
        // The tournament's winner first; when no expert can do anything more with it, the
        // island's other members, fittest first, so that the space is only called exhausted
        // when it really is.
        std::vector<const Member*> parents = {chosen};
        for (const auto& m : islands_.members(i))
            if (&m != chosen) parents.push_back(&m);
        std::stable_sort(parents.begin() + 1, parents.end(),
                         [](const Member* a, const Member* b) { return a->fitness > b->fitness; });
        const auto& favoured = cfg_.island_experts.empty()
                                   ? std::vector<std::string>{}
                                   : cfg_.island_experts[static_cast<std::size_t>(i) % cfg_.island_experts.size()];
        bool proposed = false;
        for (const Member* parent : parents) {
            std::string dclass = diagnosis_class(*parent);
            std::vector<std::string> allowed = router_.experts();
            // Ask the router; an expert that refuses is taken out for this parent.
            while (!allowed.empty()) {
                RouteDecision route = router_.choose(dclass, favoured, allowed);
                Expert* expert = nullptr;
                for (auto& e : experts_)
                    if (e->name() == route.expert) expert = e.get();
                ProposalContext ctx;
                ctx.parent = parent;
                ctx.diagnosis_class = dclass;
                ctx.patterns = &patterns_;
                ctx.tried = &tried_;
                ctx.rng = &rng_;
                if (route.expert == "crossover") {
                    auto pair = islands_.select_pair(i, rng_);
                    if (pair) {
                        ctx.parent = pair->first;
                        ctx.other = pair->second;
                    }
                }
                std::optional<Proposal> p = expert ? expert->propose(ctx) : std::nullopt;
                if (p) {
                    tried_.insert(proposal_key(p->source, p->tunables));
                    Child c;
                    c.proposal = std::move(*p);
                    c.island = i;
                    c.generation = islands_.generation(i) + 1;
                    c.route = route;
                    batch.push_back(std::move(c));
                    proposed = true;
                    break;
                }
                if (parent == chosen)
                    notify({"refused", i, parent->id, route.expert + ": " + (expert ? expert->refusal() : "unknown expert"), {}});
                allowed.erase(std::remove(allowed.begin(), allowed.end(), route.expert), allowed.end());
            }
            if (proposed) break;
        }
    }
    return batch;
}

SearchResult Search::run() {
    SearchResult result;
    std::string why;
    // Seeds first, in batches as large as the budget allows.
    if (!pending_seeds_.empty()) {
        std::vector<Child> batch;
        for (std::size_t k = 0; k < pending_seeds_.size(); ++k) {
            if (cfg_.budget > 0 && evaluations_ + static_cast<int>(batch.size()) >= cfg_.budget) break;
            Proposal& s = pending_seeds_[k];
            std::string key = proposal_key(s.source, s.tunables);
            if (tried_.count(key)) continue;
            tried_.insert(key);
            Child c;
            c.proposal = s;
            c.island = static_cast<int>(k % static_cast<std::size_t>(islands_.islands()));
            batch.push_back(std::move(c));
        }
        pending_seeds_.clear();
        for (auto& c : batch) {
            if (hooks_.on_child) hooks_.on_child(c);
            if (c.id == 0) c.id = next_id_++;
            else next_id_ = std::max(next_id_, c.id + 1);
        }
        auto diags = hooks_.evaluate(batch);
        for (std::size_t k = 0; k < batch.size() && k < diags.size(); ++k) {
            Member m = evaluate_into_member(batch[k], diags[k]);
            ++evaluations_;
            ++outcomes_[m.status];
            islands_.add(m);
            if (m.fitness > best_fitness_) best_fitness_ = m.fitness;
            notify({"seeded", m.island, m.id, m.family + ": " + diags[k].message, {{"fitness", m.fitness}, {"status", m.status}}});
        }
        if (hooks_.on_batch_done) hooks_.on_batch_done();
    }

    while (!out_of_budget(why)) {
        std::vector<Child> batch;
        if (!pending_children_.empty()) batch.swap(pending_children_);
        else batch = propose_round();
        if (batch.empty()) {
            why = "search space exhausted: no expert can propose a new child on any island";
            break;
        }
        if (cfg_.budget > 0 && evaluations_ + static_cast<int>(batch.size()) > cfg_.budget)
            batch.resize(static_cast<std::size_t>(cfg_.budget - evaluations_));
        for (auto& c : batch) {
            if (c.id == 0 && hooks_.on_child) hooks_.on_child(c);
            if (c.id == 0) c.id = next_id_++;
            else next_id_ = std::max(next_id_, c.id + 1);
            notify({"proposed", c.island, c.id, c.route.reason + " -> " + c.proposal.rationale,
                  {{"expert", c.proposal.expert}, {"route", c.route.reason}}});
        }
        auto diags = hooks_.evaluate(batch);
        bool global_improved = false;
        for (std::size_t k = 0; k < batch.size() && k < diags.size(); ++k) {
            const Child& c = batch[k];
            Member m = evaluate_into_member(c, diags[k]);
            ++evaluations_;
            ++outcomes_[m.status];
            double parent_fitness = 0;
            for (const auto& pm : islands_.members(c.island))
                if (!c.proposal.parents.empty() && pm.id == c.proposal.parents.front()) parent_fitness = pm.fitness;
            double gain = parent_fitness > 0 ? m.fitness / parent_fitness : (m.fitness > 0 ? 2.0 : 0.0);
            router_.reward(c.route.diagnosis_class, c.proposal.expert, gain);
            bool island_best = islands_.add(m);
            notify({"evaluated", c.island, m.id, m.status + (m.fitness > 0 ? " " + std::to_string(m.fitness) + "x" : std::string()),
                  {{"fitness", m.fitness},
                   {"status", m.status},
                   {"gain", gain},
                   {"expert", c.proposal.expert},
                   {"parent_class", c.route.diagnosis_class},
                   {"rationale", c.proposal.rationale},
                   {"has_parent", !c.proposal.parents.empty()}}});
            if (island_best) notify({"improved", c.island, m.id, "new island best " + std::to_string(m.fitness) + "x", {{"fitness", m.fitness}}});
            if (m.fitness > best_fitness_) {
                best_fitness_ = m.fitness;
                global_improved = true;
            }
        }
        for (int i = 0; i < islands_.islands(); ++i) islands_.end_generation(i);
        rounds_since_best_ = global_improved ? 0 : rounds_since_best_ + 1;
        if (islands_.migration_due())
            for (const auto& mig : islands_.migrate())
                notify({"migrated", mig.to, mig.member.id,
                      "island " + std::to_string(mig.from) + " -> " + std::to_string(mig.to), {{"fitness", mig.member.fitness}}});
        if (hooks_.on_batch_done) hooks_.on_batch_done();
    }
    result.stop_reason = why;
    result.evaluations = evaluations_;
    result.outcomes = outcomes_;
    if (const Member* b = islands_.best()) result.best = *b;
    notify({"stopped", -1, 0, why, {{"evaluations", evaluations_}}});
    return result;
}

json Search::state() const {
    std::ostringstream rng;
    rng << rng_;
    return {{"islands", islands_.to_json()},
            {"router", router_.to_json()},
            {"rng", rng.str()},
            {"next_id", next_id_},
            {"evaluations", evaluations_},
            {"rounds_since_best", rounds_since_best_},
            {"best_fitness", best_fitness_},
            {"outcomes", outcomes_},
            {"tried", tried_}};
}

void Search::restore(const json& s) {
    islands_ = IslandModel::from_json(s.at("islands"));
    router_.load_stats(s.at("router"));
    std::istringstream rng(s.value("rng", ""));
    rng >> rng_;
    next_id_ = s.value("next_id", std::int64_t{1});
    evaluations_ = s.value("evaluations", 0);
    rounds_since_best_ = s.value("rounds_since_best", 0);
    best_fitness_ = s.value("best_fitness", 0.0);
    outcomes_ = s.value("outcomes", std::map<std::string, int>{});
    tried_ = s.value("tried", std::set<std::string>{});
    pending_seeds_.clear();
}

}  // namespace kf
