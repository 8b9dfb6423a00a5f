#pragma once
#include <chrono>
#include <memory>

#include <QObject>

#include "runs/engineevent.h"
#include "runs/runconfig.h"

namespace kf {
namespace llm {
class LlmEnsemble;
}
class ProjectView;
class RunControl;
struct SearchEvent;
}  // namespace kf

namespace kfgui {

/**
 * Runs one search on the thread it lives on (moved to a QThread by RunController). It opens
 * its own connection to the project store, calls kf::evolve, and turns engine events into
 * EngineEvent values sent in batches through a queued signal. Every exception is caught and
 * reported as a failed run; finished() is always emitted, exactly once per run().
 */
class SearchWorker : public QObject {
    Q_OBJECT

public:
    explicit SearchWorker(std::shared_ptr<kf::RunControl> control, QObject* parent = nullptr);
    ~SearchWorker() override;

    /** Runs the search to its end (call it on the worker's thread); a KernelBench request goes to runKernelBench. */
    void run(const kfgui::RunRequest& request);
    /**
     * The search on one KernelBench problem (kf::kb::search_problem) with the Python worker,
     * in a store connection of its own: LLM experts when the request carries a configuration,
     * else the problem's reference and the tuner. Stop ends it; it resumes on the next start.
     */
    void runKernelBench(const kfgui::RunRequest& request);

    /**
     * Queues one event for the GUI. A batch goes out when it holds 256 events or 30 ms have
     * passed since the last one went out; flush() sends the rest. Called on the engine thread.
     */
    void publish(const EngineEvent& event);
    void flush();
    /** Sends what is queued, then finished(outcome). run() ends with it. */
    void finish(const RunOutcome& outcome);
    /** The run's controls (stop, pause, injections), shared with the GUI thread. */
    kf::RunControl& control() { return *control_; }

Q_SIGNALS:
    void runStarted(qint64 runId);
    void eventsReady(const kfgui::EngineEventList& events);
    /** Running or Paused, as the engine reports it (its Paused and Resumed events). */
    void stateChanged(kf::RunState state);
    void finished(const kfgui::RunOutcome& outcome);

private:
    void onEngineEvent(const kf::SearchEvent& e, const kf::ProjectView& store);
    bool pollStop();

    std::shared_ptr<kf::RunControl> control_;
    EngineEventList pending_;
    std::chrono::steady_clock::time_point lastFlush_;
    qint64 runId_ = 0;
};

/**
 * The LLM experts of a request: its configuration with the keys it carries (a key from the
 * keyring wins over the provider's environment variable). Throws kf::Error with the reason.
 */
std::shared_ptr<kf::llm::LlmEnsemble> makeEnsemble(const RunRequest& request);

/** Adds what the store knows about an evaluated candidate: generation, timing, roofline. */
void addStoredDetails(EngineEvent& event, const kf::ProjectView& store);

}  // namespace kfgui
