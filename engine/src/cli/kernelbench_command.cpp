// `kfoundry kernelbench eval|run|report` (docs/kernelbench.md).
#include "kernelbench_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>

#include "kf/compile.h"
#include "kf/engine.h"
#include "kf/evaluator.h"
#include "kf/evolution.h"
#include "kf/kernelbench.h"
#include "kf/kernelbench_search.h"
#include "kf/library.h"
#include "kf/llm.h"
#include "kf/paths.h"
#include "kf/search.h"
#include "kf/store.h"
#include "kf/tunables.h"
#include "report.h"

namespace kf::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/** The options of `run --llm-config` (the full search per problem) and its budgets. */
void add_search_options(CLI::App* run, KernelBenchSearchArgs& s) {
    run->add_option("--llm-config", s.llm_config,
                    "LLM experts (JSON, docs/llm.md): the full search per problem, its first generation written by them")
        ->check(CLI::ExistingFile);
    run->add_option("--islands", s.islands, "Islands of the search (with --llm-config)")->capture_default_str()->check(CLI::Range(1, 64));
    run->add_option("--population", s.population, "Members kept per island (with --llm-config)")->capture_default_str()->check(CLI::Range(1, 1000));
    run->add_option("--problem-tokens", s.problem_tokens, "LLM tokens per problem (0: no limit)")->check(CLI::NonNegativeNumber);
    run->add_option("--problem-cost", s.problem_cost, "LLM cost per problem (0: no limit)")->check(CLI::NonNegativeNumber);
    run->add_option("--problem-time", s.problem_time_s, "Seconds of wall time per problem (0: no limit)")->check(CLI::NonNegativeNumber);
    run->add_option("--level-budget", s.level_evaluations, "Evaluations over all selected problems, shared out as they run (0: no limit)")
        ->check(CLI::NonNegativeNumber);
    run->add_option("--level-tokens", s.level_tokens, "LLM tokens over all selected problems (0: no limit)")->check(CLI::NonNegativeNumber);
    run->add_option("--level-cost", s.level_cost, "LLM cost over all selected problems (0: no limit)")->check(CLI::NonNegativeNumber);
    run->add_option("--level-time", s.level_time_s, "Seconds of wall time for the whole command (0: no limit)")->check(CLI::NonNegativeNumber);
    run->add_flag("--no-library", s.no_library, "No experience library: nothing retrieved, nothing learnt");
}

}  // namespace

