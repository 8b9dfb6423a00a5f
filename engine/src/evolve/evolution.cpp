#include "kf/evolution.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "kf/error.h"
#include "kf/generic.h"
#include "kf/library.h"
#include "kf/paths.h"
#include "kf/pipeline.h"
#include "kf/process.h"
#include "kf/retrieval.h"
#include "kf/tunables.h"
#include "kf/stats.h"
#include "run_steps.h"

namespace kf {

using nlohmann::json;

std::filesystem::path resources_dir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (const char* env = std::getenv("KF_RESOURCES_DIR"); env && *env && fs::is_directory(env, ec)) return env;
    fs::path exe = executable_dir();
    for (const fs::path& p : {exe / ".." / "share" / "kernel-foundry", exe / ".." / ".." / "resources"})
        if (fs::is_directory(p / "library", ec)) return fs::weakly_canonical(p, ec);
    return {};
}

namespace {

std::string extension(Backend b) { return b == Backend::Cuda ? ".cu" : ".cpp"; }

/** The task's own seeds: its reference and its hand-written candidates for the backend. */
std::vector<Proposal> task_seeds(const Task& task, Backend b) {
    std::vector<Proposal> out;
    Proposal ref;
    ref.source = read_text_file(task.references.at(b));
    ref.family = "reference";
    ref.expert = "seed";
    ref.rationale = "the task's reference";
    out.push_back(ref);
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(task.dir / "candidates", ec))
        if (e.path().extension() == extension(b)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        Proposal p;
        p.source = read_text_file(f);
        p.family = task.name + "/" + f.stem().string();
        p.expert = "seed";
        p.rationale = "hand-written candidate " + f.filename().string();
        out.push_back(p);
    }
    return out;
}

Member member_from_records(const CandidateRecord& c, const EvaluationRecord& e) {
    Member m;
    m.id = c.id;
    m.source = c.source;
    m.tunables = c.tunables.is_object() ? c.tunables.get<Assignment>() : Assignment{};
    m.expert = c.expert;
    m.island = c.island;
    m.generation = c.generation;
    m.parents = c.parents;
    m.family = c.family;
    m.status = e.status_value();
    m.fitness = e.fitness;
    if (e.diagnosis.is_object() && e.diagnosis.contains("roofline") && e.diagnosis["roofline"].is_object())
        m.bound = e.diagnosis["roofline"].value("bound", "");
    return m;
}

}  // namespace

std::vector<PatternSource> load_seed_patterns(const std::filesystem::path& seed_json, const Task& task, Backend backend) {
    std::vector<PatternSource> out;
    for (const SeedEntry& e : read_seed_entries(seed_json)) {
        std::string tail = e.task.substr(e.task.find_last_of('/') + 1);
        if (tail != task.name || e.backend != backend) continue;
        std::string source = read_text_file(e.source_path(task, seed_json.parent_path()));
        if (source.empty()) continue;
        PatternSource ps;
        ps.name = e.name;
        ps.family = e.family;
        ps.source = source;
        ps.bound_tags = e.bound_tags;
        ps.description = e.description;
        out.push_back(std::move(ps));
    }
    return out;
}

CandidateRecord candidate_record(const Child& c, std::int64_t run_id, const std::string& task) {
    CandidateRecord rec;
    rec.run_id = run_id;
    rec.task = task;
    rec.source = c.proposal.source;
    rec.content_hash = proposal_key(c.proposal.source, c.proposal.tunables);
    rec.expert = c.proposal.expert;
    rec.family = c.proposal.family;
    rec.rationale = c.proposal.rationale + (c.route.reason.empty() ? "" : " [route: " + c.route.reason + "]");
    rec.island = c.island;
    rec.generation = c.generation;
    rec.tunables = c.proposal.tunables;
    rec.parents = c.proposal.parents;
    rec.author = c.proposal.expert == "user" ? "user" : "engine";
    return rec;
}

