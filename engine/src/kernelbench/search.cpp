// One KernelBench problem searched the way a native task is: kf::Search with its islands,
// router and budgets, the LLM experts speaking ModelNew, the Python worker behind an
// evaluation queue, every child and evaluation in the project store, the search state saved
// after every result (so that a killed run resumes), and the experience library's evidence.
#include <algorithm>
#include <atomic>
#include <future>
#include <set>

#include "kf/error.h"
#include "kf/evolution.h"
#include "kf/kernelbench_search.h"
#include "kf/llm.h"
#include "kf/paths.h"
#include "kf/store.h"
#include "kf/tunables.h"

namespace kf::kb {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

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
    m.status = e.status;
    m.fitness = e.fitness;
    if (e.diagnosis.is_object() && e.diagnosis.contains("roofline") && e.diagnosis["roofline"].is_object())
        m.bound = e.diagnosis["roofline"].value("bound", "");
    return m;
}

bool is_bound(const std::string& c) {
    return c == "memory" || c == "compute" || c == "latency" || c == "spills" || c == "occupancy";
}

/** The latest unfinished search run of the problem in the project. */
std::optional<RunRecord> unfinished_run(ProjectStore& store, const Problem& p) {
    std::optional<RunRecord> out;
    for (auto& r : store.runs())
        if (r.task == p.key() && r.state != "done" && r.config.is_object() && r.config.value("kind", "") == "kernelbench" &&
            r.config.value("mode", "") == "search" && (!out || r.id > out->id))
            out = r;
    return out;
}

/**
 * Expert-guided initialisation: one ModelNew per island, each asked of another optimising
 * role (the repair roles last), from the problem's source and the library's notes. The
 * calls run in parallel; refusals are logged.
 */
std::vector<Proposal> initial_generation(const std::vector<std::shared_ptr<Expert>>& experts, int islands,
                                         const std::vector<std::string>& notes, const std::function<void(const std::string&)>& log) {
    std::vector<Expert*> order;
    for (const auto& e : experts)
        if (e->name() != "llm:numerics" && e->name() != "llm:compile") order.push_back(e.get());
    for (const auto& e : experts)
        if (e->name() == "llm:numerics" || e->name() == "llm:compile") order.push_back(e.get());
    if (order.empty()) return {};
    std::vector<std::future<std::pair<std::optional<Proposal>, std::string>>> calls;
    for (int i = 0; i < islands; ++i) {
        Expert* e = order[static_cast<std::size_t>(i) % order.size()];
        // One call at a time per expert (they are safe to call at once, but the roles differ).
        calls.push_back(std::async(std::launch::async, [e, &notes] {
            ProposalContext ctx;
            ctx.library_notes = &notes;
            ctx.diagnosis_class = "initial";
            auto p = e->propose(ctx);
            return std::make_pair(p, p ? std::string() : e->name() + ": " + e->refusal());
        }));
    }
    std::vector<Proposal> out;
    std::set<std::string> seen;
    for (auto& f : calls) {
        auto [p, why] = f.get();
        if (!p) {
            log("initial ModelNew refused: " + why);
            continue;
        }
        if (!seen.insert(p->source).second) continue;
        p->rationale = "initial ModelNew by " + p->expert + ": " + p->rationale;
        out.push_back(std::move(*p));
    }
    return out;
}

}  // namespace

