#include "kf/evolution.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <fstream>
#include <sstream>

#include "kf/error.h"
#include "kf/library.h"
#include "kf/llm.h"
#include "kf/pipeline.h"
#include "kf/process.h"
#include "kf/retrieval.h"
#include "kf/paths.h"

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

/**
 * The first population: the task's reference and hand-written candidates, then the library
 * patterns that fit the task (retrieval-augmented initialisation).
 */
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

/** What the run's log says about its LLM experts. */
std::string llm_summary(llm::LlmEnsemble* ens) {
    if (!ens) return "no LLM experts configured: built-in experts only";
    std::string roles, models;
    auto experts = ens->experts();
    for (const auto& e : experts) roles += (roles.empty() ? "" : ", ") + e->name();
    for (const auto& m : ens->config().models) models += (models.empty() ? "" : ", ") + m.name + " (" + m.provider + ")";
    return "LLM experts: " + std::to_string(experts.size()) + " roles (" + roles + "), models " + models;
}

/**
 * After an LLM child beat its parent: asks the ensemble for an insight for the experience
 * library (status "proposed"). Runs on the engine thread, which owns the store.
 */
void request_llm_insight(llm::LlmEnsemble& ens, const SearchEvent& e, ProjectStore& store, const Task& task, std::int64_t run,
                         ExperienceLibrary* library) {
    if (!library || !ens.config().insights || e.kind != "evaluated" || e.data.value("gain", 0.0) <= 1.0 ||
        e.data.value("expert", "").rfind("llm:", 0) != 0)
        return;
    auto child = store.candidate(e.member);
    if (!child || child->parents.empty()) return;
    auto parent = store.candidate(child->parents.front());
    if (!parent) return;
    llm::InsightRequest req;
    req.expert = child->expert;
    req.model = llm::model_of_rationale(child->rationale);
    req.op_class = task.op_class;
    auto parent_class = parse_diagnosis_class(e.data.value("parent_class", ""));
    if (!parent_class) return;
    req.diagnosis_class = *parent_class;
    req.parent_source = parent->source;
    req.child_source = child->source;
    req.rationale = child->rationale;
    req.gain = e.data.value("gain", 0.0);
    req.run_id = std::to_string(run);
    req.candidate_id = std::to_string(e.member);
    ens.request_insight(req, library);
}

/** Ties an ensemble's cancellation to one run, and unties it however the run ends. */
class LlmRunBinding {
public:
    LlmRunBinding(llm::LlmEnsemble* ens, const Task& task, Backend b, RunControl* control) : ens_(ens) {
        if (!ens_) return;
        ens_->bind(&task, b);
        ens_->watch(control);
        ens_->watch([this] { return stopping_.load(); });
    }
    ~LlmRunBinding() {
        if (!ens_) return;
        ens_->watch(static_cast<RunControl*>(nullptr));
        ens_->watch(std::function<bool()>());
        ens_->bind(nullptr, Backend::Host);
    }
    LlmRunBinding(const LlmRunBinding&) = delete;
    LlmRunBinding& operator=(const LlmRunBinding&) = delete;
    void stopping() { stopping_ = true; }

private:
    llm::LlmEnsemble* ens_;
    std::atomic<bool> stopping_{false};
};

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