std::vector<Proposal> initial_seeds(const Task& task, Backend b, const std::vector<PatternSource>& patterns) {
    std::vector<Proposal> seeds = task_seeds(task, b);
    // The template expert's first instance of each op-class template family (the expert
    // proposes the others during the run).
    std::set<std::string> families;
    for (const TemplateKernel& k : templates_for_task(task, b)) {
        if (!families.insert(k.family).second) continue;
        Proposal s;
        s.source = k.source;
        s.family = k.family;
        s.expert = "seed";
        s.rationale = "op-class template " + k.name + " (template expert): " + k.description;
        seeds.push_back(s);
    }
    // Where no template knows the computation, the generic expert's instances, written from the
    // reference's loops, so that every task starts with kernels of its own (elsewhere the
    // generic expert proposes them during the run).
    const bool templated = !families.empty();
    for (const TemplateKernel& k : templated ? std::vector<TemplateKernel>{} : generic_kernels(task, b).kernels) {
        if (!families.insert(k.family).second) continue;
        Proposal s;
        s.source = k.source;
        s.family = k.family;
        s.expert = "seed";
        s.rationale = k.name + " (generic expert): " + k.description;
        seeds.push_back(s);
    }
    for (const auto& p : patterns) {
        Proposal s;
        s.source = p.source;
        s.family = p.family;
        s.expert = "seed";
        s.rationale = "library pattern " + p.name;
        seeds.push_back(s);
    }
    return seeds;
}

Retrieval gather_patterns(const Task& task, Backend b, const std::filesystem::path& seed_file, ExperienceLibrary* library) {
    if (library) {
        sync_seed_patterns(*library, seed_file, bundled_tasks_dir());
        return retrieve_patterns(*library, task, b);
    }
    Retrieval r;
    r.patterns = load_seed_patterns(seed_file, task, b);
    r.summary = r.patterns.empty()
                    ? "no seed pattern matches task " + task.name + ": starting from the task's own seeds"
                    : std::to_string(r.patterns.size()) + " seed pattern(s) for " + task.name + " (no experience library)";
    return r;
}

RunStart start_run(ProjectStore& store, const Task& task, Backend b, const SearchConfig& config, std::size_t patterns,
                   bool resume) {
    RunStart start;
    start.config = config;
    SearchConfig& cfg = start.config;
    if (resume) {
        std::optional<RunRecord> previous;
        for (const auto& r : store.runs())
            if (r.task == task.name && r.state != RunState::Done && (!previous || r.id > previous->id)) previous = r;
        if (!previous) throw Error("nothing to resume: the project has no unfinished run of task " + task.name);
        // The run's own configuration wins, so that a resumed run is the same search.
        start.id = previous->id;
        start.resumed = true;
        const json& c = previous->config;
        cfg.seed = c.value("seed", cfg.seed);
        cfg.islands.islands = c.value("islands", cfg.islands.islands);
        cfg.islands.population = c.value("population", cfg.islands.population);
        cfg.budget = c.value("budget", cfg.budget);
        store.set_run_state(start.id, RunState::Running);
        return start;
    }
    start.id = store.add_run(task.name, {{"backend", to_string(b)},
                                         {"task_dir", task.dir.string()},
                                         {"islands", cfg.islands.islands},
                                         {"population", cfg.islands.population},
                                         {"budget", cfg.budget},
                                         {"time_limit_s", cfg.time_limit_s},
                                         {"seed", cfg.seed},
                                         {"patterns", patterns}});
    return start;
}

