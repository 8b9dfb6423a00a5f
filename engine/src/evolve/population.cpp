#include "kf/population.h"

#include <algorithm>
#include <set>

namespace kf {

using nlohmann::json;

IslandModel::IslandModel(IslandConfig cfg) : cfg_(cfg) {
    cfg_.islands = std::max(1, cfg_.islands);
    cfg_.population = std::max(2, cfg_.population);
    cfg_.elites = std::clamp(cfg_.elites, 0, cfg_.population - 1);
    cfg_.tournament = std::max(1, cfg_.tournament);
    islands_.resize(static_cast<std::size_t>(cfg_.islands));
}

bool IslandModel::add(const Member& m) {
    Island& isl = islands_.at(static_cast<std::size_t>(std::clamp(m.island, 0, cfg_.islands - 1)));
    bool improved = m.fitness > isl.best_fitness;
    if (improved) {
        isl.best_fitness = m.fitness;
        isl.since_improvement = 0;
    }
    isl.members.push_back(m);
    trim(isl);
    return improved;
}

void IslandModel::trim(Island& isl) {
    if (static_cast<int>(isl.members.size()) <= cfg_.population) return;
    auto& v = isl.members;
    // Rank: fitness first (ties: the newer member, which keeps the search moving).
    std::vector<std::size_t> order(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (v[a].fitness != v[b].fitness) return v[a].fitness > v[b].fitness;
        return v[a].id > v[b].id;
    });
    std::vector<bool> keep(v.size(), false);
    int kept = 0;
    // Elites, then the best of each MAP-Elites cell (diversity), then the rest by rank.
    for (std::size_t k = 0; k < order.size() && kept < cfg_.elites; ++k) {
        keep[order[k]] = true;
        ++kept;
    }
    std::set<std::string> cells;
    for (std::size_t k = 0; k < order.size(); ++k)
        if (keep[order[k]]) cells.insert(v[order[k]].cell());
    for (std::size_t k = 0; k < order.size() && kept < cfg_.population; ++k) {
        std::size_t i = order[k];
        if (keep[i] || v[i].fitness <= 0 || cells.count(v[i].cell())) continue;
        keep[i] = true;
        cells.insert(v[i].cell());
        ++kept;
    }
    for (std::size_t k = 0; k < order.size() && kept < cfg_.population; ++k) {
        if (keep[order[k]]) continue;
        keep[order[k]] = true;
        ++kept;
    }
    std::vector<Member> out;
    for (std::size_t i = 0; i < v.size(); ++i)
        if (keep[i]) out.push_back(std::move(v[i]));
    v = std::move(out);
}

const Member* IslandModel::select(int island, SearchRng& rng) const {
    const auto& v = members(island);
    if (v.empty()) return nullptr;
    std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
    const Member* winner = nullptr;
    for (int t = 0; t < cfg_.tournament; ++t) {
        const Member* c = &v[pick(rng)];
        if (!winner || c->fitness > winner->fitness) winner = c;
    }
    return winner;
}

std::optional<std::pair<const Member*, const Member*>> IslandModel::select_pair(int island, SearchRng& rng) const {
    const auto& v = members(island);
    std::map<std::string, std::vector<const Member*>> by_family;
    for (const auto& m : v)
        if (m.fitness > 0 && !m.tunables.empty()) by_family[m.family].push_back(&m);
    std::vector<const std::vector<const Member*>*> usable;
    for (const auto& [family, ms] : by_family)
        if (ms.size() >= 2) usable.push_back(&ms);
    if (usable.empty()) return std::nullopt;
    const auto& ms = *usable[std::uniform_int_distribution<std::size_t>(0, usable.size() - 1)(rng)];
    std::uniform_int_distribution<std::size_t> pick(0, ms.size() - 1);
    std::size_t a = pick(rng), b = pick(rng);
    for (int tries = 0; b == a && tries < 8; ++tries) b = pick(rng);
    if (a == b) b = (a + 1) % ms.size();
    return std::make_pair(ms[a], ms[b]);
}