CLI::App* add_kernelbench_command(CLI::App& app, KernelBenchArgs& a) {
    auto* kb = app.add_subcommand("kernelbench", "KernelBench problems, ModelNew candidates and KernelBench's metrics");
    kb->require_subcommand(1);
    auto worker_options = [&a](CLI::App* c) {
        c->add_option("--python", a.python, "Python with PyTorch (default: $KF_PYTHON or python3)");
        c->add_option("--kb-worker", a.worker_script, "The Python worker (default: resources/kernelbench/kb_worker.py)");
        c->add_option("--worker-log", a.worker_log, "Where the Python worker's output goes (default: discarded)");
        c->add_option("--device", a.device, "CUDA device index (cpu: the worker's CPU testing mode)")->capture_default_str();
        c->add_option("--trials", a.trials, "Correctness trials, each on fresh inputs")->capture_default_str()->check(CLI::Range(1, 100));
        c->add_option("--tolerance", a.tolerance,
                      "Correctness tolerance: current (KernelBench today, fp32 1e-4), v0 (1e-2, as in most published "
                      "results) or strict; each also weighs the error against an fp64 run of the reference")
            ->capture_default_str()
            ->check(CLI::IsMember(std::vector<std::string>(std::begin(kb::kTolerancePolicies),
                                                           std::end(kb::kTolerancePolicies))));
        c->add_option("--reps", a.reps, "Timed calls per measurement")->capture_default_str()->check(CLI::Range(1, 100000));
        c->add_option("--seed", a.seed, "Seed of Model/ModelNew construction and of the inputs")->capture_default_str();
        c->add_option("--timeout", a.timeout_s, "Seconds allowed per evaluation (baselines included)")->capture_default_str()->check(CLI::PositiveNumber);
        c->add_flag("--no-compile-baseline", a.no_compile_baseline, "Do not time the torch.compile baseline");
        c->add_option("--kb", a.kb, "KernelBench checkout (the folder holding KernelBench/level1...)")->required();
        c->add_option("--level", a.level, "KernelBench level")->capture_default_str()->check(CLI::Range(1, 10));
    };
    auto* eval = kb->add_subcommand("eval", "Verify, time and diagnose one ModelNew file against one problem");
    worker_options(eval);
    eval->add_option("--problem", a.problem, "Problem id within the level")->required()->check(CLI::PositiveNumber);
    eval->add_option("CANDIDATE", a.candidate, "ModelNew file (.py)")->required()->check(CLI::ExistingFile);
    eval->add_flag("--json", a.as_json, "Print the diagnosis record and baselines as JSON");
    eval->callback([&a] { a.action = "eval"; });

    auto* run = kb->add_subcommand("run", "Run problems of a level; results are kept in a project");
    worker_options(run);
    run->add_option("--problems", a.problems, "Ids, e.g. 1-20,25 (default: the whole level)");
    run->add_option("--project", a.project, "Project folder (created when missing)")->required();
    run->add_option("--candidates", a.candidates_dir,
                    "Folder of ModelNew files: levelL/ID_*.py, ID_*.py or level_L_problem_ID_sample_S_kernel.py")
        ->check(CLI::ExistingDirectory);
    run->add_option("--budget", a.budget, "Evaluations per problem; the tuner varies annotated tunables (0: each candidate once)")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
    run->add_option("--jobs", a.jobs, "Parallel compiles (default: the number of cores)")->check(CLI::NonNegativeNumber);
    run->add_flag("--force", a.force, "Run problems again that are already finished in the project");
    add_search_options(run, a.search);
    add_executor_options(run, a.executor);
    run->callback([&a] { a.action = "run"; });

    auto* report = kb->add_subcommand("report", "KernelBench's metrics for the problems run in a project");
    report->add_option("--project", a.project, "Project folder")->required()->check(CLI::ExistingDirectory);
    report->add_option("--kb", a.kb, "KernelBench checkout: with --level/--problems, problems not run count as failures");
    report->add_option("--level", a.level, "Level (with --kb)");
    report->add_option("--problems", a.problems, "Ids (with --kb; default: the whole level)");
    report->add_flag("--json", a.as_json, "Print the report as JSON");
    report->add_option("--markdown", a.markdown, "Also write the report as Markdown to this file");
    report->callback([&a] { a.action = "report"; });
    return kb;
}