ProblemSearchOutcome search_problem(const Problem& p, Evaluator& ev, ProjectStore& store, const ProblemSearchOptions& opt) {
    ProblemSearchOutcome out;
    auto log = [&](std::int64_t run, const std::string& line) {
        if (run) store.add_event(run, "log", {{"message", line}});
        if (opt.on_event) opt.on_event({"log", -1, 0, line, {}});
    };

    // The run: a new one, or the unfinished one with its own configuration.
    SearchConfig cfg = opt.search;
    std::optional<RunRecord> previous = unfinished_run(store, p);
    std::int64_t run = 0;
    if (previous) {
        run = previous->id;
        out.resumed = true;
        const json& c = previous->config;
        cfg.seed = c.value("search_seed", cfg.seed);
        cfg.islands.islands = c.value("islands", cfg.islands.islands);
        cfg.islands.population = c.value("population", cfg.islands.population);
        store.set_run_state(run, "running");
    } else {
        json config = opt.run_config.is_object() ? opt.run_config : json::object();
        config["kind"] = "kernelbench";
        config["mode"] = "search";
        config["islands"] = cfg.islands.islands;
        config["population"] = cfg.islands.population;
        config["search_seed"] = cfg.seed;
        config["evaluation_budget"] = cfg.budget;
        config["time_limit_s"] = cfg.time_limit_s;
        config["llm"] = static_cast<bool>(opt.llm);
        run = store.add_run(p.key(), config);
    }
    out.run_id = run;
    fs::path files = store.dir() / "kernelbench" / "candidates";
    fs::create_directories(files);

    // The problem's baselines (and input shapes), timed once per run.
    json baselines = store.get_state(run, "kernelbench_baselines").value_or(json::object());
    json inputs = store.get_state(run, "kernelbench_inputs").value_or(json::array());
    if (baselines.empty()) {
        Result r = ev.evaluate(p, std::nullopt, opt.eval);
        baselines = r.baselines;
        if (r.raw.is_object() && r.raw.contains("inputs")) inputs = r.raw["inputs"];
        if (!baselines.empty()) store.put_state(run, "kernelbench_baselines", baselines);
        store.put_state(run, "kernelbench_inputs", inputs);
    }
    const ProblemFacts facts = problem_facts(p, baselines, inputs);
    store.put_state(run, "kernelbench_problem", {{"op_class", facts.op_class}, {"ops", facts.ops}, {"shapes", facts.shapes}});
    log(run, "op class " + facts.op_class + "; " + facts.baselines_line());

    std::optional<ExperienceLibrary> library;
    if (!opt.experience_library.empty()) {
        try {
            library.emplace(ExperienceLibrary::open(opt.experience_library));
        } catch (const Error& e) {
            log(run, std::string("no experience library: ") + e.what());
        }
    }

    // The LLM experts of this problem, with its share of the budgets.
    std::shared_ptr<llm::LlmEnsemble> ens;
    std::vector<std::shared_ptr<Expert>> experts;
    if (opt.llm) {
        llm::LlmConfig c = *opt.llm;
        c.budgets.max_tokens = opt.budgets.max_tokens;
        c.budgets.max_cost = opt.budgets.max_cost;
        c.budgets.max_calls = opt.budgets.max_calls;
        fs::path prompts = opt.prompts_dir.empty() ? resources_dir() / "prompts" : opt.prompts_dir;
        ens = llm::LlmEnsemble::create(c, prompts, opt.providers);
        if (previous)
            if (auto saved = store.get_state(run, "llm")) ens->restore(*saved);
        experts = llm_experts(ens, facts);
        std::string roles;
        for (const auto& e : experts) roles += (roles.empty() ? "" : ", ") + e->name();
        log(run, "LLM experts: " + roles);
    } else {
        log(run, "no LLM experts configured: given candidates and the tuner only");
    }
    std::atomic<bool> stopping{false};
    if (ens) ens->watch([&] { return stopping.load() || (opt.should_stop && opt.should_stop()); });
    auto report_llm = [&] {
        if (ens) store.put_state(run, "llm", ens->state());
    };

    json verdicts = store.get_state(run, "kernelbench_verdicts").value_or(json::object());
    auto on_evaluated = [&](const Child& c, const Result& r) {
        if (json v = r.verdict(); !v.empty()) {
            verdicts[std::to_string(c.id)] = v;
            store.put_state(run, "kernelbench_verdicts", verdicts);
        }
    };

    std::optional<Search> search;
    SearchHooks hooks;
    hooks.queue = make_queue(ev, p, opt.eval, opt.jobs, files, std::max(1, cfg.islands.islands), on_evaluated);
    hooks.should_stop = [&] {
        bool stop = (opt.should_stop && opt.should_stop()) || (ens && ens->budget_spent());
        if (stop) stopping = true;
        return stop;
    };
    hooks.stop_reason = [&]() -> std::string {
        std::string why;
        if (ens) ens->budget_spent(&why);
        return why;
    };
    hooks.on_child = [&](Child& c) { c.id = store.add_candidate(candidate_record(c, run, p.key())); };
    hooks.on_result = [&](const Child& c, const Diagnosis& d) { store.add_evaluation(c.id, d); };
    hooks.diagnosis_of = [&](std::int64_t id) {
        auto e = store.evaluation_of(id);
        return e ? e->diagnosis : json();
    };
    if (library) hooks.library_notes = [&](const std::string& dclass) { return library_notes(*library, facts, dclass); };
    hooks.on_event = [&](const SearchEvent& e) {
        if (e.kind != "proposed")
            store.add_event(run, e.kind, {{"island", e.island}, {"member", e.member}, {"message", e.message}, {"data", e.data}});
        if (library && e.kind == "evaluated" && e.data.value("has_parent", false)) {
            // The librarian sees every child against its parent, keyed by the problem's op class.
            Improvement imp;
            imp.op_class = facts.op_class;
            std::string pc = e.data.value("parent_class", "");
            imp.bound_before = is_bound(pc) ? pc : "";
            imp.status_before = is_bound(pc) ? "ok" : pc;
            imp.expert = e.data.value("expert", "");
            imp.change = e.data.value("rationale", "");
            imp.gain = e.data.value("gain", 0.0);
            imp.run_id = std::to_string(run);
            imp.candidate_id = std::to_string(e.member);
            imp.success = imp.gain > 1.0;
            try {
                library->record_improvement(imp);
            } catch (const Error&) {
            }
        }
        if (opt.on_event) opt.on_event(e);
        if (!ens) return;
        ens->observe(e);
        if (library && ens->config().insights && e.kind == "evaluated" && e.data.value("gain", 0.0) > 1.0 &&
            e.data.value("expert", "").rfind("llm:", 0) == 0 && e.data.value("has_parent", false)) {
            auto child = store.candidate(e.member);
            auto parent = child && !child->parents.empty() ? store.candidate(child->parents.front()) : std::nullopt;
            if (child && parent) {
                llm::InsightRequest req;
                req.expert = child->expert;
                req.model = llm::model_of_rationale(child->rationale);
                req.op_class = facts.op_class;
                req.diagnosis_class = e.data.value("parent_class", "");
                req.parent_source = parent->source;
                req.child_source = child->source;
                req.rationale = child->rationale;
                req.gain = e.data.value("gain", 0.0);
                req.run_id = std::to_string(run);
                req.candidate_id = std::to_string(e.member);
                ens->request_insight(req, &*library);
            }
        }
    };
    hooks.on_batch_done = [&] {
        store.put_state(run, "search", search->state());
        report_llm();
    };
    cfg.task = nullptr;
    cfg.backend = Backend::Cuda;
    search.emplace(cfg, std::vector<PatternSource>{}, hooks);
    for (const auto& e : experts) search->add_expert(e);

    std::optional<json> state = previous ? store.get_state(run, "search") : std::nullopt;
    bool recorded_any = false;
    if (previous) {
        std::int64_t next = 0;
        if (state) {
            search->restore(*state);
            next = state->value("next_id", std::int64_t{0});
        }
        std::set<std::int64_t> in_flight;
        if (state && state->contains("in_flight"))
            for (const auto& id : (*state)["in_flight"]) in_flight.insert(id.get<std::int64_t>());
        for (const auto& c : store.candidates(run)) {
            recorded_any = true;
            if (c.id < next && !in_flight.count(c.id)) continue;  // part of the saved state already
            if (auto e = store.evaluation_of(c.id)) {
                search->adopt(member_from_records(c, *e));
                continue;
            }
            Child child;
            child.id = c.id;
            child.island = c.island;
            child.generation = c.generation;
            child.proposal.source = c.source;
            child.proposal.tunables = c.tunables.is_object() ? c.tunables.get<Assignment>() : Assignment{};
            child.proposal.family = c.family;
            child.proposal.expert = c.expert;
            child.proposal.parents = c.parents;
            child.proposal.rationale = c.rationale;
            search->add_pending(child);
        }
        log(run, "resumed run " + std::to_string(run));
    }
    if (!recorded_any) {
        // The first population: the given ModelNew files, else one per island written by the
        // LLM experts from the problem's source; the reference itself when there is nothing else.
        std::vector<Proposal> seeds;
        for (const auto& f : opt.candidates) {
            Proposal s;
            s.source = read_text_file(f);
            s.expert = "user";
            s.family = "kernelbench";
            s.rationale = "ModelNew from " + f.filename().string();
            seeds.push_back(std::move(s));
        }
        if (seeds.empty() && !experts.empty()) {
            std::vector<std::string> notes = library ? library_notes(*library, facts, "initial") : std::vector<std::string>{};
            if (!notes.empty()) log(run, std::to_string(notes.size()) + " library note(s) for op class " + facts.op_class);
            seeds = initial_generation(experts, cfg.islands.islands, notes, [&](const std::string& l) { log(run, l); });
        }
        if (seeds.empty()) {
            Proposal s;
            s.source = reference_as_model_new(facts.source);
            s.expert = "seed";
            s.family = "reference";
            s.rationale = "the problem's Model as a ModelNew (PyTorch computes it)";
            seeds.push_back(std::move(s));
        }
        search->add_seeds(seeds);
    }

    out.result = search->run();
    stopping = true;
    report_llm();
    if (ens) out.llm_usage = ens->accounting().to_json();
    const bool stopped = opt.should_stop && opt.should_stop();
    store.set_run_state(run, stopped ? "stopped" : "done", out.result.stop_reason);

    // The library learns from the winner: its technique as a pattern and an insight of the op class.
    if (library && out.result.best && out.result.best->fitness > 1.0) {
        const Member& b = *out.result.best;
        std::string src = b.source;
        try {
            src = apply_tunables(b.source, b.tunables);
        } catch (const Error&) {
        }
        auto rec = store.candidate(b.id);
        std::string rationale = rec ? rec->rationale : std::string();
        try {
            Pattern pat = distil_pattern(facts, src, rationale, b.fitness, run);
            library->add_pattern(pat);
            out.pattern = pat.name;
            InsightQuery q;
            q.op_class = facts.op_class;
            q.text = facts.key;
            if (library->insights(q).empty()) {
                Insight in;
                in.condition.op_class = facts.op_class;
                in.action = "KernelBench " + facts.op_class + " problem (" + facts.key + ") -> " + technique_of(facts, src, rationale);
                in.expert = b.expert;
                in.evidence.applications = 1;
                in.evidence.successes = 1;
                in.evidence.gains = {b.fitness};
                in.provenance.run_ids = {std::to_string(run)};
                in.provenance.candidate_ids = {std::to_string(b.id)};
                in.status = "proposed";
                library->add_insight(in);
            }
            log(run, "library: pattern " + pat.name + " (" + facts.op_class + "): " + pat.description);
        } catch (const Error& e) {
            log(run, std::string("the library could not keep the winner: ") + e.what());
        }
    }
    return out;
}

}  // namespace kf::kb
