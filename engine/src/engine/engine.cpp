#include "kf/engine.h"

#include <algorithm>

#include "kf/error.h"

namespace kf {

Engine::Engine() = default;
Engine::~Engine() = default;

std::shared_ptr<Evaluator> Engine::evaluator(const EvaluatorConfig& cfg) {
    std::string command;
    for (const auto& a : cfg.worker.command) command += a + '\0';
    Key key{cfg.worker.backend, cfg.worker.device, cfg.worker.worker.string(), command};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = evaluators_.find(key);
    if (it == evaluators_.end()) it = evaluators_.emplace(key, std::make_shared<Evaluator>(cfg)).first;
    return it->second;
}

std::size_t Engine::evaluators() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return evaluators_.size();
}

EvolveOutcome Engine::run_search(const SearchRequest& request, const SearchCallbacks& callbacks) {
    const Task& task = request.task;
    const Backend backend = request.evaluator.worker.backend;
    if (request.evaluator.worker.command.empty() && !task.supports(backend))
        throw Error("task " + task.name + " has no " + std::string(to_string(backend)) + " reference");

    // Every device answers before anything is stored.
    std::vector<std::shared_ptr<Evaluator>> devices;
    std::vector<int> ordinals{request.evaluator.worker.device};
    for (int d : request.more_devices)
        if (std::find(ordinals.begin(), ordinals.end(), d) == ordinals.end()) ordinals.push_back(d);
    for (int d : ordinals) {
        EvaluatorConfig cfg = request.evaluator;
        cfg.worker.device = d;
        devices.push_back(evaluator(cfg));
        try {
            devices.back()->worker().hello();
        } catch (const Error& e) {
            throw NoDevice("no " + std::string(to_string(backend)) + " device " + std::to_string(d) + ": " + e.what());
        }
    }

    // The run's own connection, on this thread, for the run's whole life.
    ProjectStore store = request.create_project
                             ? ProjectStore::open_or_create(request.project, request.project.filename().string())
                             : ProjectStore::open(request.project);
    const ProjectView view(store);
    EvolveOptions options = request.options;
    options.more_devices.clear();
    for (std::size_t i = 1; i < devices.size(); ++i) options.more_devices.push_back(devices[i].get());
    std::int64_t run = 0;
    options.on_run = [&](std::int64_t id, bool resumed) {
        run = id;
        if (request.options.on_run) request.options.on_run(id, resumed);
        if (callbacks.on_run) callbacks.on_run(id, resumed);
    };
    try {
        return evolve(
            task, *devices.front(), store, options,
            [&](const SearchEvent& e) {
                if (callbacks.on_event) callbacks.on_event(e, view);
            },
            callbacks.should_stop);
    } catch (const std::exception& e) {
        if (run > 0) {
            try {
                store.set_run_state(run, RunState::Failed, e.what());
            } catch (const std::exception&) {
                // The store itself may be what failed; the caller still hears of the first error.
            }
        }
        throw;
    }
}

Diagnosis Engine::profile(const CandidateProfile& request) {
    const std::shared_ptr<Evaluator> ev = evaluator(request.evaluator);
    try {
        ev->worker().hello();
    } catch (const Error& e) {
        throw NoDevice("no " + std::string(to_string(request.evaluator.worker.backend)) + " device: " + e.what());
    }
    if (request.on_stage) request.on_stage("evaluating");
    Diagnosis d = ev->evaluate(request.task, request.candidate, request.eval);
    if (request.on_stage && d.ok()) request.on_stage("profiling");
    ev->profile_into(d, request.task, request.candidate, request.profile);
    return d;
}

CandidateRecord user_child(const CandidateRecord& parent, std::string source, std::string rationale) {
    CandidateRecord child;
    child.run_id = parent.run_id;
    child.task = parent.task;
    child.source = std::move(source);
    child.expert = "user";  // the origin word of every kernel the user wrote
    child.author = "user";
    child.rationale = std::move(rationale);
    child.family = parent.family;
    child.island = parent.island;
    child.generation = parent.generation + 1;
    child.tunables = parent.tunables;
    child.parents = {parent.id};
    return child;
}

HandEvaluationResult Engine::evaluate_by_hand(const HandEvaluation& request) {
    HandEvaluationResult result;
    auto cancelled = [&] { return request.cancelled && request.cancelled(); };
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }
    EvalOptions options = request.options;
    const CandidateRecord& parent = request.parent;
    if (parent.tunables.is_object())
        for (auto it = parent.tunables.begin(); it != parent.tunables.end(); ++it)
            if (it->is_number_integer()) options.tunables[it.key()] = it->get<std::int64_t>();
    // A cancel while the worker runs the candidate (or waits for the device) stops it there.
    if (request.cancelled) options.cancel = request.cancelled;
    Candidate candidate;
    candidate.source = request.source;
    candidate.name = "edited";

    // The evaluation in its stages, so that a cancel between compiling and running ends it.
    const std::shared_ptr<Evaluator> shared = evaluator(request.evaluator);
    Evaluator& ev = *shared;
    Diagnosis d;
    ev.prepare(request.task);
    const CompileResult compiled = ev.compile_stage(request.task, candidate, options, d);
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }
    if (compiled.ok) {
        try {
            ev.evaluate_stage(request.task, compiled, options, d);
        } catch (const Cancelled&) {
            result.cancelled = true;
            return result;
        }
    }
    ev.finish(d);
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }
    result.diagnosis = d;

    const CandidateRecord child = user_child(parent, candidate.source, request.rationale);
    ProjectStore store = ProjectStore::open(request.project);
    store.transaction([&] {
        result.candidate = store.add_candidate(child);
        store.add_evaluation(result.candidate, d);
    });
    return result;
}

}  // namespace kf
