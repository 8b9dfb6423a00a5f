// Budgets shared over the problems of one KernelBench command, and the problems it skips (kernelbench_search.h).
#include <algorithm>
#include <map>

#include "kf/kernelbench_search.h"
#include "kf/store.h"

namespace kf::kb {

namespace {

/** The smaller of two limits where 0 (or less) means none. */
template <class T>
T tighter_limit(T a, T b) {
    if (a <= 0) return b;
    if (b <= 0) return a;
    return std::min(a, b);
}

}  // namespace

LevelBudgets with_llm_budgets(LevelBudgets level, const llm::LlmConfig& cfg) {
    level.tokens = tighter_limit<std::int64_t>(level.tokens, cfg.budgets.max_tokens);
    level.cost = tighter_limit(level.cost, cfg.budgets.max_cost);
    level.calls = tighter_limit<std::int64_t>(level.calls, cfg.budgets.max_calls);
    return level;
}

std::set<std::string> finished_problems(ProjectStore& store, const std::string& tolerance) {
    // The latest finished run of each problem decides (runs are listed oldest first).
    std::map<std::string, std::string> judged_with;
    for (const auto& r : store.runs())
        if (r.config.is_object() && r.config.value("kind", "") == "kernelbench" && r.state == RunState::Done)
            judged_with[r.task] = r.config.value("tolerance", "current");
    std::set<std::string> out;
    for (const auto& [task, t] : judged_with)
        if (t == tolerance) out.insert(task);
    return out;
}

LevelSpent spent_by_others(ProjectStore& store, const std::vector<Problem>& problems, const std::string& except) {
    std::map<std::string, std::int64_t> latest;
    for (const auto& r : store.runs())
        if (r.config.is_object() && r.config.value("mode", "") == "search" && r.task != except)
            latest[r.task] = std::max(latest[r.task], r.id);
    LevelSpent s;
    for (const auto& p : problems) {
        auto it = latest.find(p.key());
        if (it == latest.end()) continue;
        s.evaluations += static_cast<std::int64_t>(store.evaluations(it->second).size());
        if (auto llm = store.get_state(it->second, "llm"); llm && llm->contains("usage")) {
            const nlohmann::json t = (*llm)["usage"].value("totals", nlohmann::json::object());
            s.tokens += t.value("input_tokens", std::int64_t{0}) + t.value("output_tokens", std::int64_t{0});
            s.calls += t.value("calls", std::int64_t{0});
            s.cost += t.value("cost", 0.0);
        }
    }
    return s;
}

std::string share_level_budgets(const LevelBudgets& level, const LevelSpent& others, double elapsed_s, std::int64_t left,
                                ProblemSearchOptions& o) {
    left = std::max<std::int64_t>(1, left);
    std::string exhausted;
    if (level.evaluations > 0) {
        const std::int64_t rest = level.evaluations - others.evaluations;
        if (rest <= 0) exhausted = "evaluations";
        o.search.budget = static_cast<int>(tighter_limit<std::int64_t>(o.search.budget, std::max<std::int64_t>(1, rest / left)));
    }
    if (level.tokens > 0) {
        const std::int64_t rest = level.tokens - others.tokens;
        if (rest <= 0) exhausted = "tokens";
        o.budgets.max_tokens = tighter_limit<std::int64_t>(o.budgets.max_tokens, std::max<std::int64_t>(1, rest / left));
    }
    if (level.cost > 0) {
        const double rest = level.cost - others.cost;
        if (rest <= 0) exhausted = "cost";
        o.budgets.max_cost = tighter_limit(o.budgets.max_cost, std::max(1e-9, rest / static_cast<double>(left)));
    }
    if (level.calls > 0) {
        const std::int64_t rest = level.calls - others.calls;
        if (rest <= 0) exhausted = "calls";
        o.budgets.max_calls = tighter_limit<std::int64_t>(o.budgets.max_calls, std::max<std::int64_t>(1, rest / left));
    }
    if (level.time_s > 0) {
        const double rest = level.time_s - elapsed_s;
        if (rest <= 0) exhausted = "time";
        o.search.time_limit_s = tighter_limit(o.search.time_limit_s, std::max(1.0, rest / static_cast<double>(left)));
    }
    return exhausted;
}

}  // namespace kf::kb
