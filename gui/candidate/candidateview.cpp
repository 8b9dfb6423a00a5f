#include "candidate/candidateview.h"

#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include <exception>

#include "candidate/diagnosispanel.h"
#include "candidate/evaluationworker.h"
#include "preferences.h"
#include "candidate/provenancepanel.h"
#include "editor/codeeditor.h"

namespace kfgui {

CandidateView::CandidateView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      state_(new QLabel(this)),
      evaluate_(new QPushButton(tr("Evaluate"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      revert_(new QPushButton(tr("Revert"), this)),
      inject_(new QPushButton(tr("Inject into search…"), this)),
      editor_(new CodeEditor(this)),
      stored_(new DiagnosisPanel(this)),
      edited_(new DiagnosisPanel(this)),
      provenance_(new ProvenancePanel(this)),
      diagnoses_(new QSplitter(Qt::Horizontal, this)),
      worker_(new EvaluationWorker) {
    qRegisterMetaType<kfgui::EvaluationResult>();
    title_->setObjectName(QStringLiteral("candidateTitle"));
    state_->setObjectName(QStringLiteral("evaluationState"));
    evaluate_->setObjectName(QStringLiteral("evaluateButton"));
    evaluate_->setToolTip(tr("Compile and evaluate the edited source; the result is stored as your candidate"));
    cancel_->setObjectName(QStringLiteral("cancelEvaluationButton"));
    cancel_->setToolTip(tr("Stop the evaluation in progress; nothing is stored"));
    revert_->setObjectName(QStringLiteral("revertButton"));
    inject_->setObjectName(QStringLiteral("injectButton"));
    inject_->setToolTip(tr("Add the edited source to an island of the running search"));
    editor_->setObjectName(QStringLiteral("candidateEditor"));
    stored_->setObjectName(QStringLiteral("storedDiagnosis"));
    stored_->setTitle(tr("Stored diagnosis"));
    edited_->setObjectName(QStringLiteral("editedDiagnosis"));
    edited_->setTitle(tr("Edited source"));
    edited_->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(title_, 1);
    buttons->addWidget(state_);
    buttons->addWidget(revert_);
    buttons->addWidget(evaluate_);
    buttons->addWidget(cancel_);
    buttons->addWidget(inject_);

    // Editor on the left; on the right the diagnoses (stored beside edited) over provenance.
    diagnoses_->addWidget(stored_);
    diagnoses_->addWidget(edited_);
    auto* side = new QTabWidget(this);
    side->setObjectName(QStringLiteral("candidateTabs"));
    side->addTab(diagnoses_, tr("Diagnosis"));
    side->addTab(provenance_, tr("Provenance and rationale"));
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("candidateSplitter"));
    split->addWidget(editor_);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addWidget(split, 1);

    connect(evaluate_, &QPushButton::clicked, this, &CandidateView::evaluate);
    connect(revert_, &QPushButton::clicked, this, &CandidateView::revert);
    connect(cancel_, &QPushButton::clicked, this, &CandidateView::cancelEvaluation);
    connect(inject_, &QPushButton::clicked, this, &CandidateView::requestInject);
    worker_->moveToThread(&thread_);
    connect(worker_, &EvaluationWorker::finished, this, &CandidateView::onEvaluated, Qt::QueuedConnection);
    thread_.setObjectName(QStringLiteral("candidate-evaluation"));
    thread_.start();
    setEvaluating(false);
}

CandidateView::~CandidateView() {
    // Joins the thread (an evaluation in progress is cancelled: a compile finishes, a run in
    // the worker process is stopped), then frees the worker and its evaluator, which no
    // other thread uses any more.
    if (cancelFlag_) *cancelFlag_ = true;
    thread_.quit();
    thread_.wait();
    delete worker_;
}

void CandidateView::showCandidate(const QString& projectDir, qint64 candidateId) {
    projectDir_ = projectDir;
    candidateId_ = candidateId;
    ++serial_;  // a reply for the previous candidate no longer applies
    // The previous candidate's evaluation keeps running (and is stored) unless cancelled; the
    // view no longer waits for it.
    cancelFlag_.reset();
    edited_->hide();
    editor_->clearDiagnostics();
    storedDiagnostics_.clear();
    provenance_->clear();
    try {
        const kf::ProjectView store = kf::ProjectView::open(projectDir.toStdString());
        const std::optional<kf::CandidateRecord> c = store.candidate(candidateId);
        if (!c) {
            title_->setText(tr("Candidate %1 not found").arg(candidateId));
            editor_->clear();
            stored_->showMessage(tr("The project has no candidate %1.").arg(candidateId));
            setEvaluating(false);
            return;
        }
        const std::optional<kf::RunRecord> run = store.run(c->run_id);
        islands_ = run ? qMax(1, run->config.value("islands", 1)) : 1;
        storedSource_ = QString::fromStdString(c->source);
        editor_->setText(storedSource_);
        provenance_->setCandidate(*c, run);
        title_->setText(tr("Candidate %1 — %2, run %3").arg(candidateId).arg(QString::fromStdString(c->task)).arg(c->run_id));
        const std::optional<kf::EvaluationRecord> e = store.evaluation_of(candidateId);
        if (!e) {
            stored_->showMessage(tr("Not evaluated yet."));
        } else {
            kf::Diagnosis d;
            kf::from_json(e->diagnosis, d);
            stored_->setDiagnosis(d);
            storedDiagnostics_ = d.compile.diagnostics;
            editor_->setDiagnostics(storedDiagnostics_);
        }
    } catch (const std::exception& ex) {
        title_->setText(tr("Candidate %1").arg(candidateId));
        stored_->showMessage(tr("Cannot read the candidate: %1").arg(QString::fromUtf8(ex.what())));
    }
    setEvaluating(false);
}

void CandidateView::setEvaluating(bool on) {
    evaluating_ = on;
    const bool loaded = candidateId_ != 0 && !projectDir_.isEmpty();
    evaluate_->setEnabled(loaded && !on);
    inject_->setEnabled(loaded);
    revert_->setEnabled(loaded && !on);
    cancel_->setEnabled(on && cancelFlag_ && !cancelFlag_->load());
    state_->setText(on ? tr("Evaluating…") : QString());
}

QString CandidateView::stateText() const { return state_->text(); }

void CandidateView::cancelEvaluation() {
    if (!evaluating_ || !cancelFlag_) return;
    *cancelFlag_ = true;
    cancel_->setEnabled(false);
    state_->setText(tr("Cancelling…"));
}

void CandidateView::evaluate() {
    if (evaluating_ || candidateId_ == 0) return;
    EvaluationRequest request;
    request.serial = ++serial_;
    request.projectDir = projectDir_;
    request.parentId = candidateId_;
    request.source = editor_->text();
    request.workerPath = workerPath_;
    request.options = options_;
    // For a KernelBench candidate: Settings › Executor's Python worker, on the default device
    // where its run did not record one.
    request.python = prefs::kbPython.get();
    request.kbWorker = prefs::kbWorker.get();
    request.kbDevice = prefs::backend.get() == QLatin1String("cuda") ? QString::number(prefs::device.get())
                                                                      : QStringLiteral("cpu");
    cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
    request.cancelled = cancelFlag_;
    setEvaluating(true);
    EvaluationWorker* worker = worker_;
    QMetaObject::invokeMethod(worker, [worker, request] { worker->evaluate(request); }, Qt::QueuedConnection);
}

void CandidateView::onEvaluated(const EvaluationResult& result) {
    if (result.serial != serial_) {
        // Another candidate is shown now; the result was stored all the same.
        Q_EMIT evaluationFinished(result.candidateId);
        return;
    }
    cancelFlag_.reset();
    setEvaluating(false);
    if (result.cancelled) {
        state_->setText(tr("Cancelled"));
        Q_EMIT evaluationFinished(0);
        return;
    }
    lastStoredId_ = result.candidateId;
    if (edited_->isHidden()) {
        edited_->show();
        // Old and new side by side, half each (a widget shown late gets no room by itself).
        diagnoses_->setSizes({1, 1});
    }
    if (result.diagnosis) {
        edited_->setDiagnosis(*result.diagnosis);
        editor_->setDiagnostics(result.diagnosis->compile.diagnostics);
        edited_->setTitle(result.candidateId ? tr("Edited source (stored as candidate %1)").arg(result.candidateId)
                                             : tr("Edited source (not stored)"));
    } else {
        edited_->setTitle(tr("Edited source"));
        edited_->showMessage(result.error);
    }
    if (!result.error.isEmpty()) state_->setText(result.error);
    Q_EMIT evaluationFinished(result.candidateId);
}

void CandidateView::requestInject() {
    if (candidateId_ == 0) return;
    bool ok = false;
    const int island = QInputDialog::getInt(this, tr("Inject into search"),
                                            tr("Island that receives the edited source:"), 0, 0, islands_ - 1, 1, &ok);
    if (ok) Q_EMIT injectRequested(editor_->text(), island, candidateId_);
}

void CandidateView::revert() {
    editor_->setText(storedSource_);
    editor_->setDiagnostics(storedDiagnostics_);
    edited_->hide();
}

}  // namespace kfgui
