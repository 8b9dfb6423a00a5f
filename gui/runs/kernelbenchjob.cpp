// The KernelBench side of SearchWorker: one problem's search through kf::kb::search_problem.
#include "runs/searchworker.h"

#include <algorithm>
#include <optional>
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
    try {
        const kf::kb::Problem problem = kf::kb::find_problem(toPath(request.kbRoot), request.kbLevel, request.kbId);
        if (const std::string why = kf::kb::unsupported_reason(problem); !why.empty()) throw kf::Error(why);
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

        kf::kb::ProblemSearchOptions o;
        // Settings › Executor: how the worker evaluates a ModelNew, as `kernelbench run` takes it.
        if (request.kbTrials < 1 || request.kbReps < 1)
            throw kf::Error(tr("KernelBench trials and timed calls must be at least 1").toStdString());
        const std::string tolerance = request.kbTolerance.toStdString();
        if (kf::kb::describe_tolerance(tolerance).empty())
            throw kf::Error(tr("unknown KernelBench tolerance policy '%1' (Settings › Executor)")
                                .arg(request.kbTolerance)
                                .toStdString());
        o.eval.trials = request.kbTrials;
        o.eval.reps = request.kbReps;
        o.eval.tolerance = tolerance;
        o.eval.baselines.clear();
        for (const QString& b : request.kbBaselines) {
            if (b != QLatin1String("eager") && b != QLatin1String("compile"))
                throw kf::Error(tr("unknown KernelBench baseline '%1' (eager or compile)").arg(b).toStdString());
            o.eval.baselines.push_back(b.toStdString());
        }
        o.search.islands.islands = request.config.islands;
        o.search.islands.population = request.config.population;
        o.search.budget = request.config.budget;
        o.search.time_limit_s = request.config.timeLimitS;
        o.search.seed = static_cast<std::uint64_t>(request.config.seed);
        o.jobs = request.config.compileThreads > 0 ? request.config.compileThreads
                                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        if (!request.llmConfig.isEmpty()) {
            const nlohmann::json j = nlohmann::json::parse(request.llmConfig.toStdString(), nullptr, false);
            if (j.is_discarded()) throw kf::Error(tr("the LLM configuration is not valid JSON").toStdString());
            auto cfg = std::make_shared<kf::llm::LlmConfig>(kf::llm::parse_llm_config(j));
            for (kf::llm::ProviderConfig& p : cfg->providers) {
                const QString apiKey = request.llmKeys.value(fromUtf8(p.name));
                if (!apiKey.isEmpty()) p.api_key = apiKey.toStdString();
            }
            if (!cfg->prompts_dir.empty()) o.prompts_dir = cfg->prompts_dir;
            o.llm = cfg;
            // The islands' experts as `kfoundry kernelbench run --llm-config` sets them.
            o.search.island_experts = {{"llm:memory", "llm:fusion", "tuner"},
                                       {"llm:compute", "llm:warp", "tuner"},
                                       {"llm:fusion", "llm:occupancy", "tuner"},
                                       {"llm:warp", "llm:memory", "tuner"}};
        } else {
            o.search.island_experts = {{"tuner"}};
        }
        if (!request.libraryPath.isEmpty()) o.experience_library = toPath(request.libraryPath);
        o.run_config = {{"level", problem.level},
                        {"id", problem.id},
                        {"name", problem.name},
                        {"file", problem.file.string()},
                        {"kb", std::filesystem::absolute(toPath(request.kbRoot)).string()},
                        {"budget", request.config.budget},
                        {"seed", request.config.seed},
                        {"trials", o.eval.trials},
                        {"reps", o.eval.reps},
                        {"tolerance", o.eval.tolerance},
                        {"baselines", o.eval.baselines},
                        {"device", wo.device},
                        {"origin", "app"}};
        // Also asked from the LLM threads: the thread-safe flag alone, no flushing here.
        o.should_stop = [this] { return control().stop_requested(); };
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
        outcome.runId = out.run_id;
        outcome.reason = out.result.stop_reason;
        outcome.evaluations = out.result.evaluations;
        outcome.state = control().stop_requested() ? QStringLiteral("stopped") : QStringLiteral("done");
        if (auto r = kf::ProjectView(store).run(out.run_id)) outcome.state = runStateWord(r->state);
        if (out.result.best) {
            outcome.bestFitness = out.result.best->fitness;
            outcome.bestCandidate = out.result.best->id;
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
