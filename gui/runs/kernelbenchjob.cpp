// The KernelBench side of SearchWorker: one problem's search, or a problem set's one problem
// after the other with the set's budgets shared out, through kf::kb::search_problem.
#include "runs/searchworker.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "enginewords.h"
#include "kf/kernelbench.h"
#include "kf/kernelbench_search.h"
#include "kf/llm.h"
#include "kf/run_control.h"
#include "kf/store.h"
#include "paths.h"

namespace kfgui {

void SearchWorker::runKernelBench(const RunRequest& request) {
    RunOutcome outcome;
    runId_ = 0;
    std::string key;
    std::optional<kf::ProjectStore> opened;
    // A problem set (kbIds) is searched problem by problem; what was skipped, and why, is
    // told at the end.
    QStringList skipped;
    int searched = 0;
    const bool isSet = !request.kbIds.isEmpty();
    try {
        std::vector<kf::kb::Problem> problems;
        for (int id : isSet ? request.kbIds : QList<int>{request.kbId})
            problems.push_back(kf::kb::find_problem(toPath(request.kbRoot), request.kbLevel, id));
        if (!isSet)
            if (const std::string why = kf::kb::unsupported_reason(problems.front()); !why.empty()) throw kf::Error(why);
        const std::filesystem::path project = toPath(request.projectDir);
        opened.emplace(kf::ProjectStore::open_or_create(project, project.filename().string()));
        kf::ProjectStore& store = *opened;

        kf::kb::WorkerOptions wo;
        if (!request.python.isEmpty()) wo.python = request.python.toStdString();
        if (!request.kbWorker.isEmpty()) wo.script = toPath(request.kbWorker);
        // The host backend is the worker's CPU testing mode; CUDA runs on the chosen device.
        wo.device = request.config.backend == QLatin1String("cuda") ? std::to_string(request.config.device) : std::string("cpu");
        wo.executor = request.executor;
        kf::kb::Evaluator ev(wo);
        ev.hello();  // throws saying what is missing (Python, PyTorch, CUDA)

        kf::kb::ProblemSearchOptions base;
        // Settings › Executor: how the worker evaluates a ModelNew, as `kernelbench run` takes it.
        if (request.kbTrials < 1 || request.kbReps < 1)
            throw kf::Error(tr("KernelBench trials and timed calls must be at least 1").toStdString());
        const std::string tolerance = request.kbTolerance.toStdString();
        if (kf::kb::describe_tolerance(tolerance).empty())
            throw kf::Error(tr("unknown KernelBench tolerance policy '%1' (Settings › Executor)")
                                .arg(request.kbTolerance)
                                .toStdString());
        base.eval.trials = request.kbTrials;
        base.eval.reps = request.kbReps;
        base.eval.tolerance = tolerance;
        base.eval.baselines.clear();
        for (const QString& b : request.kbBaselines) {
            if (b != QLatin1String("eager") && b != QLatin1String("compile"))
                throw kf::Error(tr("unknown KernelBench baseline '%1' (eager or compile)").arg(b).toStdString());
            base.eval.baselines.push_back(b.toStdString());
        }
        base.search.islands.islands = request.config.islands;
        base.search.islands.population = request.config.population;
        base.search.budget = request.config.budget;
        base.search.time_limit_s = request.config.timeLimitS;
        base.search.seed = static_cast<std::uint64_t>(request.config.seed);
        base.jobs = request.config.compileThreads > 0 ? request.config.compileThreads
                                                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        if (!request.llmConfig.isEmpty()) {
            const nlohmann::json j = nlohmann::json::parse(request.llmConfig.toStdString(), nullptr, false);
            if (j.is_discarded()) throw kf::Error(tr("the LLM configuration is not valid JSON").toStdString());
            auto cfg = std::make_shared<kf::llm::LlmConfig>(kf::llm::parse_llm_config(j));
            for (kf::llm::ProviderConfig& p : cfg->providers) {
                const QString apiKey = request.llmKeys.value(fromUtf8(p.name));
                if (!apiKey.isEmpty()) p.api_key = apiKey.toStdString();
            }
            if (!cfg->prompts_dir.empty()) base.prompts_dir = cfg->prompts_dir;
            base.llm = cfg;
            // The islands' experts as `kfoundry kernelbench run --llm-config` sets them.
            base.search.island_experts = {{"llm:memory", "llm:fusion", "tuner"},
                                          {"llm:compute", "llm:warp", "tuner"},
                                          {"llm:fusion", "llm:occupancy", "tuner"},
                                          {"llm:warp", "llm:memory", "tuner"}};
        } else {
            base.search.island_experts = {{"tuner"}};
        }
        if (!request.libraryPath.isEmpty()) base.experience_library = toPath(request.libraryPath);
        // Also asked from the LLM threads: the thread-safe flag alone, no flushing here.
        base.should_stop = [this] { return control().stop_requested(); };

        // A level's budgets hold over the set, as `kernelbench run --level-budget ...` has them;
        // the LLM configuration's own budgets hold over it too.
        kf::kb::LevelBudgets level;
        level.evaluations = request.kbLevelEvaluations;
        level.tokens = request.kbLevelTokens;
        level.cost = request.kbLevelCost;
        level.time_s = request.kbLevelTimeS;
        if (base.llm) level = kf::kb::with_llm_budgets(level, *base.llm);
        const std::set<std::string> finished =
            request.kbSkipFinished ? kf::kb::finished_problems(store, tolerance) : std::set<std::string>{};
        std::vector<kf::kb::Problem> toRun;
        for (const auto& p : problems) {
            if (!isSet) {
                toRun.push_back(p);
                continue;
            }
            if (const std::string why = kf::kb::unsupported_reason(p); !why.empty()) {
                skipped << tr("%1 (not supported)").arg(fromUtf8(p.key()));
                continue;
            }
            if (finished.count(p.key())) {
                skipped << tr("%1 (already finished)").arg(fromUtf8(p.key()));
                continue;
            }
            toRun.push_back(p);
        }
        const auto started = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < toRun.size() && !control().stop_requested(); ++i) {
            const kf::kb::Problem& problem = toRun[i];
            kf::kb::ProblemSearchOptions o = base;
            if (isSet) {
                const kf::kb::LevelSpent others = kf::kb::spent_by_others(store, toRun, problem.key());
                const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                const std::string spent =
                    kf::kb::share_level_budgets(level, others, elapsed, static_cast<std::int64_t>(toRun.size() - i), o);
                if (!spent.empty()) {
                    skipped << tr("%1 (the set's %2 budget is spent)").arg(fromUtf8(problem.key()), fromUtf8(spent));
                    continue;
                }
            }
            o.run_config = {{"level", problem.level},
                            {"id", problem.id},
                            {"name", problem.name},
                            {"file", problem.file.string()},
                            {"kb", std::filesystem::absolute(toPath(request.kbRoot)).string()},
                            {"budget", o.search.budget},
                            {"seed", request.config.seed},
                            {"trials", o.eval.trials},
                            {"reps", o.eval.reps},
                            {"tolerance", o.eval.tolerance},
                            {"baselines", o.eval.baselines},
                            {"device", wo.device},
                            {"origin", "app"}};
            runId_ = 0;
            key = problem.key();
            o.on_event = [this, &store, &key](const kf::SearchEvent& e) {
                // search_problem creates (or resumes) the run before its first event.
                if (runId_ == 0)
                    if (auto r = kf::ProjectView(store).latest_run(key)) {
                        runId_ = r->id;
                        Q_EMIT runStarted(runId_);
                        Q_EMIT stateChanged(QStringLiteral("running"));
                    }
                onEngineEvent(e, kf::ProjectView(store));
            };
            const kf::kb::ProblemSearchOutcome out = kf::kb::search_problem(problem, ev, store, o);
            ++searched;
            outcome.runId = out.run_id;
            outcome.reason = out.result.stop_reason;
            outcome.evaluations += out.result.evaluations;
            outcome.state = control().stop_requested() ? QStringLiteral("stopped") : QStringLiteral("done");
            if (auto r = kf::ProjectView(store).run(out.run_id)) outcome.state = runStateWord(r->state);
            if (out.result.best) {
                outcome.bestFitness = out.result.best->fitness;
                outcome.bestCandidate = out.result.best->id;
            }
        }
        if (isSet) {
            // The set's outcome: its last run, and what was searched and skipped.
            if (outcome.state.isEmpty()) outcome.state = control().stop_requested() ? QStringLiteral("stopped") : QStringLiteral("done");
            QString text = tr("%1 of %2 problem(s) of the set searched").arg(searched).arg(problems.size());
            if (!skipped.isEmpty()) text += tr("; skipped: %1").arg(skipped.join(QStringLiteral(", ")));
            outcome.reason = kf::StopReason{kf::StopKind::Other, 0, 0, text.toStdString()};
        }
    } catch (const std::exception& e) {
        outcome.runId = runId_;
        outcome.state = QStringLiteral("failed");
        outcome.reason = kf::StopReason{kf::StopKind::Other, 0, 0, e.what()};
    } catch (...) {
        outcome.runId = runId_;
        outcome.state = QStringLiteral("failed");
        outcome.reason = kf::StopReason{kf::StopKind::Other, 0, 0, tr("unknown error in the engine thread").toStdString()};
    }
    if (outcome.state == QLatin1String("failed") && opened && !key.empty()) {
        // A run the search opened and left running is marked failed, as the engine does for
        // native runs (the next start on the problem resumes it all the same).
        try {
            if (auto r = opened->latest_run(key); r && r->state == kf::RunState::Running) {
                opened->set_run_state(r->id, kf::RunState::Failed, outcome.reason.text);
                outcome.runId = r->id;
            }
        } catch (const std::exception&) {
            // The store itself failed: the outcome says why the run did.
        }
    }
    finish(outcome);
}

}  // namespace kfgui
