#include "runs/runconfig.h"

#include "kf/evolution.h"
#include "preferences.h"

namespace kfgui {

RunConfig loadDefaultRunConfig() {
    RunConfig c;
    c.islands = prefs::runIslands.get();
    c.population = prefs::runPopulation.get();
    c.budget = prefs::runBudget.get();
    c.timeLimitS = prefs::runTimeLimit.get();
    c.seed = prefs::runSeed.get();
    c.backend = prefs::backend.get();
    c.device = prefs::device.get();
    c.compileThreads = prefs::compileThreads.get();
    c.minTimeMs = prefs::runMinTimeMs.get();
    return c;
}

void saveDefaultRunConfig(const RunConfig& c) {
    prefs::runIslands.set(c.islands);
    prefs::runPopulation.set(c.population);
    prefs::runBudget.set(c.budget);
    prefs::runTimeLimit.set(c.timeLimitS);
    prefs::runSeed.set(c.seed);
    prefs::backend.set(c.backend);
    prefs::device.set(c.device);
    prefs::compileThreads.set(c.compileThreads);
    prefs::runMinTimeMs.set(c.minTimeMs);
}

void applyRunConfig(const RunConfig& c, kf::EvolveOptions& o) {
    o.search.islands.islands = c.islands;
    o.search.islands.population = c.population;
    o.search.budget = c.budget;
    o.search.time_limit_s = c.timeLimitS;
    o.search.seed = static_cast<std::uint64_t>(c.seed);
    o.eval.min_time_ms = c.minTimeMs;
}

}  // namespace kfgui
