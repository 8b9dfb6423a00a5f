// One KernelBench problem searched the way a native task is: kf::Search with its islands,
// router and budgets, the LLM experts speaking ModelNew, the Python worker behind an
// evaluation queue, every child and evaluation in the project store, the search state saved
// after every result (so that a killed run resumes), and the experience library's evidence.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
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

/** The latest unfinished search run of the problem in the project. */
std::optional<RunRecord> unfinished_run(ProjectStore& store, const Problem& p) {
    std::optional<RunRecord> out;
    for (auto& r : store.runs())
        if (r.task == p.key() && r.state != RunState::Done && r.config.is_object() && r.config.value("kind", "") == "kernelbench" &&
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
            ctx.library_notes = &notes;  // no parent: a first-generation prompt
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

/** The problem's run: the unfinished one (with its own configuration, into `cfg`), else a new one. */
std::int64_t open_run(ProjectStore& store, const Problem& p, const ProblemSearchOptions& opt, SearchConfig& cfg, bool& resumed) {
    if (std::optional<RunRecord> previous = unfinished_run(store, p)) {
        resumed = true;
        const json& c = previous->config;
        cfg.seed = c.value("search_seed", cfg.seed);
        cfg.islands.islands = c.value("islands", cfg.islands.islands);
        cfg.islands.population = c.value("population", cfg.islands.population);
        store.set_run_state(previous->id, RunState::Running);
        return previous->id;
    }
    json config = opt.run_config.is_object() ? opt.run_config : json::object();
    config["kind"] = "kernelbench";
    config["mode"] = "search";
    config["islands"] = cfg.islands.islands;
    config["population"] = cfg.islands.population;
    config["search_seed"] = cfg.seed;
    config["evaluation_budget"] = cfg.budget;
    config["time_limit_s"] = cfg.time_limit_s;
    config["llm"] = static_cast<bool>(opt.llm);
    return store.add_run(p.key(), config);
}

/** The problem's facts, its baselines (and input list) timed once per run and kept in the run state. */
ProblemFacts facts_of_run(ProjectStore& store, std::int64_t run, const Problem& p, Evaluator& ev, const EvalOptions& eval) {
    json baselines = store.get_state(run, "kernelbench_baselines").value_or(json::object());
    json inputs = store.get_state(run, "kernelbench_inputs").value_or(json::array());
    if (baselines.empty()) {
        Result r = ev.evaluate(p, std::nullopt, eval);
        baselines = r.baselines;
        if (r.raw.is_object() && r.raw.contains("inputs")) inputs = r.raw["inputs"];
        if (!baselines.empty()) store.put_state(run, "kernelbench_baselines", baselines);
        store.put_state(run, "kernelbench_inputs", inputs);
    }
    ProblemFacts facts = problem_facts(p, baselines, inputs);
    store.put_state(run, "kernelbench_problem", {{"op_class", facts.op_class}, {"ops", facts.ops}, {"shapes", facts.shapes}});
    return facts;
}

/**
 * A resumed run: the saved search state, then the candidates committed after it (evaluated
 * ones adopted, the others evaluated first). False when the run had recorded no candidate.
 */
bool resume_into(Search& search, ProjectStore& store, std::int64_t run) {
    const bool recorded = !store.candidates(run).empty();
    resume_search(search, store, run, {});
    return recorded;
}

/**
 * The first population: the given ModelNew files, else one per island written by the LLM
 * experts from the problem's source; the reference itself when there is nothing else.
 */
std::vector<Proposal> first_population(const ProblemSearchOptions& opt, const std::vector<std::shared_ptr<Expert>>& experts,
                                       int islands, const ProblemFacts& facts, const ExperienceLibrary* library,
                                       const std::function<void(const std::string&)>& log) {
    std::vector<Proposal> seeds = model_new_seeds(opt.candidates);
    if (seeds.empty() && !experts.empty()) {
        std::vector<std::string> notes = library ? library_notes(*library, facts, "initial") : std::vector<std::string>{};
        if (!notes.empty()) log(std::to_string(notes.size()) + " library note(s) for op class " + facts.op_class);
        seeds = initial_generation(experts, islands, notes, log);
    }
    if (seeds.empty()) {
        Proposal s;
        s.source = reference_as_model_new(facts.source);
        s.expert = "seed";
        s.family = "reference";
        s.rationale = "the problem's Model as a ModelNew (PyTorch computes it)";
        seeds.push_back(std::move(s));
    }
    return seeds;
}

/** The winner distilled into the library: a pattern of its technique and an insight of the op class. Returns the pattern's name. */
std::string learn_from_winner(ExperienceLibrary& library, ProjectStore& store, const ProblemFacts& facts, const Member& best,
                              std::int64_t run) {
    std::string src = best.source;
    try {
        src = apply_tunables(best.source, best.tunables);
    } catch (const Error&) {
    }
    auto rec = store.candidate(best.id);
    std::string rationale = rec ? rec->rationale : std::string();
    Pattern pat = distil_pattern(facts, src, rationale, best.fitness, run);
    library.add_pattern(pat);
    InsightQuery q;
    q.op_class = facts.op_class;
    q.text = facts.key;
    if (library.insights(q).empty()) {
        Insight in;
        in.condition.op_class = facts.op_class;
        in.action = "KernelBench " + facts.op_class + " problem (" + facts.key + ") -> " + technique_of(facts, src, rationale);
        in.expert = best.expert;
        in.evidence.applications = 1;
        in.evidence.successes = 1;
        in.evidence.gains = {best.fitness};
        in.provenance.run_ids = {std::to_string(run)};
        in.provenance.candidate_ids = {std::to_string(best.id)};
        in.status = "proposed";
        library.add_insight(in);
    }
    return pat.name;
}

/** After an LLM child beat its parent: the model's lesson, as a proposed insight of the op class. */
void request_insight(llm::LlmEnsemble& ens, ExperienceLibrary& library, ProjectStore& store, const ProblemFacts& facts,
                     const SearchEvent& e, std::int64_t run) {
    auto child = store.candidate(e.member);
    auto parent = child && !child->parents.empty() ? store.candidate(child->parents.front()) : std::nullopt;
    if (!child || !parent) return;
    llm::InsightRequest req;
    req.expert = child->expert;
    req.model = llm::model_of_rationale(child->rationale);
    req.op_class = facts.op_class;
    req.diagnosis_class = parse_diagnosis_class(e.data.value("parent_class", "")).value_or(DiagnosisClass::Latency);
    req.parent_source = parent->source;
    req.child_source = child->source;
    req.rationale = child->rationale;
    req.gain = e.data.value("gain", 0.0);
    req.run_id = std::to_string(run);
    req.candidate_id = std::to_string(e.member);
    ens.request_insight(req, &library);
}

/** The experience library at `path`, when one is named; one that cannot be opened is logged and left out. */
void open_library(std::optional<ExperienceLibrary>& library, const fs::path& path,
                  const std::function<void(const std::string&)>& log) {
    if (path.empty()) return;
    try {
        library.emplace(ExperienceLibrary::open(path));
    } catch (const Error& e) {
        log(std::string("no experience library: ") + e.what());
    }
}

/** The problem's LLM ensemble, with its share of the budgets (and its saved state when the run resumes). */
std::shared_ptr<llm::LlmEnsemble> problem_ensemble(const ProblemSearchOptions& opt, ProjectStore& store,
                                                   std::int64_t run, bool resumed) {
    llm::LlmConfig c = *opt.llm;
    c.budgets.max_tokens = opt.budgets.max_tokens;
    c.budgets.max_cost = opt.budgets.max_cost;
    c.budgets.max_calls = opt.budgets.max_calls;
    const fs::path prompts = opt.prompts_dir.empty() ? resources_dir() / "prompts" : opt.prompts_dir;
    std::shared_ptr<llm::LlmEnsemble> ens = llm::LlmEnsemble::create(c, prompts, opt.providers);
    if (resumed)
        if (auto saved = store.get_state(run, "llm")) ens->restore(*saved);
    return ens;
}

/** The LLM experts of this problem, logged, and into `ens` their ensemble; none without an LLM configuration. */
std::vector<std::shared_ptr<Expert>> problem_llm_experts(const ProblemSearchOptions& opt, ProjectStore& store,
                                                         std::int64_t run, bool resumed, const ProblemFacts& facts,
                                                         std::shared_ptr<llm::LlmEnsemble>& ens,
                                                         const std::function<void(const std::string&)>& log) {
    std::vector<std::shared_ptr<Expert>> experts;
    if (opt.llm) {
        ens = problem_ensemble(opt, store, run, resumed);
        experts = llm_experts(ens, facts);
        std::string roles;
        for (const auto& e : experts) roles += (roles.empty() ? "" : ", ") + e->name();
        log("LLM experts: " + roles);
    } else {
        log("no LLM experts configured: given candidates and the tuner only");
    }
    return experts;
}

/** The search stops when the caller says so or the LLM budgets are spent (which then say why). */
void set_stop_hooks(SearchHooks& hooks, const ProblemSearchOptions& opt, const std::shared_ptr<llm::LlmEnsemble>& ens,
                    std::atomic<bool>& stopping) {
    hooks.should_stop = [&opt, &ens, &stopping] {
        bool stop = (opt.should_stop && opt.should_stop()) || (ens && ens->budget_spent());
        if (stop) stopping = true;
        return stop;
    };
    hooks.stop_reason = [&ens]() -> std::optional<StopReason> {
        if (ens) return ens->spent_budget();
        return std::nullopt;
    };
}

/** Children and evaluations go to the store, and parents' diagnoses come from it. */
void set_store_hooks(SearchHooks& hooks, ProjectStore& store, std::int64_t run, const Problem& p) {
    hooks.on_child = [&store, run, &p](Child& c) { c.id = store.add_candidate(candidate_record(c, run, p.key())); };
    hooks.on_result = [&store](const Child& c, const Diagnosis& d) { store.add_evaluation(c.id, d); };
    hooks.diagnosis_of = [&store](std::int64_t id) {
        auto e = store.evaluation_of(id);
        return e ? e->diagnosis : json();
    };
}

/**
 * The search's events: into the store (all but proposals), the library's evidence, the caller and
 * the LLM ensemble, which is asked for an insight when an LLM child beat its parent.
 */
std::function<void(const SearchEvent&)> event_hook(ProjectStore& store, std::int64_t run, const ProblemFacts& facts,
                                                   std::optional<ExperienceLibrary>& library,
                                                   const std::shared_ptr<llm::LlmEnsemble>& ens,
                                                   const ProblemSearchOptions& opt) {
    return [&store, run, &facts, &library, &ens, &opt](const SearchEvent& e) {
        if (e.kind != EventKind::Proposed)
            store.add_event(run, e.kind,
                            {{"island", e.island}, {"member", e.member}, {"message", e.message}, {"data", e.data}});
        const bool child = e.kind == EventKind::Evaluated && e.data.value("has_parent", false);
        if (library) record_child_evidence(*library, facts.op_class, e, run);
        if (opt.on_event) opt.on_event(e);
        if (!ens) return;
        ens->observe(e);
        if (library && child && ens->config().insights && e.data.value("gain", 0.0) > 1.0 &&
            e.data.value("expert", "").rfind("llm:", 0) == 0)
            request_insight(*ens, *library, store, facts, e, run);
    };
}

/** After the search: the LLM ensemble's state and usage kept, the run marked finished. */
void close_run(ProjectStore& store, std::int64_t run, const ProblemSearchOptions& opt,
               const std::shared_ptr<llm::LlmEnsemble>& ens, ProblemSearchOutcome& out) {
    if (ens) {
        store.put_state(run, "llm", ens->state());
        out.llm_usage = ens->accounting().to_json();
    }
    const bool stopped = opt.should_stop && opt.should_stop();
    finish_run(store, run, out.result.stop_reason, stopped);
}

/** A winner that beat the reference, distilled into the library; one the library cannot keep is logged. */
void keep_winner(ExperienceLibrary& library, ProjectStore& store, const ProblemFacts& facts, std::int64_t run,
                 ProblemSearchOutcome& out, const std::function<void(const std::string&)>& log) {
    try {
        out.pattern = learn_from_winner(library, store, facts, *out.result.best, run);
        log("library: pattern " + out.pattern + " (" + facts.op_class + ")");
    } catch (const Error& e) {
        log(std::string("the library could not keep the winner: ") + e.what());
    }
}

}  // namespace

std::vector<Proposal> model_new_seeds(const std::vector<fs::path>& files) {
    std::vector<Proposal> seeds;
    for (const auto& f : files) {
        Proposal s;
        s.source = read_text_file(f);
        s.expert = "user";
        s.family = "kernelbench";
        s.rationale = "ModelNew from " + f.filename().string();
        seeds.push_back(std::move(s));
    }
    return seeds;
}

ProblemSearchOutcome search_problem(const Problem& p, Evaluator& ev, ProjectStore& store, const ProblemSearchOptions& opt) {
    ProblemSearchOutcome out;
    SearchConfig cfg = opt.search;
    const std::int64_t run = open_run(store, p, opt, cfg, out.resumed);
    out.run_id = run;
    auto log = [&](const std::string& line) {
        store.add_event(run, EventKind::Log, {{"message", line}});
        if (opt.on_event) opt.on_event({EventKind::Log, -1, 0, line, {}});
    };
    fs::path files = store.dir() / "kernelbench" / "candidates";
    fs::create_directories(files);
    const ProblemFacts facts = facts_of_run(store, run, p, ev, opt.eval);
    log("op class " + facts.op_class + "; " + facts.baselines_line());

    std::optional<ExperienceLibrary> library;
    open_library(library, opt.experience_library, log);

    // The LLM experts of this problem, with its share of the budgets.
    std::shared_ptr<llm::LlmEnsemble> ens;
    std::vector<std::shared_ptr<Expert>> experts = problem_llm_experts(opt, store, run, out.resumed, facts, ens, log);
    std::atomic<bool> stopping{false};
    if (ens) ens->watch([&] { return stopping.load() || (opt.should_stop && opt.should_stop()); });

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
    set_stop_hooks(hooks, opt, ens, stopping);
    // Every child is committed before it is evaluated, every evaluation as soon as it is done.
    set_store_hooks(hooks, store, run, p);
    if (library)
        hooks.library_notes = [&](DiagnosisClass dclass) { return library_notes(*library, facts, std::string(to_string(dclass))); };
    hooks.on_event = event_hook(store, run, facts, library, ens, opt);
    // The state after every result: a kill loses at most the children in flight, whose
    // committed candidates are picked up on resume.
    hooks.on_batch_done = [&] {
        store.put_state(run, "search", search->state());
        if (ens) store.put_state(run, "llm", ens->state());
    };
    cfg.task = nullptr;
    cfg.backend = Backend::Cuda;
    search.emplace(cfg, std::vector<PatternSource>{}, hooks);
    for (const auto& e : experts) search->add_expert(e);

    bool recorded = false;
    if (out.resumed) {
        recorded = resume_into(*search, store, run);
        log("resumed run " + std::to_string(run));
    }
    if (!recorded)  // a new run, or one killed before its first child was committed
        search->add_seeds(first_population(opt, experts, cfg.islands.islands, facts, library ? &*library : nullptr, log));

    out.result = search->run();
    stopping = true;
    close_run(store, run, opt, ens, out);

    if (library && out.result.best && out.result.best->fitness > 1.0)
        keep_winner(*library, store, facts, run, out, log);
    return out;
}

HandEvaluationResult evaluate_by_hand(const HandEvaluation& request) {
    HandEvaluationResult result;
    auto cancelled = [&] { return request.cancelled && request.cancelled(); };
    const ProjectView view = ProjectView::open(request.project);
    const std::optional<CandidateRecord> parent = view.candidate(request.parent);
    if (!parent) throw Error("candidate " + std::to_string(request.parent) + " is not in the project");
    const std::optional<RunRecord> run = view.run(parent->run_id);
    if (!run) throw Error("run " + std::to_string(parent->run_id) + " is not in the project");
    const json& config = run->config;
    if (!config.is_object() || config.value("kind", "") != "kernelbench")
        throw Error("run " + std::to_string(run->id) + " is not a KernelBench run");
    const std::string root = config.value("kb", "");
    if (root.empty()) throw Error("run " + std::to_string(run->id) + " does not name its KernelBench folder");
    const Problem problem = find_problem(root, config.value("level", 0), config.value("id", 0));

    // The options the run was searched with, so that the edit is judged as its siblings were.
    EvalOptions eval;
    eval.trials = config.value("trials", eval.trials);
    eval.reps = config.value("reps", eval.reps);
    eval.tolerance = config.value("tolerance", eval.tolerance);
    if (config.contains("baselines") && config["baselines"].is_array())
        eval.baselines = config["baselines"].get<std::vector<std::string>>();
    WorkerOptions worker = request.worker;
    if (config.contains("device") && config["device"].is_string()) worker.device = config["device"].get<std::string>();
    if (cancelled()) {
        result.cancelled = true;
        return result;
    }

    const fs::path files = request.project / "kernelbench" / "candidates";
    fs::create_directories(files);
    const fs::path edited = files / ("edited_from_" + std::to_string(parent->id) + "_" +
                                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".py");
    if (!(std::ofstream(edited, std::ios::binary) << request.source)) throw Error("cannot write " + edited.string());
    const std::shared_ptr<Evaluator> ev =
        request.evaluator_for ? request.evaluator_for(worker) : std::make_shared<Evaluator>(worker);
    Result r;
    try {
        r = ev->evaluate(problem, edited, eval);
    } catch (...) {
        std::error_code ec;
        fs::remove(edited, ec);
        throw;
    }
    if (cancelled()) {
        std::error_code ec;
        fs::remove(edited, ec);
        result.cancelled = true;
        return result;
    }
    result.diagnosis = r.diagnosis;

    const CandidateRecord child = user_child(*parent, request.source, request.rationale);
    ProjectStore store = ProjectStore::open(request.project);
    store.transaction([&] {
        result.candidate = store.add_candidate(child);
        store.add_evaluation(result.candidate, r.diagnosis);
        if (json v = r.verdict(); !v.empty()) {
            json verdicts = store.get_state(run->id, "kernelbench_verdicts").value_or(json::object());
            verdicts[std::to_string(result.candidate)] = v;
            store.put_state(run->id, "kernelbench_verdicts", verdicts);
        }
    });
    std::error_code ec;
    fs::rename(edited, files / ("candidate_" + std::to_string(result.candidate) + ".py"), ec);
    return result;
}

}  // namespace kf::kb
