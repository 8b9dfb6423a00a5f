#pragma once
#include <QThread>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

#include "kf/evaluator.h"
#include "kf/store.h"

class QLabel;
class QPushButton;
class QSplitter;

namespace kfgui {

class CodeEditor;
class DiagnosisPanel;
class EvaluationWorker;
struct EvaluationResult;
class ProvenancePanel;

/** One candidate: its source in an editor, its diagnosis, rationale and provenance; the
    source can be edited, re-evaluated, stored as a user candidate or injected into a run. */
class CandidateView : public QWidget {
    Q_OBJECT

public:
    explicit CandidateView(QWidget* parent = nullptr);
    ~CandidateView() override;

    /** Loads candidate `candidateId` from the project store in `projectDir`. */
    void showCandidate(const QString& projectDir, qint64 candidateId);

    /** kfoundry-worker for re-evaluations; empty (default): next to the running executable. */
    void setWorkerPath(const QString& path) { workerPath_ = path; }
    /** Options of re-evaluations (trials, timing budget, time limit). */
    void setEvalOptions(const kf::EvalOptions& options) { options_ = options; }

    qint64 candidateId() const { return candidateId_; }
    /** The id of the user candidate the last evaluation stored; 0 when none. */
    qint64 lastStoredId() const { return lastStoredId_; }
    bool isEvaluating() const { return evaluating_; }
    QPushButton* cancelButton() const { return cancel_; }
    /** The evaluation state line ("Evaluating…", "Cancelled", an error). */
    QString stateText() const;
    CodeEditor* editor() const { return editor_; }
    DiagnosisPanel* storedDiagnosis() const { return stored_; }
    DiagnosisPanel* editedDiagnosis() const { return edited_; }
    ProvenancePanel* provenance() const { return provenance_; }

public Q_SLOTS:
    /** Compiles and evaluates the editor's source on the background thread. */
    void evaluate();
    /** Asks for an island, then emits injectRequested with the editor's source. */
    void requestInject();
    /** Puts the stored source back into the editor. */
    void revert();
    /** Cancels the evaluation in progress: nothing is stored and the view says "cancelled". */
    void cancelEvaluation();

Q_SIGNALS:
    /** The user asked to put `source` into island `island` of the running search. */
    void injectRequested(const QString& source, int island, qint64 parentId);
    /** An evaluation ended; `storedId` is the new user candidate, 0 when none was stored. */
    void evaluationFinished(qint64 storedId);

private:
    void onEvaluated(const EvaluationResult& result);
    void setEvaluating(bool on);

    QString projectDir_;
    qint64 candidateId_ = 0;
    qint64 lastStoredId_ = 0;
    int islands_ = 1;
    QString storedSource_;
    std::vector<kf::Diagnostic> storedDiagnostics_;
    QString workerPath_;
    kf::EvalOptions options_;
    quint64 serial_ = 0;
    bool evaluating_ = false;
    std::shared_ptr<std::atomic<bool>> cancelFlag_;

    QLabel* title_;
    QLabel* state_;
    QPushButton* evaluate_;
    QPushButton* cancel_;
    QPushButton* revert_;
    QPushButton* inject_;
    CodeEditor* editor_;
    DiagnosisPanel* stored_;
    DiagnosisPanel* edited_;
    ProvenancePanel* provenance_;
    QSplitter* diagnoses_;
    QThread thread_;
    EvaluationWorker* worker_;
};

}  // namespace kfgui
