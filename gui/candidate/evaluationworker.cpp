#include "candidate/evaluationworker.h"

#include "engine.h"

#include <exception>

#include "kf/engine.h"
#include "kf/kernelbench_search.h"
#include "kf/paths.h"
#include "kf/store.h"
#include "kf/task.h"

namespace kfgui {

namespace {

std::filesystem::path taskDirOf(const kf::RunRecord& run) {
    const std::string dir = run.config.value("task_dir", std::string());
    if (!dir.empty() && std::filesystem::exists(dir)) return dir;
    if (auto found = kf::resolve_task(run.task)) return *found;
    return {};
}

}  // namespace

EvaluationWorker::EvaluationWorker(QObject* parent) : QObject(parent) {}

EvaluationWorker::~EvaluationWorker() = default;

void EvaluationWorker::evaluate(const EvaluationRequest& request) {
    EvaluationResult result;
    // Whatever happens, the view hears back: it is waiting with its button disabled.
    try {
        result = run(request);
    } catch (const std::exception& e) {
        result.error = tr("Evaluation failed: %1").arg(QString::fromUtf8(e.what()));
    } catch (...) {
        result.error = tr("Evaluation failed for an unknown reason.");
    }
    result.serial = request.serial;
    result.parentId = request.parentId;
    Q_EMIT finished(result);
}

EvaluationResult EvaluationWorker::run(const EvaluationRequest& request) {
    EvaluationResult result;
    // What the edit starts from, read through a view; the engine writes the result.
    const kf::ProjectView project = kf::ProjectView::open(request.projectDir.toStdString());
    const std::optional<kf::CandidateRecord> parent = project.candidate(request.parentId);
    if (!parent) {
        result.error = tr("Candidate %1 is not in the project.").arg(request.parentId);
        return result;
    }
    const std::optional<kf::RunRecord> run = project.run(parent->run_id);
    if (!run) {
        result.error = tr("Run %1 is not in the project.").arg(parent->run_id);
        return result;
    }
    if (run->config.is_object() && run->config.value("kind", std::string()) == "kernelbench") {
        // A ModelNew: the Python worker judges it with the run's problem and options. A
        // cancel stops nothing in the worker; the result is then not stored.
        kf::kb::HandEvaluation edit;
        edit.project = project.dir();
        edit.parent = parent->id;
        edit.source = request.source.toStdString();
        edit.rationale = tr("Edited by hand from candidate %1.").arg(parent->id).toStdString();
        if (!request.python.isEmpty()) edit.worker.python = request.python.toStdString();
        if (!request.kbWorker.isEmpty()) edit.worker.script = request.kbWorker.toStdString();
        if (!request.kbDevice.isEmpty()) edit.worker.device = request.kbDevice.toStdString();
        if (request.cancelled) edit.cancelled = [flag = request.cancelled] { return flag->load(); };
        // The app engine's worker for the device: a search running there and this evaluation
        // take turns on it.
        edit.evaluator_for = [](const kf::kb::WorkerOptions& o) { return engine().kernelbench_evaluator(o); };
        const kf::kb::HandEvaluationResult done = kf::kb::evaluate_by_hand(edit);
        result.cancelled = done.cancelled;
        if (done.cancelled) return result;
        result.diagnosis = done.diagnosis;
        result.candidateId = done.candidate;
        return result;
    }
    const std::filesystem::path taskDir = taskDirOf(*run);
    if (taskDir.empty()) {
        result.error = tr("The task \"%1\" of run %2 cannot be found.").arg(QString::fromStdString(run->task)).arg(run->id);
        return result;
    }
    const auto backend = kf::backend_from_string(run->config.value("backend", std::string("host")));
    if (!backend) {
        result.error = tr("Run %1 names an unknown backend.").arg(run->id);
        return result;
    }

    kf::HandEvaluation edit;
    edit.project = project.dir();
    edit.task = kf::load_task(taskDir);
    edit.parent = *parent;
    edit.source = request.source.toStdString();
    edit.rationale = tr("Edited by hand from candidate %1.").arg(parent->id).toStdString();
    edit.evaluator.worker.backend = *backend;
    edit.evaluator.worker.worker = request.workerPath.toStdString();
    edit.options = request.options;
    if (request.cancelled) edit.cancelled = [flag = request.cancelled] { return flag->load(); };
    // On the app engine's evaluator of the device: after the evaluation a search there is
    // running, on the same worker.
    kf::HandEvaluationResult done = engine().evaluate_by_hand(edit);
    result.cancelled = done.cancelled;
    if (done.cancelled) return result;
    result.diagnosis = done.diagnosis;
    result.candidateId = done.candidate;
    return result;
}

}  // namespace kfgui
