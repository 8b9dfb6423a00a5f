#pragma once
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

#include "kf/diagnosis.h"
#include "kf/evaluator.h"

namespace kfgui {

/** What to evaluate: an edited source, the candidate it came from and where to store it. */
struct EvaluationRequest {
    quint64 serial = 0;  ///< lets the view drop replies to requests it no longer shows
    QString projectDir;
    qint64 parentId = 0;
    QString source;
    QString workerPath;  ///< kfoundry-worker; empty: next to the running executable
    /** A candidate of a KernelBench run: the Python worker (empty: $KF_PYTHON or python3, and
        the bundled kb_worker.py) and its device when the run does not name one ("cpu" or an ordinal). */
    QString python, kbWorker, kbDevice;
    kf::EvalOptions options;
    /** Set by the view to cancel: checked before compiling, before running in the worker
        process and before storing, and polled while the worker runs (which is then stopped). */
    std::shared_ptr<std::atomic<bool>> cancelled;
};

/** The outcome: the diagnosis and the id of the stored user candidate (0 when not stored). */
struct EvaluationResult {
    quint64 serial = 0;
    qint64 parentId = 0;
    qint64 candidateId = 0;
    std::optional<kf::Diagnosis> diagnosis;
    QString error;  ///< why there is no diagnosis, or why it was not stored
    bool cancelled = false;  ///< cancelled by the user: nothing was stored
};

/**
 * Lives on its own thread: compiles and evaluates edited sources with the app engine's
 * evaluator of the device (shared with a search on the same device, whose current
 * evaluation it waits for: kfgui::engine()), or an edited ModelNew of a KernelBench run with
 * the Python worker (kf::kb::evaluate_by_hand), and stores each result in the project as a
 * user-authored child of the candidate it was edited from. Always answers with finished().
 */
class EvaluationWorker : public QObject {
    Q_OBJECT

public:
    explicit EvaluationWorker(QObject* parent = nullptr);
    ~EvaluationWorker() override;

public Q_SLOTS:
    void evaluate(const kfgui::EvaluationRequest& request);

Q_SIGNALS:
    void finished(const kfgui::EvaluationResult& result);

private:
    EvaluationResult run(const EvaluationRequest& request);
};

}  // namespace kfgui

Q_DECLARE_METATYPE(kfgui::EvaluationRequest)
Q_DECLARE_METATYPE(kfgui::EvaluationResult)