EvolveOutcome evolve(const Task& task, Evaluator& evaluator, ProjectStore& store, const EvolveOptions& opt,
                     const std::function<void(const SearchEvent&)>& on_event, const std::function<bool()>& should_stop) {
    const Backend b = evaluator.backend();
    EvolveOutcome outcome;
    std::filesystem::path seed_file = opt.seed_library.empty() ? resources_dir() / "library" / "seed.json" : opt.seed_library;
    // Patterns come from the experience library, ranked by their evidence, when there is one;
    // the bundled seed file fills it on first use. Without a library: the seed file alone.
    std::optional<ExperienceLibrary> library;
    if (!opt.experience_library.empty()) library.emplace(ExperienceLibrary::open(opt.experience_library));
    std::vector<PatternSource> patterns;
    std::map<std::string, std::int64_t> pattern_ids;
    std::set<std::string> adapted_patterns;
    std::string retrieval_summary;
    if (library) {
        sync_seed_patterns(*library, seed_file, bundled_tasks_dir());
        Retrieval r = retrieve_patterns(*library, task, b);
        patterns = std::move(r.patterns);
        pattern_ids = std::move(r.ids);
        adapted_patterns = std::move(r.adapted);
        retrieval_summary = r.summary;
    } else {
        patterns = load_seed_patterns(seed_file, task, b);
        retrieval_summary = patterns.empty()
                                ? "no seed pattern matches task " + task.name + ": starting from the task's own seeds"
                                : std::to_string(patterns.size()) + " seed pattern(s) for " + task.name + " (no experience library)";
    }

    std::optional<RunRecord> previous;
    if (opt.resume) {
        for (const auto& r : store.runs())
            if (r.task == task.name && r.state != "done" && (!previous || r.id > previous->id)) previous = r;
        if (!previous) throw Error("nothing to resume: the project has no unfinished run of task " + task.name);
    }
    SearchConfig cfg = opt.search;
    std::int64_t run = 0;
    if (previous) {
        // The run's own configuration wins, so that a resumed run is the same search.
        run = previous->id;
        outcome.resumed = true;
        const json& c = previous->config;
        cfg.seed = c.value("seed", cfg.seed);
        cfg.islands.islands = c.value("islands", cfg.islands.islands);
        cfg.islands.population = c.value("population", cfg.islands.population);
        cfg.budget = c.value("budget", cfg.budget);
        store.set_run_state(run, "running");
    } else {
        run = store.add_run(task.name, {{"backend", to_string(b)},
                                        {"task_dir", task.dir.string()},
                                        {"islands", cfg.islands.islands},
                                        {"population", cfg.islands.population},
                                        {"budget", cfg.budget},
                                        {"time_limit_s", cfg.time_limit_s},
                                        {"seed", cfg.seed},
                                        {"patterns", patterns.size()}});
    }
    outcome.run_id = run;

    store.add_event(run, "retrieval", {{"message", retrieval_summary}, {"patterns", patterns.size()}});
    if (on_event) on_event({"log", -1, 0, retrieval_summary, {{"patterns", patterns.size()}}});
    {
        // What the template expert works from: the manifest's computation, one derived from
        // the reference, or plainly why there is none.
        std::string why;
        std::optional<Computation> comp = task_computation(task, b, &why);
        std::string line = comp ? "op-class templates from the computation (" + comp->origin + "): " + comp->summary()
                                : "no op-class template: " + why;
        store.add_event(run, "templates", {{"message", line}});
        if (on_event) on_event({"log", -1, 0, line, {}});
    }

    llm::LlmEnsemble* ens = opt.llm.get();
    const std::string llm_line = llm_summary(ens);
    store.add_event(run, "log", {{"message", llm_line}});
    if (on_event) on_event({"log", -1, 0, llm_line, {}});
    LlmRunBinding llm_binding(ens, task, b, opt.control);
    std::int64_t llm_calls_reported = -1;
    // Usage goes out when it changed, and is kept with the search state so that a kill loses
    // at most the calls of the children in flight.
    auto report_llm = [&](bool force) {
        if (!ens) return;
        json state = ens->state();
        store.put_state(run, "llm", state);
        std::int64_t calls = ens->accounting().totals().calls;
        if ((force || calls != llm_calls_reported) && on_event) on_event({"llm_usage", -1, 0, "", state["usage"]});
        llm_calls_reported = calls;
    };
    auto stop_reason = [&]() -> std::optional<StopReason> {
        std::optional<StopReason> why = opt.stop_reason ? opt.stop_reason() : std::nullopt;
        if (!why && ens) why = ens->spent_budget();
        return why;
    };

    std::optional<Search> search;
    SearchHooks hooks;
    hooks.should_stop = [&] {
        bool stop = (should_stop && should_stop()) || (ens && ens->budget_spent());
        if (stop) llm_binding.stopping();
        return stop;
    };
    hooks.stop_reason = stop_reason;
    hooks.on_event = [&](const SearchEvent& e) {
        if (e.kind == "paused" || e.kind == "resumed") store.set_run_state(run, e.kind == "paused" ? "paused" : "running");
        if (e.kind != "proposed")
            store.add_event(run, e.kind, {{"island", e.island}, {"member", e.member}, {"message", e.message}, {"data", e.data}});
        // The librarian sees every child against its parent, success or not.
        if (library && e.kind == "evaluated" && e.data.value("has_parent", false)) {
            Improvement imp;
            imp.op_class = task.op_class;
            std::optional<DiagnosisClass> parent_class = parse_diagnosis_class(e.data.value("parent_class", ""));
            std::string parent_word = parent_class ? std::string(to_string(*parent_class)) : std::string();
            bool bound = parent_class && is_bound(*parent_class);
            imp.bound_before = bound ? parent_word : "";
            imp.status_before = bound ? std::string(to_string(Status::Ok)) : parent_word;
            imp.expert = e.data.value("expert", "");
            imp.change = e.data.value("rationale", "");
            imp.gain = e.data.value("gain", 0.0);
            imp.run_id = std::to_string(run);
            imp.candidate_id = std::to_string(e.member);
            imp.success = imp.gain > 1.0;
            try {
                library->record_improvement(imp);
            } catch (const Error&) {
                // The library is an aid: a failure to record evidence never stops the search.
            }
        }
        if (on_event) on_event(e);
        if (ens) {
            ens->observe(e);
            request_llm_insight(*ens, e, store, task, run, library ? &*library : nullptr);
        }
    };
    // Every child is committed before it is evaluated, every evaluation as soon as it is done.
    hooks.on_child = [&](Child& c) { c.id = store.add_candidate(candidate_record(c, run, task.name)); };
    // Children compile on all cores while the worker evaluates those already compiled.
    PipelineConfig pipe;
    pipe.compile_threads = opt.compile_threads;
    pipe.exclusive_evaluation = b == Backend::Host;
    pipe.profile = opt.profile && b == Backend::Cuda;
    hooks.queue = std::make_shared<PipelinedEvaluator>(evaluator, task, opt.eval, pipe);
    hooks.on_result = [&](const Child& c, const Diagnosis& d) {
        store.add_evaluation(c.id, d);
        // Evidence for the library pattern the child was built from (as a seed or by the
        // pattern expert): a use, a success when it beats the reference, broken when the
        // template no longer compiles while the task's reference does.
        auto id = pattern_ids.find(c.proposal.source);
        if (!library || id == pattern_ids.end()) return;
        try {
            // An adapted pattern that fails to compile says nothing about the template itself.
            if (d.status == Status::CompileError && c.proposal.tunables.empty() && !adapted_patterns.count(c.proposal.source)) {
                library->mark_pattern_broken(id->second, d.message.substr(0, 300));
                if (on_event) on_event({"log", c.island, c.id, "library pattern marked broken: " + d.message.substr(0, 200), {}});
            } else {
                library->record_pattern_use(id->second, d.fitness() > 1.0);
            }
        } catch (const Error&) {
            // The library is an aid: failing to record evidence never stops the search.
        }
    };
    hooks.diagnosis_of = [&](std::int64_t id) {
        auto e = store.evaluation_of(id);
        return e ? e->diagnosis : json();
    };
    hooks.control = opt.control;
    if (library)
        hooks.library_notes = [&](DiagnosisClass dclass) {
            // What the library knows for this op class and bottleneck, for experts that read it.
            std::vector<std::string> notes;
            InsightQuery q;
            q.op_class = task.op_class;
            const bool bound = is_bound(dclass);
            const std::string word(to_string(dclass));
            q.limit = 6;
            try {
                for (const Insight& in : library->insights(q)) {
                    if (in.status == "rejected") continue;
                    if (bound && !in.condition.bound.empty() && in.condition.bound != word) continue;
                    if (!bound && !in.condition.status.empty() && in.condition.status != word) continue;
                    char gain[32];
                    std::snprintf(gain, sizeof gain, "%.2f", in.evidence.median_gain());
                    notes.push_back("insight (" + in.status + ", " + std::to_string(in.evidence.successes) + "/" +
                                    std::to_string(in.evidence.applications) + " successes, median gain " + gain +
                                    "x): " + in.action);
                }
            } catch (const Error&) {
            }
            for (std::size_t k = 0; k < patterns.size() && k < 3; ++k)
                notes.push_back("pattern " + patterns[k].name + ": " + patterns[k].description);
            return notes;
        };
    // The search state is saved after every result: a kill loses at most the children in
    // flight, whose committed candidates (and evaluations, if any) are picked up on resume.
    hooks.on_batch_done = [&] {
        store.put_state(run, "search", search->state());
        report_llm(false);
    };
    cfg.task = &task;
    cfg.backend = b;
    search.emplace(cfg, patterns, hooks);
    for (const auto& e : opt.experts) search->add_expert(e);
    if (ens)
        for (const auto& e : ens->experts()) search->add_expert(e);

    if (previous && ens) {
        // What the run had spent and learnt before it stopped ("llm_usage": the accounting alone,
        // as the CLI kept it before the engine did).
        if (auto saved = store.get_state(run, "llm")) ens->restore(*saved);
        else if (auto usage = store.get_state(run, "llm_usage")) ens->restore({{"usage", *usage}});
    }
    if (previous) {
        std::optional<json> state = store.get_state(run, "search");
        std::int64_t next = 0;
        if (state) {
            search->restore(*state);
            next = state->value("next_id", std::int64_t{0});
        }
        std::set<std::string> recorded;
        std::set<std::int64_t> in_flight;
        if (state && state->contains("in_flight"))
            for (const auto& id : (*state)["in_flight"]) in_flight.insert(id.get<std::int64_t>());
        for (const auto& c : store.candidates(run)) {
            recorded.insert(c.content_hash);
            if (c.id < next && !in_flight.count(c.id)) continue;  // part of the saved state already
            Assignment tunables = c.tunables.is_object() ? c.tunables.get<Assignment>() : Assignment{};
            if (auto e = store.evaluation_of(c.id)) {
                search->adopt(member_from_records(c, *e));
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
                search->add_pending(child);
            }
        }
        if (!state) {
            // Killed while the seeds were being recorded: those not yet recorded are added again.
            std::vector<Proposal> missing;
            for (auto& s : initial_seeds(task, b, patterns))
                if (!recorded.count(proposal_key(s.source, s.tunables))) missing.push_back(s);
            search->add_seeds(missing);
        }
    } else {
        search->add_seeds(initial_seeds(task, b, patterns));
    }

    outcome.result = search->run();
    report_llm(true);
    bool stopped = outcome.result.stop_reason.stopped() || stop_reason().has_value();
    store.set_run_state(run, stopped ? "stopped" : "done", to_string(outcome.result.stop_reason));
    return outcome;
}

}  // namespace kf
