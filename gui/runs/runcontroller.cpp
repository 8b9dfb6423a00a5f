#include "runs/runcontroller.h"

#include <QThread>

#include "kf/run_control.h"
#include "runs/searchworker.h"

namespace kfgui {

RunController::RunController(QObject* parent) : QObject(parent) {
    qRegisterMetaType<kfgui::EngineEvent>();
    qRegisterMetaType<kfgui::EngineEventList>("kfgui::EngineEventList");
    qRegisterMetaType<kfgui::RunOutcome>();
    qRegisterMetaType<kf::RunState>();
    qRegisterMetaType<kfgui::RunRequest>();
}

RunController::~RunController() {
    if (control_) {
        control_->request_stop();
        control_->set_paused(false);
    }
    join();
}

bool RunController::start(const RunRequest& request) {
    if (isActive()) return false;
    projectDir_ = request.projectDir;
    if (!startJob([request](SearchWorker& worker) { worker.run(request); })) return false;
    pausable_ = !request.isKernelBench();
    return true;
}

bool RunController::startJob(std::function<void(SearchWorker&)> job) {
    if (isActive()) return false;
    control_ = std::make_shared<kf::RunControl>();
    pausable_ = true;
    thread_ = new QThread(this);
    thread_->setObjectName(QStringLiteral("kf-search"));
    worker_ = new SearchWorker(control_);
    worker_->moveToThread(thread_);
    runId_ = 0;
    // Queued: the worker's signals come from the engine thread.
    connect(worker_, &SearchWorker::eventsReady, this, &RunController::eventsReady, Qt::QueuedConnection);
    connect(worker_, &SearchWorker::runStarted, this, [this](qint64 id) {
        runId_ = id;
        Q_EMIT runStarted(id);
    }, Qt::QueuedConnection);
    connect(worker_, &SearchWorker::stateChanged, this, [this](kf::RunState s) {
        // A late Running must not hide a stop the user already asked for.
        if (state_ != RunPhase::Stopping) setState(runPhase(s));
    }, Qt::QueuedConnection);
    connect(worker_, &SearchWorker::finished, this, &RunController::onFinished, Qt::QueuedConnection);
    thread_->start();
    setState(RunPhase::Starting);
    SearchWorker* worker = worker_;
    QMetaObject::invokeMethod(worker_, [worker, job = std::move(job)] { job(*worker); }, Qt::QueuedConnection);
    return true;
}

void RunController::pause() {
    if (!isActive() || !control_ || !pausable_) return;
    control_->set_paused(true);
    if (state_ == RunPhase::Running || state_ == RunPhase::Starting) setState(RunPhase::Pausing);
}

void RunController::resume() {
    if (!isActive() || !control_) return;
    control_->set_paused(false);
    if (state_ == RunPhase::Paused || state_ == RunPhase::Pausing) setState(RunPhase::Running);
}

void RunController::stop() {
    if (!isActive() || !control_) return;
    control_->request_stop();
    control_->set_paused(false);
    setState(RunPhase::Stopping);
}

bool RunController::inject(const kf::Proposal& proposal, int island) {
    if (!isActive() || !control_) return false;
    control_->inject(proposal, island);
    return true;
}

void RunController::setState(RunPhase state) {
    if (state == state_) return;
    state_ = state;
    Q_EMIT stateChanged(state_);
}

void RunController::join() {
    if (!thread_) return;
    thread_->quit();
    thread_->wait();
    delete worker_;  // its thread has ended: deleting it here is safe
    worker_ = nullptr;
    delete thread_;
    thread_ = nullptr;
}

void RunController::onFinished(const RunOutcome& outcome) {
    join();
    control_.reset();
    if (outcome.runId > 0) runId_ = outcome.runId;
    setState(runPhase(outcome.state));
    Q_EMIT finished(outcome);
}

}  // namespace kfgui
