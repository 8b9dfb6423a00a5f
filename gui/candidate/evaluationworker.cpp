#include "candidate/evaluationworker.h"

#include "engine.h"

#include <exception>

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
    // This thread's own connection: a ProjectStore belongs to one thread.
    kf::ProjectStore store = kf::ProjectStore::open(request.projectDir.toStdString());
    const std::optional<kf::CandidateRecord> parent = store.candidate(request.parentId);
    if (!parent) {
        result.error = tr("Candidate %1 is not in the project.").arg(request.parentId);
        return result;
    }
    const std::optional<kf::RunRecord> run = store.run(parent->run_id);
    if (!run) {
        result.error = tr("Run %1 is not in the project.").arg(parent->run_id);
        return result;
    }
    const std::filesystem::path taskDir = taskDirOf(*run);
    if (taskDir.empty()) {
        result.error = tr("The task \"%1\" of run %2 cannot be found.").arg(QString::fromStdString(run->task)).arg(run->id);
        return result;
    }
    const kf::Task task = kf::load_task(taskDir);
    const auto backend = kf::backend_from_string(run->config.value("backend", std::string("host")));
    if (!backend) {
        result.error = tr("Run %1 names an unknown backend.").arg(run->id);
        return result;
    }

    kf::EvalOptions options = request.options;
    if (parent->tunables.is_object())
        for (auto it = parent->tunables.begin(); it != parent->tunables.end(); ++it)
            if (it->is_number_integer()) options.tunables[it.key()] = it->get<std::int64_t>();
    kf::Candidate candidate;
    candidate.source = request.source.toStdString();
    candidate.name = "edited";
    auto cancelled = [&] { return request.cancelled && request.cancelled->load(); };
    // A cancel while the worker runs the candidate stops the worker there (kf::Cancelled).
    if (request.cancelled) options.cancel = [flag = request.cancelled] { return flag->load(); };
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }
    // The evaluation in its stages, so that a cancel between compiling and running in the
    // worker process ends it there.
    kf::EvaluatorConfig cfg;
    cfg.worker.backend = *backend;
    cfg.worker.worker = request.workerPath.toStdString();
    const std::shared_ptr<kf::Evaluator> shared = engine().evaluator(cfg);
    kf::Evaluator& evaluator = *shared;
    kf::Diagnosis d;
    evaluator.prepare(task);
    const kf::CompileResult compiled = evaluator.compile_stage(task, candidate, options, d);
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }
    if (compiled.ok) {
        try {
            evaluator.evaluate_stage(task, compiled, options, d);
        } catch (const kf::Cancelled&) {
            result.cancelled = true;
            return result;
        }
    }
    evaluator.finish(d);
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }
    result.diagnosis = d;

    kf::CandidateRecord child;
    child.run_id = parent->run_id;
    child.task = parent->task;
    child.source = candidate.source;
    child.expert = "user";  // the origin word of every kernel the user wrote (as injected ones)
    child.rationale = tr("Edited by hand from candidate %1.").arg(parent->id).toStdString();
    child.family = parent->family;
    child.author = "user";
    child.island = parent->island;
    child.generation = parent->generation + 1;
    child.tunables = parent->tunables;
    child.parents = {parent->id};
    store.transaction([&] {
        result.candidateId = store.add_candidate(child);
        store.add_evaluation(result.candidateId, d);
    });
    return result;
}

}  // namespace kfgui
