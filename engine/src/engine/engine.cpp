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

std::shared_ptr<kb::Evaluator> Engine::kernelbench_evaluator(const kb::WorkerOptions& o) {
    // The command line names the interpreter, the script, the device and the executor.
    const nlohmann::json key = {o.command(), o.log.string(), o.build_root.string()};
    std::lock_guard<std::mutex> lock(mutex_);
    auto& ev = kb_evaluators_[key.dump()];
    if (!ev) ev = std::make_shared<kb::Evaluator>(o);
    return ev;
}

kb::ProblemSetOutcome Engine::run_kernelbench(const KernelBenchRequest& request, const KernelBenchCallbacks& callbacks) {
    const std::shared_ptr<kb::Evaluator> ev = kernelbench_evaluator(request.worker);
    try {
        ev->hello();
    } catch (const Error& e) {
        throw NoDevice(std::string("the KernelBench worker cannot run: ") + e.what());
    }
    ProjectStore store = request.create_project
                             ? ProjectStore::open_or_create(request.project, request.project.filename().string())
                             : ProjectStore::open(request.project);
    const ProjectView view(store);
    kb::ProblemSetRequest set = request.problems;
    if (callbacks.should_stop) set.base.should_stop = callbacks.should_stop;
    // The problem being searched and its run, known from its first event on (search_problem
    // creates or resumes the run before it).
    std::string key;
    std::int64_t run = 0;
    const std::function<void(const SearchEvent&)> caller_event = set.base.on_event;
    set.base.on_event = [&](const SearchEvent& e) {
        if (run == 0 && !key.empty())
            if (auto r = view.latest_run(key)) {
                run = r->id;
                if (callbacks.on_run)
                    for (const kb::Problem& p : set.problems)
                        if (p.key() == key) callbacks.on_run(run, p);
            }
        if (caller_event) caller_event(e);
        if (callbacks.on_event) callbacks.on_event(e, view);
    };
    kb::ProblemSetCallbacks cb = callbacks.set;
    cb.on_problem = [&](std::size_t i, std::size_t n, const kb::Problem& p, const kb::ProblemSearchOptions& o) {
        key = p.key();
        run = 0;
        if (callbacks.set.on_problem) callbacks.set.on_problem(i, n, p, o);
    };
    try {
        return kb::search_problems(set, *ev, store, cb);
    } catch (const std::exception& e) {
        // A run the search opened and left running is marked failed (the next start on the
        // problem resumes it all the same).
        try {
            if (!key.empty())
                if (auto r = store.latest_run(key); r && r->state == RunState::Running)
                    store.set_run_state(r->id, RunState::Failed, e.what());
        } catch (const std::exception&) {
            // The store itself may be what failed; the caller still hears of the first error.
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
