#pragma once
#include <functional>
#include <memory>

#include <QObject>
#include <QString>

#include "runs/engineevent.h"
#include "runs/runconfig.h"
#include "runs/runphase.h"

class QThread;

namespace kf {
class RunControl;
struct Proposal;
}  // namespace kf

namespace kfgui {

class SearchWorker;

/**
 * Starts, pauses, resumes and stops one search at a time. The search runs in a SearchWorker
 * moved to a QThread of its own; stop, pause and injections go through a kf::RunControl.
 * The thread is always joined (when the run ends, and in the destructor after asking the run
 * to stop), never detached.
 */
class RunController : public QObject {
    Q_OBJECT

public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;

    /** Idle, Starting, Running, Pausing, Paused, Stopping, Done, Stopped or Failed. */
    RunPhase state() const { return state_; }
    bool isActive() const { return thread_ != nullptr; }
    qint64 runId() const { return runId_; }
    QString projectDir() const { return projectDir_; }

    /** Starts a run; false (and nothing happens) while another is active. */
    bool start(const RunRequest& request);
    /**
     * Runs `job` on a fresh engine thread through the same worker, signals and joins as a
     * search (start() is startJob with SearchWorker::run). The job must end with
     * SearchWorker::finish(). Used by tests to replay or flood events.
     */
    bool startJob(std::function<void(SearchWorker&)> job);
    void pause();
    void resume();
    void stop();
    /** Queues a user's candidate for the running search; false when no run is active. */
    bool inject(const kf::Proposal& proposal, int island);


Q_SIGNALS:
    void runStarted(qint64 runId);
    void eventsReady(const kfgui::EngineEventList& events);
    void stateChanged(kfgui::RunPhase state);
    void finished(const kfgui::RunOutcome& outcome);

private:
    void setState(RunPhase state);
    void onFinished(const RunOutcome& outcome);
    void join();

    QThread* thread_ = nullptr;
    SearchWorker* worker_ = nullptr;
    std::shared_ptr<kf::RunControl> control_;
    RunPhase state_ = RunPhase::Idle;
    QString projectDir_;
    qint64 runId_ = 0;
    bool pausable_ = true;  ///< a KernelBench search has no pause
};

}  // namespace kfgui
