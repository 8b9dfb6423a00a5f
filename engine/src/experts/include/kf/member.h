#pragma once
/**
 * An evaluated candidate as the search and its experts see it (kf::Member), and the search's
 * random numbers. The island model (kf/population.h) keeps members; experts (kf/experts.h)
 * propose children from them.
 */
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/tunables.h"
#include "kf/vocabulary.h"

namespace kf {

/** Deterministic random numbers for the search (std::mt19937_64 with a saved state). */
using SearchRng = std::mt19937_64;

/** An evaluated candidate as the search sees it. */
struct Member {
    std::int64_t id = 0;              ///< candidate id (the store's, or a local counter)
    std::string source;               ///< the annotated source (template)
    Assignment tunables;              ///< values applied to its tunables
    std::string family;               ///< pattern family, e.g. "softmax/warp-per-row" or "seed"
    std::string expert;               ///< who proposed it
    Status status = Status::Ok;       ///< diagnosis status
    std::string bound;                ///< roofline bound class when timed
    double fitness = 0;               ///< speedup over the reference when correct, else 0
    int island = 0;
    int generation = 0;
    std::vector<std::int64_t> parents;

    /** MAP-Elites cell: pattern family x bound class. */
    std::string cell() const { return family + "|" + bound; }
};

void to_json(nlohmann::json& j, const Member& m);
void from_json(const nlohmann::json& j, Member& m);

}  // namespace kf