namespace {

kb::WorkerOptions worker_options(const KernelBenchArgs& a) {
    kb::WorkerOptions w;
    w.python = a.python;
    w.script = a.worker_script;
    w.device = a.device;
    w.log = a.worker_log;
    w.executor = a.executor.options;
    return w;
}

kb::EvalOptions eval_options(const KernelBenchArgs& a) {
    kb::EvalOptions o;
    o.trials = a.trials;
    o.tolerance = a.tolerance;
    o.reps = a.reps;
    o.seed = a.seed;
    o.timeout_s = a.timeout_s;
    if (a.no_compile_baseline) o.baselines = {"eager"};
    return o;
}

std::vector<kb::Problem> selected_problems(const KernelBenchArgs& a) {
    auto all = kb::list_problems(a.kb, a.level);
    if (a.problems.empty()) return all;
    std::vector<kb::Problem> out;
    for (int id : kb::parse_id_list(a.problems)) {
        auto it = std::find_if(all.begin(), all.end(), [id](const kb::Problem& p) { return p.id == id; });
        if (it == all.end())
            std::fprintf(stderr, "kfoundry: level %d has no problem %d; it counts as a failure\n", a.level, id);
        else
            out.push_back(*it);
    }
    return out;
}

/** Starts the worker; false (with the reason on stderr) when Python, PyTorch or CUDA is missing. */
bool start_worker(kb::Evaluator& ev) {
    try {
        json h = ev.hello();
        std::fprintf(stderr, "KernelBench worker: PyTorch %s on %s\n", h.value("torch", "?").c_str(),
                     h.contains("device") ? h["device"].value("name", "?").c_str() : "?");
        return true;
    } catch (const std::exception& e) {
        std::cerr << "kfoundry: the KernelBench worker cannot run: " << e.what() << "\n";
        return false;
    }
}

std::string baseline_line(const kb::Result& r) {
    std::string s = "eager " + (r.eager_ms() > 0 ? std::to_string(r.eager_ms()) + " ms" : std::string("—"));
    if (r.baselines.contains("compile")) {
        const json& c = r.baselines["compile"];
        if (c.contains("error")) s += ", torch.compile failed: " + c.value("error", std::string());
        else s += ", torch.compile " + std::to_string(r.compile_ms()) + " ms";
    }
    return s;
}

int cmd_eval(KernelBenchArgs& a) {
    kb::Problem p = kb::find_problem(a.kb, a.level, a.problem);
    if (std::string why = kb::unsupported_reason(p); !why.empty()) {
        std::cerr << "kfoundry: " << p.key() << ": " << why << "\n";
        return kExitError;
    }
    kb::Evaluator ev(worker_options(a));
    if (!start_worker(ev)) return kExitNoDevice;
    std::string source = read_text_file(a.candidate);
    if (!a.as_json) std::fprintf(stderr, "compiling %s...\n", a.candidate.string().c_str());
    CompileInfo ci = ev.compile_all({a.candidate}, 1, a.timeout_s).front();
    kb::Result r = ev.evaluate(p, a.candidate, eval_options(a), [&](const json& prog) {
        if (!a.as_json) std::fprintf(stderr, "  %s\n", prog.dump().c_str());
    });
    // The compile step ran in its own process; the worker then loaded the built extension.
    if (ci.ok && r.diagnosis.compile.seconds <= 0) r.diagnosis.compile.seconds = ci.seconds;
    if (a.as_json) {
        json j = r.diagnosis;
        j["problem"] = p.key();
        j["candidate"] = fs::absolute(a.candidate).string();
        j["baselines"] = r.baselines;
        j["kernelbench_mean_ms"] = r.means;
        j["compile_step"] = {{"ok", ci.ok}, {"seconds", ci.seconds}, {"cached", ci.cached}};
        j["tolerance"] = a.tolerance;
        j["verdict"] = r.verdict();
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << p.key() << "\n" << render_diagnosis(r.diagnosis, source);
        std::cout << "tolerance: " << a.tolerance << " (" << kb::describe_tolerance(a.tolerance) << ")\n";
        if (json v = r.verdict(); v.value("fp64_available", false))
            std::cout << "max abs error against fp64: candidate " << v.value("candidate_error_fp64", 0.0)
                      << ", fp32 reference " << v.value("reference_error_fp64", 0.0)
                      << (v.value("passed_by", "") == "fp64" ? " (correct by the fp64 rule)" : "") << "\n";
        std::cout << "baselines: " << baseline_line(r) << "\n";
        std::cout << "compile step: " << (ci.ok ? "ok" : "failed") << ", " << ci.seconds << " s"
                  << (ci.cached ? " (cached)" : "") << "\n";
    }
    return r.diagnosis.ok() ? kExitOk : kExitCandidateFailed;
}

/** Evaluates a problem's candidates (and the tuner's variants, with a budget) into the store. */
struct ProblemRun {
    KernelBenchArgs& a;
    kb::Evaluator& ev;
    ProjectStore& store;
    const kb::Problem& p;
    std::int64_t run = 0;
    fs::path files;
    bool baselines_saved = false;

    void save_baselines(const kb::Result& r) {
        if (baselines_saved || r.baselines.empty()) return;
        store.put_state(run, "kernelbench_baselines", r.baselines);
        baselines_saved = true;
    }

    /** How each candidate's correctness was judged (tolerance, errors against fp64), by candidate id. */
    void save_verdict(std::int64_t candidate, const kb::Result& r) {
        json v = r.verdict();
        if (v.empty()) return;
        json all = store.get_state(run, "kernelbench_verdicts").value_or(json::object());
        all[std::to_string(candidate)] = v;
        store.put_state(run, "kernelbench_verdicts", all);
    }

