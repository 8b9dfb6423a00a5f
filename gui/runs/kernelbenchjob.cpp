// The KernelBench side of SearchWorker: one problem's search, or a problem set's one problem
// after the other, as a request to the app's engine (kf::Engine::run_kernelbench).
#include "runs/searchworker.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "engine.h"
#include "enginewords.h"
#include "kf/engine.h"
#include "kf/kernelbench.h"
#include "kf/kernelbench_search.h"
#include "kf/llm.h"
#include "kf/run_control.h"
#include "kf/store.h"
#include "paths.h"

namespace kfgui {

namespace {

/** The problems asked for (a set, or one problem) and the Python worker that evaluates them. */
void setProblemsAndWorker(const RunRequest& request, bool isSet, kf::KernelBenchRequest& kb) {
    kb.project = toPath(request.projectDir);
    kf::kb::ProblemSetRequest& set = kb.problems;
    for (int id : isSet ? request.kbIds : QList<int>{request.kbId})
        set.problems.push_back(kf::kb::find_problem(toPath(request.kbRoot), request.kbLevel, id));
    set.single = !isSet;
    set.skip_finished = isSet && request.kbSkipFinished;

    if (!request.python.isEmpty()) kb.worker.python = request.python.toStdString();
    if (!request.kbWorker.isEmpty()) kb.worker.script = toPath(request.kbWorker);
    // The host backend is the worker's CPU testing mode; CUDA runs on the chosen device.
    kb.worker.device =
        request.config.backend == QLatin1String("cuda") ? std::to_string(request.config.device) : std::string("cpu");
    kb.worker.executor = request.executor;
}

/** Settings › Executor: how the worker evaluates a ModelNew, as `kernelbench run` takes it. */
void setEvalOptions(const RunRequest& request, kf::kb::EvalOptions& eval) {
    if (request.kbTrials < 1 || request.kbReps < 1)
        throw kf::Error(SearchWorker::tr("KernelBench trials and timed calls must be at least 1").toStdString());
    const std::string tolerance = request.kbTolerance.toStdString();
    if (kf::kb::describe_tolerance(tolerance).empty())
        throw kf::Error(SearchWorker::tr("unknown KernelBench tolerance policy '%1' (Settings › Executor)")
                            .arg(request.kbTolerance)
                            .toStdString());
    eval.trials = request.kbTrials;
    eval.reps = request.kbReps;
    eval.tolerance = tolerance;
    eval.baselines.clear();
    for (const QString& b : request.kbBaselines) {
        if (b != QLatin1String("eager") && b != QLatin1String("compile"))
            throw kf::Error(
                SearchWorker::tr("unknown KernelBench baseline '%1' (eager or compile)").arg(b).toStdString());
        eval.baselines.push_back(b.toStdString());
    }
}

/** The LLM experts' configuration with the request's keys, and the islands' experts; without one, the tuner. */
void setLlmOptions(const RunRequest& request, kf::kb::ProblemSearchOptions& base) {
    if (!request.llmConfig.isEmpty()) {
        const nlohmann::json j = nlohmann::json::parse(request.llmConfig.toStdString(), nullptr, false);
        if (j.is_discarded())
            throw kf::Error(SearchWorker::tr("the LLM configuration is not valid JSON").toStdString());
        auto cfg = std::make_shared<kf::llm::LlmConfig>(kf::llm::parse_llm_config(j));
        for (kf::llm::ProviderConfig& p : cfg->providers) {
            const QString apiKey = request.llmKeys.value(fromUtf8(p.name));
            if (!apiKey.isEmpty()) p.api_key = apiKey.toStdString();
        }
        if (!cfg->prompts_dir.empty()) base.prompts_dir = cfg->prompts_dir;
        base.llm = cfg;
        // The islands' experts as `kfoundry kernelbench run --llm-config` sets them.
        base.search.island_experts = kf::kb::kLlmIslandExperts;
    } else {
        base.search.island_experts = {{"tuner"}};
    }
}

/** The request as the app's engine takes it: the problems, the worker, each search's options, the level's budgets. */
kf::KernelBenchRequest kernelBenchRequest(const RunRequest& request, bool isSet) {
    kf::KernelBenchRequest kb;
    setProblemsAndWorker(request, isSet, kb);
    kf::kb::ProblemSetRequest& set = kb.problems;
    kf::kb::ProblemSearchOptions& base = set.base;
    setEvalOptions(request, base.eval);
    base.search.islands.islands = request.config.islands;
    base.search.islands.population = request.config.population;
    base.search.budget = request.config.budget;
    base.search.time_limit_s = request.config.timeLimitS;
    base.search.seed = static_cast<std::uint64_t>(request.config.seed);
    base.jobs = request.config.compileThreads > 0 ? request.config.compileThreads
                                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    setLlmOptions(request, base);
    if (!request.libraryPath.isEmpty()) base.experience_library = toPath(request.libraryPath);

    // A level's budgets hold over the set, as `kernelbench run --level-budget ...` has them;
    // the LLM configuration's own budgets hold over it too.
    set.level.evaluations = request.kbLevelEvaluations;
    set.level.tokens = request.kbLevelTokens;
    set.level.cost = request.kbLevelCost;
    set.level.time_s = request.kbLevelTimeS;
    if (base.llm) set.level = kf::kb::with_llm_budgets(set.level, *base.llm);
    set.run_config = {{"kb", std::filesystem::absolute(toPath(request.kbRoot)).string()},
                      {"device", kb.worker.device},
                      {"origin", "app"}};
    return kb;
}

}  // namespace

void SearchWorker::runKernelBench(const RunRequest& request) {
    RunOutcome outcome;
    std::optional<kf::RunState> searchedState;  // the last problem's run; none when no problem was searched
    runId_ = 0;
    // A problem set (kbIds) is searched problem by problem; what was skipped, and why, is
    // told at the end.
    QStringList skipped;
    int searched = 0;
    const bool isSet = !request.kbIds.isEmpty();
    try {
        const kf::KernelBenchRequest kb = kernelBenchRequest(request, isSet);
        const std::size_t asked = kb.problems.problems.size();

        // The app's engine owns the run: the device's Python worker (shared with other
        // searches there), the run's store connection and its life; this thread hears its events.
        kf::KernelBenchCallbacks callbacks;
        // Also asked from the LLM threads: the thread-safe flag alone, no flushing here.
        callbacks.should_stop = [this] { return control().stop_requested(); };
        callbacks.on_run = [this](std::int64_t run, const kf::kb::Problem&) {
            runId_ = run;
            Q_EMIT runStarted(runId_);
            Q_EMIT stateChanged(kf::RunState::Running);
        };
        callbacks.on_event = [this](const kf::SearchEvent& e, const kf::ProjectView& store) { onEngineEvent(e, store); };
        callbacks.set.on_skipped = [&skipped](const kf::kb::Problem& p, const kf::kb::ProblemSkip& skip) {
            skipped << problemSkipText(fromUtf8(p.key()), skip);
        };
        callbacks.set.on_problem = [this](std::size_t, std::size_t, const kf::kb::Problem&, const kf::kb::ProblemSearchOptions&) {
            runId_ = 0;
        };
        callbacks.set.on_searched = [&](const kf::kb::Problem&, const kf::kb::ProblemSearchOutcome& out) {
            ++searched;
            outcome.runId = out.run_id;
            outcome.reason = out.result.stop_reason;
            outcome.evaluations += out.result.evaluations;
            searchedState = control().stop_requested() ? kf::RunState::Stopped : kf::RunState::Done;
            if (auto r = kf::ProjectView::open(kb.project).run(out.run_id)) searchedState = r->state;
            if (out.result.best) {
                outcome.bestFitness = out.result.best->fitness;
                outcome.bestCandidate = out.result.best->id;
            }
        };
        engine().run_kernelbench(kb, callbacks);
        // Nothing searched (skipped, or stopped before the first problem): stopped or done.
        outcome.state = searchedState.value_or(control().stop_requested() ? kf::RunState::Stopped : kf::RunState::Done);
        if (isSet) {
            // The set's outcome: its last run, and what was searched and skipped.
            QString text = tr("%1 of %2 problem(s) of the set searched").arg(searched).arg(asked);
            if (!skipped.isEmpty()) text += tr("; skipped: %1").arg(skipped.join(QStringLiteral(", ")));
            outcome.reason = kf::StopReason{kf::StopKind::Other, 0, 0, text.toStdString()};
        }
    } catch (const std::exception& e) {
        // The engine has marked the problem's run failed, when there was one.
        outcome.runId = runId_;
        outcome.state = kf::RunState::Failed;
        outcome.reason = kf::StopReason{kf::StopKind::Other, 0, 0, e.what()};
    } catch (...) {
        outcome.runId = runId_;
        outcome.state = kf::RunState::Failed;
        outcome.reason = kf::StopReason{kf::StopKind::Other, 0, 0, tr("unknown error in the engine thread").toStdString()};
    }
    finish(outcome);
}

}  // namespace kfgui
