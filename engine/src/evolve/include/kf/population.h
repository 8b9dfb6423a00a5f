#pragma once
/**
 * The evolving population: members (evaluated candidates) spread over islands that evolve
 * apart, with tournament selection, elites, MAP-Elites-style cells for diversity and ring
 * migration. Deterministic for a given seed. See docs/search.md.
 */
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/member.h"

namespace kf {

struct IslandConfig {
    int islands = 4;
    int population = 12;     ///< members kept per island
    int elites = 2;          ///< best members never replaced
    int tournament = 3;      ///< tournament size for selection
    int migrate_every = 5;   ///< generations between ring migrations
    int stagnation = 6;      ///< generations without improvement that trigger a migration
};

/** One migration: a copy of `member` sent from island `from` to island `to`. */
struct Migration {
    int from = 0, to = 0;
    Member member;
};

class IslandModel {
public:
    explicit IslandModel(IslandConfig cfg = {});
    const IslandConfig& config() const { return cfg_; }
    int islands() const { return cfg_.islands; }

    /**
     * Adds an evaluated member to its island. Keeps at most `population` members: the best
     * member of each cell is kept first, then the rest by fitness; elites are never dropped.
     * Returns true when it is the island's new best.
     */
    bool add(const Member& m);
    const std::vector<Member>& members(int island) const { return islands_.at(static_cast<std::size_t>(island)).members; }
    /** Tournament selection among the island's members (fitter wins; failed members rarely). */
    const Member* select(int island, SearchRng& rng) const;
    /** Two distinct members of one family on the island, for crossover; nullopt when none. */
    std::optional<std::pair<const Member*, const Member*>> select_pair(int island, SearchRng& rng) const;
    const Member* best(int island) const;
    const Member* best() const;

    /** Marks the end of a generation on an island; tracks stagnation. */
    void end_generation(int island);
    int generation(int island) const { return islands_.at(static_cast<std::size_t>(island)).generation; }
    bool stagnant(int island) const;
    /** Due when any island reached a multiple of migrate_every generations or stagnated. */
    bool migration_due() const;
    /** Ring migration: each island's best goes to the next island; resets stagnation counters. */
    std::vector<Migration> migrate();

    nlohmann::json to_json() const;
    static IslandModel from_json(const nlohmann::json& j);

private:
    struct Island {
        std::vector<Member> members;
        int generation = 0;
        int since_improvement = 0;
        int last_migration = 0;
        double best_fitness = 0;
    };
    void trim(Island& isl);
    IslandConfig cfg_;
    std::vector<Island> islands_;
};

}  // namespace kf
