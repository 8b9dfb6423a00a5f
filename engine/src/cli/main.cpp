// kfoundry: the command-line face of the engine (docs/cli.md).
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/evaluator.h"
#include "kf/exec.h"
#include "kf/library.h"
#include "kf/paths.h"
#include "kf/task.h"
#include "kf/transforms.h"
#include "computation_command.h"
#include "evolve_command.h"
#include "kernelbench_command.h"
#include "library_command.h"
#include "profile_command.h"
#include "report.h"
#include "search_array.h"
#include "task_arg.h"

namespace {

using namespace kf;
using nlohmann::json;

using cli::load_task_arg;
using cli::UsageError;

Backend backend_arg(const std::string& s) {
    auto b = backend_from_string(s);
    if (!b) throw UsageError("unknown backend '" + s + "' (cuda or host)");
    return *b;
}

std::string read_source(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("cannot read candidate file " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Assignment parse_assignments(const std::vector<std::string>& items) {
    Assignment a;
    for (const auto& it : items) {
        auto eq = it.find('=');
        if (eq == std::string::npos || eq == 0) throw UsageError("--tunable expects NAME=VALUE, got '" + it + "'");
        try {
            a[it.substr(0, eq)] = std::stoll(it.substr(eq + 1));
        } catch (const std::exception&) {
            throw UsageError("--tunable " + it + ": the value must be an integer");
        }
    }
    return a;
}

int cmd_tasks_list(const std::string& root_arg, bool as_json) {
    std::filesystem::path root = root_arg.empty() ? bundled_tasks_dir() : std::filesystem::path(root_arg);
    if (root.empty()) throw Error("no bundled tasks folder found (set KF_TASKS_DIR or pass --root)");
    json out = json::array();
    int bad = 0;
    for (const auto& dir : find_task_dirs(root)) {
        std::string rel = std::filesystem::relative(dir, root).string();
        try {
            Task t = load_task(dir);
            std::string backends;
            for (const auto& [b, p] : t.references) {
                if (!backends.empty()) backends += ',';
                backends += to_string(b);
            }
            if (as_json)
                out.push_back({{"task", rel}, {"name", t.name}, {"title", t.title}, {"op_class", t.op_class}, {"backends", backends}});
            else
                std::printf("%-28s %-12s %-10s %s\n", rel.c_str(), t.op_class.c_str(), backends.c_str(), t.title.c_str());
        } catch (const TaskError& e) {
            ++bad;
            if (as_json) out.push_back({{"task", rel}, {"error", e.what()}});
            else std::printf("%-28s INVALID: %s\n", rel.c_str(), e.what());
        }
    }
    if (as_json) std::cout << out.dump(2) << "\n";
    return bad ? kExitBadTask : kExitOk;
}

int cmd_eval(const std::string& task_arg, const std::vector<std::string>& cand_paths, const std::string& backend_s,
             bool as_json, EvalOptions opt, const std::string& worker_path) {
    Task task = load_task_arg(task_arg);
    Backend b = backend_arg(backend_s);
    if (!task.supports(b))
        throw UsageError("task " + task.name + " has no " + std::string(to_string(b)) + " reference");
    std::vector<Candidate> cands;
    for (const auto& path : cand_paths) {
        Candidate c;
        c.source = read_source(path);
        c.name = std::filesystem::path(path).stem().string();
        cands.push_back(std::move(c));
    }
    EvaluatorConfig cfg;
    cfg.worker.backend = b;
    if (!worker_path.empty()) cfg.worker.worker = worker_path;
    Evaluator ev(cfg);
    try {
        ev.worker().hello();  // the device first: no point compiling for a missing one
    } catch (const Error& e) {
        std::cerr << "kfoundry: no " << to_string(b) << " device: " << e.what() << "\n";
        return kExitNoDevice;
    }
    if (!as_json)
        std::fprintf(stderr, "compiling %zu candidate(s) for %s (%s backend)...\n", cands.size(), task.name.c_str(),
                     std::string(to_string(b)).c_str());
    bool all_ok = true;
    ev.evaluate_all(task, cands, opt, [&](std::size_t i, const Diagnosis& d) {
        all_ok = all_ok && d.ok();
        if (as_json) {
            // One record per line as soon as it is known (a single candidate: one record).
            json record = d;
            record["candidate"] = cand_paths[i];
            std::cout << (cands.size() == 1 ? record.dump(2) : record.dump()) << "\n" << std::flush;
        } else {
            if (cands.size() > 1) std::cout << cand_paths[i] << "\n";
            std::cout << cli::render_diagnosis(d, cands[i].source) << std::flush;
        }
    });
    return all_ok ? kExitOk : kExitCandidateFailed;
}

int cmd_device_info(const std::string& backend_s, bool as_json, bool remeasure, const std::string& worker_path) {
    Backend b = backend_arg(backend_s);
    WorkerConfig wc;
    wc.backend = b;
    if (!worker_path.empty()) wc.worker = worker_path;
    WorkerClient worker(wc);
    json hello;
    try {
        hello = worker.hello();
    } catch (const Error& e) {
        std::cerr << "kfoundry: no " << to_string(b) << " device: " << e.what() << "\n";
        return kExitNoDevice;
    }
    if (!as_json) std::fprintf(stderr, "measuring peaks (once per device, then cached)...\n");
    auto r = worker.request({{"cmd", "device_info"}, {"remeasure", remeasure}}, std::chrono::minutes(5));
    if (!r.ok || !r.body.value("ok", false)) {
        std::cerr << "kfoundry: the worker did not report its device: " << (r.ok ? r.body.value("error", "") : r.exit) << "\n";
        return kExitNoDevice;
    }
    json info = {{"device", r.body["device"]}, {"peaks", r.body["peaks"]}};
    if (as_json) std::cout << info.dump(2) << "\n";
    else std::cout << cli::render_device(info);
    return kExitOk;
}

/** `kfoundry rewrite`: one named rewrite applied to a source, or its refusal (exit 1) with the reason. */
int cmd_rewrite(bool list, const std::string& name, const std::string& source, const std::string& out) {
    if (list) {
        for (const auto& t : code_transforms()) std::cout << t.name << "\t" << t.description << "\n";
        return kExitOk;
    }
    if (name.empty() || source.empty()) throw UsageError("rewrite: give NAME and SOURCE (or --list)");
    for (const auto& t : code_transforms()) {
        if (t.name != name) continue;
        std::ifstream in(source);
        if (!in) throw Error("cannot read " + source);
        std::stringstream ss;
        ss << in.rdbuf();
        TransformResult r = t.apply(ss.str());
        if (!r.source) {
            std::cerr << "kfoundry: " << name << " does not apply to " << source << ": " << r.refusal << "\n";
            return kExitError;
        }
        if (out.empty()) {
            std::cout << *r.source;
            return kExitOk;
        }
        std::ofstream o(out);
        if (!(o << *r.source)) throw Error("cannot write " + out);
        return kExitOk;
    }
    std::string names;
    for (const auto& t : code_transforms()) names += (names.empty() ? "" : ", ") + t.name;
    throw UsageError("rewrite: unknown rewrite '" + name + "' (" + names + ")");
}

}  // namespace

int main(int argc, char** argv) {
    // The two ends of a worker that runs as a Slurm job (docs/cluster.md), started by the
    // engine and by the job, never by hand.
    if (argc == 3 && std::string(argv[1]) == "slurm-relay") return kf::slurm_relay_main(argv[2]);
    if (argc == 3 && std::string(argv[1]) == "slurm-agent") return kf::slurm_agent_main(argv[2]);
    CLI::App app{"Kernel Foundry: turn a reference computation into a fast, verified GPU kernel"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("kfoundry ") + KF_VERSION_STRING);
    std::string worker_path;
    app.add_option("--worker", worker_path, "kfoundry-worker executable (default: next to kfoundry)");

    auto* tasks = app.add_subcommand("tasks", "Bundled tasks");
    tasks->require_subcommand(1);
    auto* tasks_list = tasks->add_subcommand("list", "List tasks and validate their manifests");
    std::string root;
    bool json_out = false;
    tasks_list->add_option("--root", root, "Folder to search (default: the bundled tasks)");
    tasks_list->add_flag("--json", json_out, "Machine-readable output");

    auto* task = app.add_subcommand("task", "One task");
    task->require_subcommand(1);
    auto* header = task->add_subcommand("header", "Print the typed entry point a candidate implements");
    std::string task_arg, backend_s = "cuda";
    header->add_option("TASK", task_arg, "Task folder or bundled task name")->required();
    header->add_option("--backend", backend_s, "cuda or host")->capture_default_str();

    auto* computation = task->add_subcommand(
        "computation", "Print the computation the op-class templates are written from: the manifest's, or derived from the reference");
    cli::ComputationArgs comp;
    computation->add_option("TASK", comp.task, "Task folder or bundled task name")->required();
    computation->add_flag("--derive", comp.derive, "Derive it from the host reference even where the manifest declares one");
    computation->add_option("--recogniser", comp.recogniser, "best (libclang, else tokens), libclang or tokens")->capture_default_str();
    computation->add_flag("--write", comp.write, "Write the derived computation into the task's manifest (which must have none)");
    computation->add_flag("--json", comp.as_json, "Machine-readable output");

    auto* eval = app.add_subcommand("eval", "Compile, verify, time and diagnose a candidate");
    std::vector<std::string> cand_paths;
    EvalOptions opt;
    std::vector<std::string> tunables;
    bool no_time = false;
    eval->add_option("TASK", task_arg, "Task folder or bundled task name")->required();
    eval->add_option("CANDIDATE", cand_paths, "Candidate source file(s) (.cu or .cpp); several compile in parallel")
        ->required()
        ->check(CLI::ExistingFile);
    eval->add_option("--backend", backend_s, "cuda or host")->capture_default_str();
    eval->add_flag("--json", json_out, "Print the full diagnosis record as JSON");
    eval->add_option("--trials", opt.trials, "Correctness trials per case")->capture_default_str()->check(CLI::Range(1, 100));
    eval->add_option("--timeout", opt.timeout_s, "Seconds allowed for the worker's part")->capture_default_str()->check(CLI::PositiveNumber);
    eval->add_option("--min-time", opt.min_time_ms, "Timed milliseconds after which the timed calls stop, if not before")->capture_default_str();
    eval->add_option("--precision", opt.precision,
                     "The timed calls stop once the median is known to within this fraction (0: always --min-time)")
        ->capture_default_str()->check(CLI::Range(0.0, 1.0));
    eval->add_option("--seed", opt.seed, "Base seed of the trials (0: random)");
    eval->add_option("--tunable", tunables, "NAME=VALUE for an annotated tunable (repeatable)");
    eval->add_flag("--no-time", no_time, "Check correctness and integrity only");

    auto* profile = app.add_subcommand("profile", "Evaluate a candidate, then profile it with Nsight Compute");
    cli::ProfileArgs prof;
    profile->add_option("TASK", prof.task, "Task folder or bundled task name");
    profile->add_option("CANDIDATE", prof.candidate, "Candidate source file (.cu)")->check(CLI::ExistingFile);
    profile->add_option("--backend", prof.backend, "cuda or host")->capture_default_str();
    profile->add_flag("--json", prof.as_json, "Print the diagnosis record with its profile as JSON");
    profile->add_option("--timeout", prof.profile.timeout_s, "Seconds allowed for the profiler run")->capture_default_str()->check(CLI::PositiveNumber);
    profile->add_option("--runs", prof.profile.runs, "Profiled candidate calls")->capture_default_str()->check(CLI::Range(1, 100));
    profile->add_option("--keep-csv", prof.keep_csv, "Folder to keep ncu's raw CSV output in (<task>__<candidate>.csv)");
    profile->add_option("--trials", prof.eval.trials, "Correctness trials per case")->capture_default_str()->check(CLI::Range(1, 100));
    profile->add_option("--min-time", prof.eval.min_time_ms, "Minimum total timed milliseconds")->capture_default_str();
    profile->add_option("--seed", prof.eval.seed, "Base seed of the trials (0: random)");
    profile->add_option("--tunable", prof.tunables, "NAME=VALUE for an annotated tunable (repeatable)");
    profile->add_flag("--list-metrics", prof.list_metrics, "Print the Nsight Compute metric names used, one per line");

    auto* device = app.add_subcommand("device", "The evaluation device");
    device->require_subcommand(1);
    auto* info = device->add_subcommand("info", "Name, SMs and measured peaks");
    bool remeasure = false;
    info->add_option("--backend", backend_s, "cuda or host")->capture_default_str();
    info->add_flag("--json", json_out, "Machine-readable output");
    info->add_flag("--remeasure", remeasure, "Measure the peaks again instead of using the cache");

    auto* evolve = app.add_subcommand("evolve", "Search for faster kernels; results are kept in a project");
    cli::EvolveArgs ev;
    std::string project_s;
    double time_limit = 0;
    evolve->add_option("TASK", ev.tasks, "Task folder(s) or bundled task name(s)")->required();
    evolve->add_option("--project", project_s, "Project folder (created when missing)")->required();
    evolve->add_option("--backend", ev.backend, "cuda or host")->capture_default_str();
    evolve->add_option("--islands", ev.options.search.islands.islands, "Islands")->capture_default_str()->check(CLI::Range(1, 64));
    evolve->add_option("--population", ev.options.search.islands.population, "Members kept per island")->capture_default_str()->check(CLI::Range(2, 1000));
    evolve->add_option("--budget", ev.options.search.budget, "Evaluations (seeds included); 0: unlimited")->capture_default_str()->check(CLI::NonNegativeNumber);
    evolve->add_option("--time", time_limit, "Wall-time limit in seconds; 0: unlimited")->check(CLI::NonNegativeNumber);
    evolve->add_option("--stagnation", ev.options.search.stagnation_stop, "Stop after this many rounds without a new best; 0: never")->check(CLI::NonNegativeNumber);
    evolve->add_option("--seed", ev.options.search.seed, "Seed of the search (reproducible)")->capture_default_str();
    evolve->add_flag("--resume", ev.options.resume, "Continue the task's latest unfinished run in the project");
    bool no_library = false;
    evolve->add_flag("--no-library", no_library, "Do not record evidence in the user's experience library");
    bool no_profile = false;
    evolve->add_flag("--no-profile", no_profile, "Do not profile new bests with Nsight Compute during the run");
    evolve->add_option("--trials", ev.options.eval.trials, "Correctness trials per case")->capture_default_str()->check(CLI::Range(1, 100));
    evolve->add_option("--timeout", ev.options.eval.timeout_s, "Seconds allowed per evaluation")->capture_default_str()->check(CLI::PositiveNumber);
    evolve->add_option("--min-time", ev.options.eval.min_time_ms, "Timed milliseconds per evaluation after which the timed calls stop, if not before")->capture_default_str();
    evolve->add_option("--precision", ev.options.eval.precision,
                       "The timed calls stop once the median is known to within this fraction (0: always --min-time)")
        ->capture_default_str()->check(CLI::Range(0.0, 1.0));
    evolve->add_option("--llm-config", ev.llm_config, "LLM experts configuration (JSON, docs/llm.md); default: built-in experts only")
        ->check(CLI::ExistingFile);
    evolve->add_flag("--json", ev.as_json, "Progress on stderr; the summary of each run as JSON on stdout");
    evolve->add_option("--min-gain", ev.min_gain, "Speedup over the reference that counts as an improvement")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1000.0));
    evolve->add_option("--confirm-rounds", ev.options.confirm_rounds,
                       "Once the search has ended, time its best again this many rounds side by side with the reference "
                       "(0: not at all); the run improved only where their median, too, reaches --min-gain")
        ->capture_default_str()
        ->check(CLI::Range(0, 20));
    evolve->add_option("--devices", ev.devices,
                       "Devices to spread the evaluations over, one worker each (e.g. 0,2,3); default: device 0")
        ->delimiter(',')
        ->check(CLI::Range(0, 1023));
    cli::add_executor_options(evolve, ev.executor);