const Member* IslandModel::best(int island) const {
    const Member* out = nullptr;
    for (const auto& m : members(island))
        if (m.fitness > 0 && (!out || m.fitness > out->fitness)) out = &m;
    return out;
}

const Member* IslandModel::best() const {
    const Member* out = nullptr;
    for (int i = 0; i < cfg_.islands; ++i)
        if (const Member* b = best(i); b && (!out || b->fitness > out->fitness)) out = b;
    return out;
}

void IslandModel::end_generation(int island) {
    Island& isl = islands_.at(static_cast<std::size_t>(island));
    ++isl.generation;
    ++isl.since_improvement;
}

bool IslandModel::stagnant(int island) const {
    return islands_.at(static_cast<std::size_t>(island)).since_improvement >= cfg_.stagnation;
}

bool IslandModel::migration_due() const {
    if (cfg_.islands < 2) return false;
    for (int i = 0; i < cfg_.islands; ++i) {
        const Island& isl = islands_[static_cast<std::size_t>(i)];
        if (isl.generation - isl.last_migration >= cfg_.migrate_every || stagnant(i)) return true;
    }
    return false;
}

std::vector<Migration> IslandModel::migrate() {
    std::vector<Migration> out;
    if (cfg_.islands < 2) return out;
    std::vector<std::optional<Member>> bests;
    for (int i = 0; i < cfg_.islands; ++i) {
        const Member* b = best(i);
        bests.push_back(b ? std::optional<Member>(*b) : std::nullopt);
    }
    for (int i = 0; i < cfg_.islands; ++i) {
        Island& isl = islands_[static_cast<std::size_t>(i)];
        isl.last_migration = isl.generation;
        isl.since_improvement = 0;
        if (!bests[static_cast<std::size_t>(i)]) continue;
        Migration mig;
        mig.from = i;
        mig.to = (i + 1) % cfg_.islands;
        mig.member = *bests[static_cast<std::size_t>(i)];
        mig.member.island = mig.to;
        // A migrant that is already there (same source and tunables) is not added twice.
        bool present = false;
        for (const auto& m : members(mig.to))
            if (m.source == mig.member.source && m.tunables == mig.member.tunables) present = true;
        if (!present) {
            add(mig.member);
            out.push_back(mig);
        }
    }
    return out;
}

json IslandModel::to_json() const {
    json islands = json::array();
    for (const auto& isl : islands_)
        islands.push_back({{"members", isl.members},
                           {"generation", isl.generation},
                           {"since_improvement", isl.since_improvement},
                           {"last_migration", isl.last_migration},
                           {"best_fitness", isl.best_fitness}});
    return {{"config",
             {{"islands", cfg_.islands},
              {"population", cfg_.population},
              {"elites", cfg_.elites},
              {"tournament", cfg_.tournament},
              {"migrate_every", cfg_.migrate_every},
              {"stagnation", cfg_.stagnation}}},
            {"islands", islands}};
}

IslandModel IslandModel::from_json(const json& j) {
    IslandConfig cfg;
    const json& c = j.at("config");
    cfg.islands = c.value("islands", cfg.islands);
    cfg.population = c.value("population", cfg.population);
    cfg.elites = c.value("elites", cfg.elites);
    cfg.tournament = c.value("tournament", cfg.tournament);
    cfg.migrate_every = c.value("migrate_every", cfg.migrate_every);
    cfg.stagnation = c.value("stagnation", cfg.stagnation);
    IslandModel model(cfg);
    const json& islands = j.at("islands");
    for (std::size_t i = 0; i < islands.size() && i < model.islands_.size(); ++i) {
        Island& isl = model.islands_[i];
        isl.members = islands[i].value("members", std::vector<Member>{});
        isl.generation = islands[i].value("generation", 0);
        isl.since_improvement = islands[i].value("since_improvement", 0);
        isl.last_migration = islands[i].value("last_migration", 0);
        isl.best_fitness = islands[i].value("best_fitness", 0.0);
    }
    return model;
}

}  // namespace kf
