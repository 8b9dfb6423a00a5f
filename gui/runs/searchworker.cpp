#include "runs/searchworker.h"

#include "engine.h"

#include <algorithm>
#include <exception>
#include <optional>

#include "kf/engine.h"
#include "kf/evaluator.h"
#include "kf/exec.h"
#include "kf/evolution.h"
#include "kf/llm.h"
#include "kf/run_control.h"
#include "kf/store.h"
#include "kf/task.h"
#include "paths.h"

namespace kfgui {

namespace {

constexpr int kBatchEvents = 256;
constexpr auto kBatchInterval = std::chrono::milliseconds(30);

}  // namespace

std::shared_ptr<kf::llm::LlmEnsemble> makeEnsemble(const RunRequest& request) {
    const nlohmann::json j = nlohmann::json::parse(request.llmConfig.toStdString(), nullptr, false);
    if (j.is_discarded()) throw kf::Error(SearchWorker::tr("the LLM configuration is not valid JSON").toStdString());
    kf::llm::LlmConfig cfg = kf::llm::parse_llm_config(j);
    // A key from the keyring wins over the provider's environment variable.
    for (kf::llm::ProviderConfig& p : cfg.providers) {
        const QString key = request.llmKeys.value(fromUtf8(p.name));
        if (!key.isEmpty()) p.api_key = key.toStdString();
    }
    const std::filesystem::path prompts = cfg.prompts_dir.empty() ? kf::resources_dir() / "prompts" : cfg.prompts_dir;
    return kf::llm::LlmEnsemble::create(cfg, prompts);
}

void addStoredDetails(EngineEvent& event, const kf::ProjectView& store) {
    if (event.member <= 0) return;
    if (auto c = store.candidate(event.member)) {
        event.generation = c->generation;
        if (event.expert.isEmpty()) event.expert = fromUtf8(c->expert);
    }
    auto e = store.evaluation_of(event.member);
    if (!e || !e->diagnosis.is_object()) return;
    const nlohmann::json& d = e->diagnosis;
    if (auto t = d.find("timing"); t != d.end() && t->is_object())
        event.medianMs = t->value("median_ms", -1.0);
    if (auto r = d.find("roofline"); r != d.end() && r->is_object()) {
        event.gbps = r->value("achieved_gbps", -1.0);
        event.bound = fromUtf8(r->value("bound", std::string()));
    }
}

SearchWorker::SearchWorker(std::shared_ptr<kf::RunControl> control, QObject* parent)
    : QObject(parent), control_(std::move(control)), lastFlush_(std::chrono::steady_clock::now()) {}

SearchWorker::~SearchWorker() = default;

void SearchWorker::publish(const EngineEvent& event) {
    pending_.append(event);
    const auto now = std::chrono::steady_clock::now();
    if (pending_.size() >= kBatchEvents || now - lastFlush_ >= kBatchInterval) flush();
}

void SearchWorker::flush() {
    lastFlush_ = std::chrono::steady_clock::now();
    if (pending_.isEmpty()) return;
    EngineEventList batch;
    batch.swap(pending_);
    Q_EMIT eventsReady(batch);
}

void SearchWorker::onEngineEvent(const kf::SearchEvent& e, const kf::ProjectView& store) {
    EngineEvent event = toEngineEvent(e);
    if (event.isEvaluation()) addStoredDetails(event, store);
    publish(event);
    // The engine pauses itself (kf::RunControl::set_paused) and says so with these events.
    if (event.kind == kf::EventKind::Paused) Q_EMIT stateChanged(kf::RunState::Paused);
    if (event.kind == kf::EventKind::Resumed) Q_EMIT stateChanged(kf::RunState::Running);
    // The last events of a batch come right before the next (long) evaluation: send the
    // stop event at once rather than leaving it in the queue.
    if (event.kind == kf::EventKind::Stopped) flush();
}

bool SearchWorker::pollStop() {
    // Polled by the search loop between results (at least every 200 ms while it waits): the
    // moment to send what is queued, so that nothing lingers while a long evaluation runs.
    flush();
    return control_->stop_requested();
}

void SearchWorker::run(const RunRequest& request) {
    if (request.isKernelBench()) {
        runKernelBench(request);
        return;
    }
    RunOutcome outcome;
    runId_ = 0;
    try {
        const auto backend = kf::backend_from_string(request.config.backend.toStdString());
        if (!backend) throw kf::Error(tr("unknown backend %1").arg(request.config.backend).toStdString());
        kf::SearchRequest search;
        search.project = toPath(request.projectDir);
        search.task = kf::load_task(toPath(request.taskDir));
        search.evaluator.worker.backend = *backend;
        search.evaluator.worker.device = request.config.device;
        if (!request.workerPath.isEmpty()) search.evaluator.worker.worker = toPath(request.workerPath);
        search.evaluator.compile_threads = static_cast<unsigned>(std::max(0, request.config.compileThreads));
        // A Slurm job, where the settings say so.
        search.evaluator.worker = kf::executor_worker(request.executor, search.evaluator.worker);
        applyRunConfig(request.config, search.options);
        search.options.control = control_.get();
        if (!request.libraryPath.isEmpty()) search.options.experience_library = toPath(request.libraryPath);
        if (!request.llmConfig.isEmpty()) search.options.llm = makeEnsemble(request);

        // The app's engine owns the run: the device's worker (shared with hand evaluations
        // there), the run's store connection and its life; this thread hears its events.
        kf::SearchCallbacks callbacks;
        callbacks.on_run = [this](std::int64_t run, bool) {
            runId_ = run;
            Q_EMIT runStarted(runId_);
            Q_EMIT stateChanged(kf::RunState::Running);
        };
        callbacks.on_event = [this](const kf::SearchEvent& e, const kf::ProjectView& store) { onEngineEvent(e, store); };
        callbacks.should_stop = [this] { return pollStop(); };
        kf::EvolveOutcome out = engine().run_search(search, callbacks);
        outcome.runId = out.run_id;
        outcome.reason = out.result.stop_reason;
        outcome.evaluations = out.result.evaluations;
        outcome.state = control_->stop_requested() ? kf::RunState::Stopped : kf::RunState::Done;
        if (auto r = kf::ProjectView::open(search.project).run(out.run_id)) outcome.state = r->state;
        if (out.result.best) {
            outcome.bestFitness = out.result.best->fitness;
            outcome.bestCandidate = out.result.best->id;
        }
    } catch (const std::exception& e) {
        // The engine has marked the run failed, when there was one.
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

void SearchWorker::finish(const RunOutcome& outcome) {
    flush();
    Q_EMIT finished(outcome);
}

}  // namespace kfgui