void resume_search(Search& search, ProjectStore& store, std::int64_t run, const std::vector<Proposal>& seeds) {
    std::optional<json> state = store.get_state(run, "search");
    std::int64_t next = 0;
    if (state) {
        search.restore(*state);
        next = state->value("next_id", std::int64_t{0});
    }
    std::set<std::string> recorded;
    std::set<std::int64_t> in_flight;
    if (state && state->contains("in_flight"))
        for (const auto& id : (*state)["in_flight"]) in_flight.insert(id.get<std::int64_t>());
    for (const auto& c : store.candidates(run)) {
        recorded.insert(c.content_hash);
        std::optional<EvaluationRecord> e = store.evaluation_of(c.id);
        // Evaluated before the saved state: part of it already. A child without an evaluation
        // is never part of it (a stop drops the children waiting to compile from the search
        // before the last state is saved): it is evaluated now, whatever its id.
        if (e && c.id < next && !in_flight.count(c.id)) continue;
        Assignment tunables = c.tunables.is_object() ? c.tunables.get<Assignment>() : Assignment{};
        if (e) {
            search.adopt(member_from_records(c, *e));
        } else {
            Child child;
            child.id = c.id;
            child.island = c.island;
            child.generation = c.generation;
            child.proposal.source = c.source;
            child.proposal.tunables = tunables;
            child.proposal.family = c.family;
            child.proposal.expert = c.expert;
            child.proposal.parents = c.parents;
            child.proposal.rationale = c.rationale;
            search.add_pending(child);
        }
    }
    if (!state) {
        // Killed while the seeds were being recorded: those not yet recorded are added again.
        std::vector<Proposal> missing;
        for (const auto& s : seeds)
            if (!recorded.count(proposal_key(s.source, s.tunables))) missing.push_back(s);
        search.add_seeds(missing);
    }
}

namespace {

std::string fmt_speedup(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", x);
    return buf;
}

}  // namespace

std::optional<json> confirm_best(const Task& task, Evaluator& evaluator, ProjectStore& store, std::int64_t run,
                                 const EvalOptions& eval, int rounds, const std::function<void(const SearchEvent&)>& on_event,
                                 const std::function<bool()>& should_stop) {
    if (rounds <= 0) return std::nullopt;
    std::map<std::int64_t, CandidateRecord> cands;
    for (auto& c : store.candidates(run)) cands.emplace(c.id, std::move(c));
    const CandidateRecord* best = nullptr;
    const CandidateRecord* reference = nullptr;
    double best_fitness = 0;
    for (const auto& e : store.evaluations(run)) {
        auto c = cands.find(e.candidate_id);
        if (c == cands.end()) continue;
        if (c->second.is_reference()) {
            if (!reference) reference = &c->second;
        } else if (e.status_value() == Status::Ok && (!best || e.fitness > best_fitness)) {
            best = &c->second;
            best_fitness = e.fitness;
        }
    }
    // Nothing beat the reference in the search: nothing to confirm.
    if (!best || best_fitness <= 1.0 || !reference || (should_stop && should_stop())) return std::nullopt;
    auto as_candidate = [](const CandidateRecord& c, const std::string& name) {
        Assignment t = c.tunables.is_object() ? c.tunables.get<Assignment>() : Assignment{};
        return Candidate{apply_tunables(c.source, t), name};
    };
    const Candidate mine = as_candidate(*best, "confirm-best"), ref = as_candidate(*reference, "confirm-reference");
    EvalOptions once = eval;
    once.trials = 1;
    using evolve_steps::log_line;
    log_line(store, run, EventKind::Confirmation,
             "timing the best (candidate " + std::to_string(best->id) + ", " + fmt_speedup(best_fitness) +
                 ") again, " + std::to_string(rounds) + " rounds side by side with the reference",
             on_event, {{"candidate", best->id}, {"rounds", rounds}});
    json out = {{"candidate", best->id}, {"reference", reference->id}, {"search_speedup", best_fitness}, {"rounds", json::array()}};
    std::vector<double> ratios;
    for (int r = 0; r < rounds && !(should_stop && should_stop()); ++r) {
        // The order swapped every round: neither always runs on a device the other warmed.
        Diagnosis d_mine, d_ref;
        if (r % 2 == 0) {
            d_mine = evaluator.evaluate(task, mine, once);
            d_ref = evaluator.evaluate(task, ref, once);
        } else {
            d_ref = evaluator.evaluate(task, ref, once);
            d_mine = evaluator.evaluate(task, mine, once);
        }
        if (d_mine.status != Status::Ok || d_ref.status != Status::Ok || !d_mine.timing || !d_ref.timing ||
            d_ref.timing->speedup <= 0) {
            const bool best_failed = d_mine.status != Status::Ok;
            const Diagnosis& bad = best_failed ? d_mine : d_ref;
            out["failed_by"] = best_failed ? "best" : "reference";
            out["failed"] = std::string(best_failed ? "the best" : "the reference") + ", timed again: " +
                            std::string(to_string(bad.status)) + (bad.message.empty() ? "" : ": " + bad.message);
            break;
        }
        out["rounds"].push_back({{"candidate", d_mine.timing->speedup}, {"reference", d_ref.timing->speedup}});
        ratios.push_back(d_mine.timing->speedup / d_ref.timing->speedup);
    }
    if (!out.contains("failed") && ratios.empty()) {
        out["failed_by"] = "stop";
        out["failed"] = "stopped before a round was timed";
    }
    std::string line;
    if (out.contains("failed")) {
        line = "not confirmed: " + out["failed"].get<std::string>();
    } else {
        const std::size_t n = ratios.size();
        const double median = util::median(ratios);
        out["speedup"] = median;
        line = "the best, timed again side by side with the reference: " + fmt_speedup(median) + " (median of " +
               std::to_string(n) + " round" + (n == 1 ? "" : "s") + "; the search measured " + fmt_speedup(best_fitness) + ")";
    }
    store.put_state(run, "confirmation", out);
    log_line(store, run, EventKind::Confirmation, line, on_event, out);
    return out;
}

