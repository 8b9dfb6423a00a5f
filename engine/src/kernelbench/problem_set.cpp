// One command's KernelBench search over a problem or a set of them (docs/kernelbench.md): the
// run driver that `kfoundry kernelbench run` and the app's Start Search share.
#include <algorithm>
#include <chrono>
#include <set>

#include "kf/error.h"
#include "kf/kernelbench_search.h"
#include "kf/store.h"

namespace kf::kb {

namespace fs = std::filesystem;

std::string ProblemSkip::message() const {
    switch (why) {
        case Why::Unsupported: return detail.empty() ? "not supported" : detail;
        case Why::Finished: return "already finished";
        case Why::BudgetSpent: return "the set's " + detail + " budget is spent";
    }
    return detail;
}

ProblemSetOutcome search_problems(const ProblemSetRequest& request, Evaluator& ev, ProjectStore& store,
                                  const ProblemSetCallbacks& callbacks) {
    ProblemSetOutcome outcome;
    auto skip = [&](const Problem& p, ProblemSkip::Why why, std::string detail = {}) {
        const ProblemSkip s{why, std::move(detail)};
        if (callbacks.on_skipped) callbacks.on_skipped(p, s);
        outcome.skipped.emplace_back(p.key(), s);
    };
    auto stopping = [&] { return request.base.should_stop && request.base.should_stop(); };

    // A problem asked for by itself that the bridge cannot run is an error, not a skip.
    if (request.single && request.problems.size() == 1)
        if (const std::string why = unsupported_reason(request.problems.front()); !why.empty()) throw Error(why);
    const std::set<std::string> finished =
        request.skip_finished ? finished_problems(store, request.base.eval.tolerance) : std::set<std::string>{};
    std::vector<Problem> to_run;
    for (const Problem& p : request.problems) {
        if (const std::string why = unsupported_reason(p); !why.empty()) {
            skip(p, ProblemSkip::Why::Unsupported, why);
            continue;
        }
        if (finished.count(p.key())) {
            skip(p, ProblemSkip::Why::Finished);
            continue;
        }
        to_run.push_back(p);
    }

    const auto started = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < to_run.size() && !stopping(); ++i) {
        const Problem& p = to_run[i];
        ProblemSearchOptions o = request.base;
        // A set's budgets are shared out as its problems run: what the others left, divided by
        // the problems still to run (this one included).
        const LevelSpent others = spent_by_others(store, to_run, p.key());
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const std::string spent =
            share_level_budgets(request.level, others, elapsed, static_cast<std::int64_t>(to_run.size() - i), o);
        if (!spent.empty()) {
            skip(p, ProblemSkip::Why::BudgetSpent, spent);
            continue;
        }
        if (!request.candidates_dir.empty()) o.candidates = find_candidates(request.candidates_dir, p);
        o.run_config = request.run_config.is_object() ? request.run_config : nlohmann::json::object();
        o.run_config.update({{"level", p.level},
                             {"id", p.id},
                             {"name", p.name},
                             {"file", p.file.string()},
                             {"budget", o.search.budget},
                             {"seed", o.search.seed},
                             {"trials", o.eval.trials},
                             {"reps", o.eval.reps},
                             {"tolerance", o.eval.tolerance},
                             {"baselines", o.eval.baselines}});
        if (callbacks.on_problem) callbacks.on_problem(i, to_run.size(), p, o);
        ProblemSearchOutcome r = search_problem(p, ev, store, o);
        if (callbacks.on_searched) callbacks.on_searched(p, r);
        outcome.searched.emplace_back(p, std::move(r));
    }
    outcome.stopped = stopping();
    return outcome;
}

}  // namespace kf::kb