    auto* runs = app.add_subcommand("runs", "List the runs of a project");
    runs->add_option("--project", project_s, "Project folder")->required()->check(CLI::ExistingDirectory);
    runs->add_flag("--json", json_out, "Machine-readable output");

    auto* best = app.add_subcommand("best", "The best candidate of a project");
    std::string best_task;
    best->add_option("--project", project_s, "Project folder")->required()->check(CLI::ExistingDirectory);
    best->add_option("--task", best_task, "Only this task");
    best->add_flag("--json", json_out, "Machine-readable output");

    auto* exp = app.add_subcommand("export", "Write the best kernel of a project, its header and a report with its lineage");
    std::string export_task, export_out = "kfoundry-export";
    exp->add_option("--project", project_s, "Project folder")->required()->check(CLI::ExistingDirectory);
    exp->add_option("--task", export_task, "Only this task");
    exp->add_option("--out", export_out, "Output folder")->capture_default_str();

    auto* library = app.add_subcommand("library", "The experience library: patterns and insights");
    library->require_subcommand(1);
    cli::LibraryArgs lib;
    std::string lib_path;
    library->add_option("--library", lib_path, "Library file (default: the user's library)");
    auto* lib_list = library->add_subcommand("list", "List insights (default) or patterns");
    lib_list->add_option("what", lib.what, "insights or patterns")->check(CLI::IsMember({"insights", "patterns"}));
    lib_list->add_option("--text", lib.text, "Free-text filter");
    lib_list->add_option("--status", lib.status, "proposed, approved, rejected (insights); active, broken, any (patterns)");
    lib_list->add_option("--op-class", lib.op_class, "Operation class");
    lib_list->add_flag("--json", lib.as_json, "Machine-readable output");
    auto* lib_show = library->add_subcommand("show", "One insight or pattern");
    lib_show->add_option("what", lib.what, "insights or patterns")->required()->check(CLI::IsMember({"insights", "patterns", "insight", "pattern"}));
    lib_show->add_option("ID", lib.id, "Id")->required();
    lib_show->add_flag("--json", lib.as_json, "Machine-readable output");
    auto* lib_approve = library->add_subcommand("approve", "Approve a proposed insight");
    lib_approve->add_option("ID", lib.id, "Insight id")->required();
    auto* lib_reject = library->add_subcommand("reject", "Reject an insight");
    lib_reject->add_option("ID", lib.id, "Insight id")->required();
    auto* lib_export = library->add_subcommand("export", "Export the library as JSON");
    lib_export->add_option("FILE", lib.file, "Output file (default: standard output)");
    auto* lib_import = library->add_subcommand("import", "Import patterns, insights and evidence from JSON");
    lib_import->add_option("FILE", lib.file, "JSON file")->required()->check(CLI::ExistingFile);