void finish_run(ProjectStore& store, std::int64_t run, const StopReason& why, bool stopped) {
    store.set_run_state(run, stopped ? RunState::Stopped : RunState::Done, to_string(why));
}

namespace {

/** What the template expert works from: the manifest's computation, one derived from the reference, or why there is none. */
std::string templates_line(const Task& task, Backend b) {
    std::string why;
    std::optional<Computation> comp = task_computation(task, b, &why);
    return comp ? "op-class templates from the computation (" + comp->origin + "): " + comp->summary()
                : "no op-class template: " + why;
}

}  // namespace

EvolveOutcome evolve(const Task& task, Evaluator& evaluator, ProjectStore& store, const EvolveOptions& opt,
                     const std::function<void(const SearchEvent&)>& on_event, const std::function<bool()>& should_stop) {
    using namespace evolve_steps;
    const Backend b = evaluator.backend();

    // Library sync: patterns from the experience library, ranked by their evidence, when
    // there is one (the bundled seed file fills it on first use); else the seed file alone.
    const std::filesystem::path seed_file =
        opt.seed_library.empty() ? resources_dir() / "library" / "seed.json" : opt.seed_library;
    std::optional<ExperienceLibrary> library;
    if (!opt.experience_library.empty()) library.emplace(ExperienceLibrary::open(opt.experience_library));
    ExperienceLibrary* lib = library ? &*library : nullptr;
    const Retrieval patterns = gather_patterns(task, b, seed_file, lib);

    // The run: created, or resumed with its own configuration.
    RunStart run = start_run(store, task, b, opt.search, patterns.patterns.size(), opt.resume);
    EvolveOutcome outcome;
    outcome.run_id = run.id;
    outcome.resumed = run.resumed;
    if (opt.on_run) opt.on_run(run.id, run.resumed);
    log_line(store, run.id, EventKind::Retrieval, patterns.summary, on_event, {{"patterns", patterns.patterns.size()}});
    log_line(store, run.id, EventKind::Templates, templates_line(task, b), on_event);
    log_line(store, run.id, EventKind::Generic, generic_summary(generic_kernels(task, b)), on_event);

    // The provider of extra experts (the LLM ensemble), tied to this run.
    ExpertProvider* provider = opt.llm.get();
    log_line(store, run.id, EventKind::Log,
             provider ? provider->summary() : "no LLM experts configured: built-in experts only", on_event);
    ProviderBinding binding(provider, task, b, opt.control);
    auto external_stop = [&]() -> std::optional<StopReason> {
        std::optional<StopReason> why = opt.stop_reason ? opt.stop_reason() : std::nullopt;
        return why ? why : binding.spent_budget();
    };

    Librarian librarian(lib, task, run.id, patterns, on_event);
    Checkpoints checkpoints(store, run.id, provider, on_event);
    const ProviderRun provider_run{&task, run.id, lib, [&](std::int64_t id) { return store.candidate(id); }};

    std::optional<Search> search;
    SearchHooks hooks;
    hooks.should_stop = [&] {
        bool stop = (should_stop && should_stop()) || binding.spent_budget().has_value();
        if (stop) binding.stopping();
        return stop;
    };
    hooks.stop_reason = external_stop;
    hooks.on_event = [&](const SearchEvent& e) {
        if (e.kind == EventKind::Paused || e.kind == EventKind::Resumed)
            store.set_run_state(run.id, e.kind == EventKind::Paused ? RunState::Paused : RunState::Running);
        if (e.kind != EventKind::Proposed)
            store.add_event(run.id, e.kind, {{"island", e.island}, {"member", e.member}, {"message", e.message}, {"data", e.data}});
        // The librarian sees every child against its parent, success or not.
        librarian.child_evaluated(e);
        if (on_event) on_event(e);
        if (provider) provider->observe(e, provider_run);
    };
    // Every child is committed before it is evaluated, every evaluation as soon as it is done.
    hooks.on_child = [&](Child& c) { c.id = store.add_candidate(candidate_record(c, run.id, task.name)); };
    // Children compile on all cores while the worker evaluates those already compiled.
    PipelineConfig pipe;
    pipe.compile_threads = opt.compile_threads;
    pipe.exclusive_evaluation = b == Backend::Host;
    pipe.profile = opt.profile && b == Backend::Cuda;
    pipe.more_devices = opt.more_devices;
    hooks.queue = std::make_shared<PipelinedEvaluator>(evaluator, task, opt.eval, pipe);
    hooks.on_result = [&](const Child& c, const Diagnosis& d) {
        store.add_evaluation(c.id, d);
        librarian.pattern_used(c, d);
    };
    hooks.diagnosis_of = [&](std::int64_t id) {
        auto e = store.evaluation_of(id);
        return e ? e->diagnosis : json();
    };
    hooks.control = opt.control;
    if (lib) hooks.library_notes = [&](DiagnosisClass dclass) { return librarian.notes(dclass); };
    // The search state is saved after every result: a kill loses at most the children in
    // flight, whose committed candidates (and evaluations, if any) are picked up on resume.
    hooks.on_batch_done = [&] {
        checkpoints.search(*search);
        checkpoints.provider(false);
    };
    SearchConfig cfg = run.config;
    cfg.task = &task;
    cfg.backend = b;
    search.emplace(cfg, patterns.patterns, hooks);
    for (const auto& e : opt.experts) search->add_expert(e);
    if (provider)
        for (const auto& e : provider->experts()) search->add_expert(e);

    const std::vector<Proposal> seeds = initial_seeds(task, b, patterns.patterns);
    if (run.resumed) {
        if (provider) {
            // What the run had spent and learnt before it stopped ("llm_usage": the accounting
            // alone, as the CLI kept it before the engine did).
            if (auto saved = store.get_state(run.id, "llm")) provider->restore(*saved);
            else if (auto usage = store.get_state(run.id, "llm_usage")) provider->restore({{"usage", *usage}});
        }
        resume_search(*search, store, run.id, seeds);
    } else {
        search->add_seeds(seeds);
    }

    outcome.result = search->run();
    checkpoints.provider(true);
    const bool stopped = outcome.result.stop_reason.stopped() || external_stop().has_value();
    if (!stopped)
        confirm_best(task, evaluator, store, run.id, opt.eval, opt.confirm_rounds, on_event,
                     [&] { return hooks.should_stop() || (opt.control && opt.control->stop_requested()); });
    finish_run(store, run.id, outcome.result.stop_reason, stopped);
    return outcome;
}

}  // namespace kf