    std::vector<Diagnosis> evaluate_batch(const std::vector<Child>& batch) {
        std::vector<fs::path> paths;
        for (const auto& c : batch) {
            std::string src = c.proposal.tunables.empty() ? c.proposal.source : apply_tunables(c.proposal.source, c.proposal.tunables);
            fs::path f = files / ("candidate_" + std::to_string(c.id) + ".py");
            std::ofstream(f, std::ios::binary) << src;
            paths.push_back(f);
        }
        int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        auto compiled = ev.compile_all(paths, jobs, a.timeout_s);
        std::vector<Diagnosis> out;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            kb::Result r = ev.evaluate(p, paths[i], eval_options(a));
            if (compiled[i].ok && r.diagnosis.compile.seconds <= 0) r.diagnosis.compile.seconds = compiled[i].seconds;
            save_baselines(r);
            save_verdict(batch[i].id, r);
            store.add_evaluation(batch[i].id, r.diagnosis);
            std::printf("  #%lld %-20s %s\n", static_cast<long long>(batch[i].id),
                        std::string(to_string(r.diagnosis.status)).c_str(), r.diagnosis.message.c_str());
            std::fflush(stdout);
            out.push_back(std::move(r.diagnosis));
        }
        return out;
    }

    void go(const std::vector<fs::path>& candidates) {
        if (candidates.empty()) {
            kb::Result r = ev.evaluate(p, std::nullopt, eval_options(a));
            save_baselines(r);
            store.set_run_state(run, RunState::Done, "no candidate for this problem");
            std::printf("  no candidate (%s)\n", baseline_line(r).c_str());
            return;
        }
        SearchConfig cfg;
        cfg.islands.islands = 1;
        cfg.island_experts = {{"tuner"}};
        cfg.budget = std::max<int>(a.budget, static_cast<int>(candidates.size()));
        cfg.seed = a.seed;
        cfg.backend = Backend::Cuda;
        SearchHooks hooks;
        hooks.evaluate = [this](const std::vector<Child>& batch) { return evaluate_batch(batch); };
        hooks.on_child = [this](Child& c) { c.id = store.add_candidate(candidate_record(c, run, p.key())); };
        Search search(cfg, {}, hooks);
        search.add_seeds(kb::model_new_seeds(candidates));
        SearchResult res = search.run();
        store.set_run_state(run, RunState::Done, to_string(res.stop_reason));
    }
};

int cmd_run_search(KernelBenchArgs& a);

int cmd_run(KernelBenchArgs& a) {
    if (a.executor.array) {
        std::cerr << "kfoundry: --slurm-array is for `kfoundry evolve`; `kernelbench run --executor slurm` sends its "
                     "worker to Slurm\n";
        return kExitUsage;
    }
    // Where the Python worker runs: here, or as a Slurm job (its compiles stay here).
    if (int rc = resolve_executor(a.executor, a.project); rc != kExitOk) return rc;
    if (!a.search.llm_config.empty()) return cmd_run_search(a);
    auto problems = selected_problems(a);
    ProjectStore store = ProjectStore::open_or_create(a.project, fs::absolute(a.project).filename().string());
    kb::WorkerOptions wo = worker_options(a);
    kb::Evaluator ev(wo);
    if (!start_worker(ev)) return kExitNoDevice;
    fs::path files = store.dir() / "kernelbench" / "candidates";
    fs::create_directories(files);
    // Finished problems, with the tolerance they were judged by (runs from before the policies
    // were recorded used today's KernelBench tolerance).
    const std::set<std::string> finished = kb::finished_problems(store, a.tolerance);
    int done = 0;
    for (const auto& p : problems) {
        ++done;
        std::printf("[%d/%zu] %s\n", done, problems.size(), p.key().c_str());
        std::fflush(stdout);
        if (!a.force && finished.count(p.key())) {
            std::printf("  already finished in this project (--force runs it again)\n");
            continue;
        }
        if (std::string why = kb::unsupported_reason(p); !why.empty()) {
            std::printf("  %s\n", why.c_str());
            continue;
        }
        std::vector<fs::path> candidates;
        if (!a.candidates_dir.empty()) candidates = kb::find_candidates(a.candidates_dir, p);
        json config = {{"kind", "kernelbench"}, {"level", p.level}, {"id", p.id},
                       {"name", p.name},        {"file", p.file.string()}, {"kb", fs::absolute(a.kb).string()},
                       {"budget", a.budget},    {"seed", a.seed},  {"trials", a.trials}, {"reps", a.reps},
                       {"tolerance", a.tolerance}};
        ProblemRun pr{a, ev, store, p, store.add_run(p.key(), config), files, false};
        pr.go(candidates);
    }
    auto rep = kb::make_report(kb::outcomes_from_store(store));
    std::printf("\ntolerance %s: %s\n", a.tolerance.c_str(), kb::describe_tolerance(a.tolerance).c_str());
    std::printf("correct %d of %d problem(s) in the project; fast_1 against eager %.1f%%; `kfoundry kernelbench report "
                "--project %s` for the full report\n",
                rep.correct, rep.problems, 100 * rep.fast_eager[3].second, a.project.string().c_str());
    return kExitOk;
}