    auto* rewrite = app.add_subcommand("rewrite", "Apply a named rewrite of the transform expert to a CUDA source");
    std::string rewrite_name, rewrite_source, rewrite_out;
    bool rewrite_list = false;
    rewrite->add_flag("--list", rewrite_list, "List the rewrites and what they do");
    rewrite->add_option("NAME", rewrite_name, "block-size-tunable, launch-bounds, grid-stride, warp-rows, vector-loads or smem-tile");
    rewrite->add_option("SOURCE", rewrite_source, "The CUDA source to rewrite")->check(CLI::ExistingFile);
    rewrite->add_option("--out", rewrite_out, "Write the rewritten source here (default: standard output)");

    cli::KernelBenchArgs kbargs;
    auto* kernelbench = cli::add_kernelbench_command(app, kbargs);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? kExitOk : kExitUsage;
    }
    try {
        if (tasks_list->parsed()) return cmd_tasks_list(root, json_out);
        if (header->parsed()) {
            Task t = load_task_arg(task_arg);
            Backend b = backend_arg(backend_s);
            std::cout << entry_header(t, b);
            return kExitOk;
        }
        if (computation->parsed()) return cli::run_task_computation(comp);
        if (eval->parsed()) {
            opt.time = !no_time;
            opt.tunables = parse_assignments(tunables);
            return cmd_eval(task_arg, cand_paths, backend_s, json_out, opt, worker_path);
        }
        if (profile->parsed()) {
            prof.worker = worker_path;
            return cli::run_profile(prof);
        }
        if (info->parsed()) return cmd_device_info(backend_s, json_out, remeasure, worker_path);
        if (evolve->parsed()) {
            ev.project = project_s;
            ev.worker = worker_path;
            ev.options.search.time_limit_s = time_limit;
            if (int rc = cli::resolve_executor(ev.executor, ev.project); rc != kExitOk) return rc;
            if (!no_library) ev.options.experience_library = ExperienceLibrary::user_library_path();
            ev.options.profile = !no_profile;
            if (ev.executor.array) return cli::submit_search_array(ev);
            return cli::run_evolve(ev);
        }
        if (runs->parsed()) return cli::list_runs(project_s, json_out);
        if (exp->parsed()) return cli::run_export(project_s, export_task, export_out);
        if (library->parsed()) {
            for (auto* sub : library->get_subcommands()) lib.action = sub->get_name();
            if (lib.what == "pattern") lib.what = "patterns";
            if (lib.what == "insight") lib.what = "insights";
            lib.library = lib_path;
            return cli::run_library(lib);
        }
        if (best->parsed()) return cli::show_best(project_s, best_task, json_out);
        if (rewrite->parsed()) return cmd_rewrite(rewrite_list, rewrite_name, rewrite_source, rewrite_out);
        if (kernelbench->parsed()) return cli::run_kernelbench(kbargs);
    } catch (const UsageError& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitUsage;
    } catch (const TaskError& e) {
        std::cerr << "kfoundry: invalid task: " << e.what() << "\n";
        return kExitBadTask;
    } catch (const std::exception& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitError;
    }
    return kExitUsage;
}