/** Ctrl-C / SIGTERM during `run --llm-config`: the search stops cleanly and resumes next time. */
std::atomic<bool> g_search_stop{false};
void on_search_interrupt(int) { g_search_stop = true; }

/**
 * `kernelbench run --llm-config`: the full search on each problem. A level budget is shared
 * out as the problems run: each gets what the others (their latest runs in the project) left,
 * divided by the problems still to run, itself included, so what one leaves unused goes to
 * the next; a per-problem limit caps its share.
 */
int cmd_run_search(KernelBenchArgs& a) {
    const KernelBenchSearchArgs& s = a.search;
    auto cfg = std::make_shared<llm::LlmConfig>();
    try {
        *cfg = llm::load_llm_config(s.llm_config);
        // Keys and templates (the KernelBench ones too), before anything runs.
        auto probe = llm::LlmEnsemble::create(*cfg, resources_dir() / "prompts");
        kb::ProblemFacts facts;
        Member parent;
        ProposalContext first, later;
        later.parent = &parent;
        for (const auto& [role, rc] : cfg->roles)
            if (rc.enabled) kb::render_prompt(*probe, role, facts, first), kb::render_prompt(*probe, role, facts, later);
    } catch (const Error& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitUsage;
    }
    KernelBenchRequest request;
    request.project = a.project;
    request.worker = worker_options(a);
    kb::ProblemSetRequest& set = request.problems;
    set.problems = selected_problems(a);
    set.skip_finished = !a.force;
    set.candidates_dir = a.candidates_dir;
    // The configuration's own budgets hold for the whole command, like the level's.
    set.level.evaluations = s.level_evaluations;
    set.level.tokens = s.level_tokens;
    set.level.cost = s.level_cost;
    set.level.time_s = s.level_time_s;
    set.level = kb::with_llm_budgets(set.level, *cfg);
    kb::ProblemSearchOptions& o = set.base;
    o.search.islands.islands = s.islands;
    o.search.islands.population = s.population;
    o.search.seed = a.seed;
    o.search.budget = a.budget > 0 ? a.budget : 30;
    o.search.island_experts = kb::kLlmIslandExperts;
    o.search.time_limit_s = s.problem_time_s;
    o.budgets.max_tokens = s.problem_tokens;
    o.budgets.max_cost = s.problem_cost;
    o.eval = eval_options(a);
    o.jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    o.llm = cfg;
    if (!s.no_library) o.experience_library = ExperienceLibrary::user_library_path();
    set.run_config = {{"kb", fs::absolute(a.kb).string()}};
    o.on_event = [](const SearchEvent& e) {
        if (e.kind == EventKind::Evaluated || e.kind == EventKind::Seeded)
            std::printf("  #%lld %-8s %s\n", static_cast<long long>(e.member), e.data.value("expert", std::string("seed")).c_str(),
                        e.message.c_str());
        else if (e.kind == EventKind::Log)
            std::printf("  %s\n", e.message.c_str());
        std::fflush(stdout);
    };
    KernelBenchCallbacks callbacks;
    callbacks.should_stop = [] { return g_search_stop.load(); };
    callbacks.set.on_skipped = [](const kb::Problem& p, const kb::ProblemSkip& skip) {
        std::printf("%s: %s%s\n", p.key().c_str(), skip.message().c_str(),
                    skip.why == kb::ProblemSkip::Why::Finished ? " in this project (--force runs it again)" : "");
    };
    callbacks.set.on_problem = [](std::size_t i, std::size_t n, const kb::Problem& p, const kb::ProblemSearchOptions& po) {
        std::printf("[%zu/%zu] %s\n", i + 1, n, p.key().c_str());
        std::printf("  budgets: %d evaluations%s%s%s\n", po.search.budget,
                    po.budgets.max_tokens > 0 ? (", " + std::to_string(po.budgets.max_tokens) + " tokens").c_str() : "",
                    po.budgets.max_cost > 0 ? (", cost " + std::to_string(po.budgets.max_cost)).c_str() : "",
                    po.search.time_limit_s > 0 ? (", " + std::to_string(static_cast<int>(po.search.time_limit_s)) + " s").c_str() : "");
        std::fflush(stdout);
    };
    callbacks.set.on_searched = [](const kb::Problem&, const kb::ProblemSearchOutcome& r) {
        const json t = r.llm_usage.is_object() ? r.llm_usage.value("totals", json::object()) : json::object();
        std::printf("  run %lld%s: %s; best %s; LLM %lld calls, %lld tokens, cost %.4f\n", static_cast<long long>(r.run_id),
                    r.resumed ? " (resumed)" : "", to_string(r.result.stop_reason).c_str(),
                    r.result.best ? (std::to_string(r.result.best->fitness) + "x eager").c_str() : "none correct",
                    static_cast<long long>(t.value("calls", std::int64_t{0})),
                    static_cast<long long>(t.value("input_tokens", std::int64_t{0}) + t.value("output_tokens", std::int64_t{0})),
                    t.value("cost", 0.0));
        std::fflush(stdout);
    };
    std::signal(SIGINT, on_search_interrupt);
    std::signal(SIGTERM, on_search_interrupt);
    Engine engine;
    try {
        const std::shared_ptr<kb::Evaluator> ev = engine.kernelbench_evaluator(request.worker);
        if (!start_worker(*ev)) return kExitNoDevice;
        engine.run_kernelbench(request, callbacks);
    } catch (const NoDevice& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitNoDevice;
    }
    if (g_search_stop) std::printf("stopped; `kfoundry kernelbench run` with the same options resumes\n");
    ProjectStore store = ProjectStore::open(a.project);
    auto rep = kb::make_report(kb::outcomes_from_store(store));
    std::printf("\ncorrect %d of %d problem(s) in the project; fast_1 against eager %.1f%%; `kfoundry kernelbench report "
                "--project %s` for the full report\n",
                rep.correct, rep.problems, 100 * rep.fast_eager[3].second, a.project.string().c_str());
    return kExitOk;
}

int cmd_report(KernelBenchArgs& a) {
    ProjectStore store = ProjectStore::open(a.project);
    auto rows = kb::outcomes_from_store(store);
    if (!a.kb.empty()) {
        // The denominator is the selected problems: those not run count as failures.
        // An id without a problem file counts too: KernelBench scores a missing problem as a failure.
        auto all = kb::list_problems(a.kb, a.level);
        std::vector<int> ids;
        if (a.problems.empty())
            for (const auto& p : all) ids.push_back(p.id);
        else
            ids = kb::parse_id_list(a.problems);
        std::vector<kb::ProblemOutcome> selected;
        for (int id : ids) {
            auto it = std::find_if(rows.begin(), rows.end(),
                                   [&](const kb::ProblemOutcome& o) { return o.level == a.level && o.id == id; });
            if (it != rows.end()) {
                selected.push_back(*it);
                continue;
            }
            kb::ProblemOutcome o;
            o.level = a.level;
            o.id = id;
            auto f = std::find_if(all.begin(), all.end(), [id](const kb::Problem& p) { return p.id == id; });
            o.name = f != all.end() ? f->name : "(no problem file)";
            o.message = "not run";
            selected.push_back(o);
        }
        rows = std::move(selected);
    }
    if (rows.empty()) {
        std::cerr << "kfoundry: no KernelBench results in " << a.project.string()
                  << " (run `kfoundry kernelbench run` first)\n";
        return kExitError;
    }
    kb::Report r = kb::make_report(std::move(rows));
    std::string md = kb::to_markdown(r);
    if (!a.markdown.empty()) {
        std::ofstream out(a.markdown);
        if (!(out << md)) throw Error("cannot write " + a.markdown.string());
    }
    if (a.as_json) std::cout << kb::to_json(r).dump(2) << "\n";
    else std::cout << md;
    return kExitOk;
}

}  // namespace

int run_kernelbench(KernelBenchArgs& a) {
    if (a.action == "eval") return cmd_eval(a);
    if (a.action == "run") return cmd_run(a);
    if (a.action == "report") return cmd_report(a);
    return kExitUsage;
}

}  // namespace kf::cli
