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
#include "kf/worker_protocol.h"
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
    auto r = worker.request({{"cmd", kf::to_string(kf::WorkerCommand::DeviceInfo)}, {"remeasure", remeasure}}, std::chrono::minutes(5));
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

/**
 * The command line: each subcommand and the values its options write. CLI11 keeps pointers
 * to these members, so the object stays where it was made (it cannot be copied or moved).
 * Some values are shared by several subcommands (--json, TASK, --backend, --project), as
 * only one subcommand runs.
 */
struct CommandLine {
    CommandLine() = default;
    CommandLine(const CommandLine&) = delete;
    CommandLine& operator=(const CommandLine&) = delete;

    std::string worker_path;
    bool json_out = false;
    std::string task_arg, backend_s = "cuda";
    std::string project_s;

    CLI::App* tasks_list = nullptr;
    std::string root;

    CLI::App* header = nullptr;
    CLI::App* computation = nullptr;
    cli::ComputationArgs comp;

    CLI::App* eval = nullptr;
    std::vector<std::string> cand_paths;
    EvalOptions opt;
    std::vector<std::string> tunables;
    bool no_time = false;

    CLI::App* profile = nullptr;
    cli::ProfileArgs prof;

    CLI::App* info = nullptr;
    bool remeasure = false;

    CLI::App* evolve = nullptr;
    cli::EvolveArgs ev;
    double time_limit = 0;
    bool no_library = false;
    bool no_profile = false;

    CLI::App* runs = nullptr;
    CLI::App* best = nullptr;
    std::string best_task;
    CLI::App* exp = nullptr;
    std::string export_task, export_out = "kfoundry-export";

    CLI::App* library = nullptr;
    cli::LibraryArgs lib;
    std::string lib_path;

    CLI::App* rewrite = nullptr;
    std::string rewrite_name, rewrite_source, rewrite_out;
    bool rewrite_list = false;

    CLI::App* kernelbench = nullptr;
    cli::KernelBenchArgs kbargs;
};

/** `tasks list`, `task header` and `task computation`. */
void add_task_commands(CLI::App& app, CommandLine& cl) {
    auto* tasks = app.add_subcommand("tasks", "Bundled tasks");
    tasks->require_subcommand(1);
    cl.tasks_list = tasks->add_subcommand("list", "List tasks and validate their manifests");
    cl.tasks_list->add_option("--root", cl.root, "Folder to search (default: the bundled tasks)");
    cl.tasks_list->add_flag("--json", cl.json_out, "Machine-readable output");

    auto* task = app.add_subcommand("task", "One task");
    task->require_subcommand(1);
    cl.header = task->add_subcommand("header", "Print the typed entry point a candidate implements");
    cl.header->add_option("TASK", cl.task_arg, "Task folder or bundled task name")->required();
    cl.header->add_option("--backend", cl.backend_s, "cuda or host")->capture_default_str();

    auto* computation = task->add_subcommand(
        "computation", "Print the computation the op-class templates are written from: the manifest's, or derived from the reference");
    cli::ComputationArgs& comp = cl.comp;
    computation->add_option("TASK", comp.task, "Task folder or bundled task name")->required();
    computation->add_flag("--derive", comp.derive, "Derive it from the host reference even where the manifest declares one");
    computation->add_option("--recogniser", comp.recogniser, "best (libclang, else tokens), libclang or tokens")->capture_default_str();
    computation->add_flag("--write", comp.write, "Write the derived computation into the task's manifest (which must have none)");
    computation->add_flag("--json", comp.as_json, "Machine-readable output");
    cl.computation = computation;
}

/** `eval`. */
void add_eval_command(CLI::App& app, CommandLine& cl) {
    auto* eval = app.add_subcommand("eval", "Compile, verify, time and diagnose a candidate");
    EvalOptions& opt = cl.opt;
    eval->add_option("TASK", cl.task_arg, "Task folder or bundled task name")->required();
    eval->add_option("CANDIDATE", cl.cand_paths, "Candidate source file(s) (.cu or .cpp); several compile in parallel")
        ->required()
        ->check(CLI::ExistingFile);
    eval->add_option("--backend", cl.backend_s, "cuda or host")->capture_default_str();
    eval->add_flag("--json", cl.json_out, "Print the full diagnosis record as JSON");
    eval->add_option("--trials", opt.trials, "Correctness trials per case")->capture_default_str()->check(CLI::Range(1, 100));
    eval->add_option("--timeout", opt.timeout_s, "Seconds allowed for the worker's part")->capture_default_str()->check(CLI::PositiveNumber);
    eval->add_option("--min-time", opt.min_time_ms, "Timed milliseconds after which the timed calls stop, if not before")->capture_default_str();
    eval->add_option("--precision", opt.precision,
                     "The timed calls stop once the median is known to within this fraction (0: always --min-time)")
        ->capture_default_str()->check(CLI::Range(0.0, 1.0));
    eval->add_option("--seed", opt.seed, "Base seed of the trials (0: random)");
    eval->add_option("--tunable", cl.tunables, "NAME=VALUE for an annotated tunable (repeatable)");
    eval->add_flag("--no-time", cl.no_time, "Check correctness and integrity only");
    cl.eval = eval;
}

/** `profile`. */
void add_profile_command(CLI::App& app, CommandLine& cl) {
    auto* profile = app.add_subcommand("profile", "Evaluate a candidate, then profile it with Nsight Compute");
    cli::ProfileArgs& prof = cl.prof;
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
    cl.profile = profile;
}

/** `device info`. */
void add_device_command(CLI::App& app, CommandLine& cl) {
    auto* device = app.add_subcommand("device", "The evaluation device");
    device->require_subcommand(1);
    auto* info = device->add_subcommand("info", "Name, SMs and measured peaks");
    info->add_option("--backend", cl.backend_s, "cuda or host")->capture_default_str();
    info->add_flag("--json", cl.json_out, "Machine-readable output");
    info->add_flag("--remeasure", cl.remeasure, "Measure the peaks again instead of using the cache");
    cl.info = info;
}

/** `evolve`. */
void add_evolve_command(CLI::App& app, CommandLine& cl) {
    auto* evolve = app.add_subcommand("evolve", "Search for faster kernels; results are kept in a project");
    cli::EvolveArgs& ev = cl.ev;
    evolve->add_option("TASK", ev.tasks, "Task folder(s) or bundled task name(s)")->required();
    evolve->add_option("--project", cl.project_s, "Project folder (created when missing)")->required();
    evolve->add_option("--backend", ev.backend, "cuda or host")->capture_default_str();
    evolve->add_option("--islands", ev.options.search.islands.islands, "Islands")->capture_default_str()->check(CLI::Range(1, 64));
    evolve->add_option("--population", ev.options.search.islands.population, "Members kept per island")->capture_default_str()->check(CLI::Range(2, 1000));
    evolve->add_option("--budget", ev.options.search.budget, "Evaluations (seeds included); 0: unlimited")->capture_default_str()->check(CLI::NonNegativeNumber);
    evolve->add_option("--time", cl.time_limit, "Wall-time limit in seconds; 0: unlimited")->check(CLI::NonNegativeNumber);
    evolve->add_option("--stagnation", ev.options.search.stagnation_stop, "Stop after this many rounds without a new best; 0: never")->check(CLI::NonNegativeNumber);
    evolve->add_option("--seed", ev.options.search.seed, "Seed of the search (reproducible)")->capture_default_str();
    evolve->add_flag("--resume", ev.options.resume, "Continue the task's latest unfinished run in the project");
    evolve->add_flag("--no-library", cl.no_library, "Do not record evidence in the user's experience library");
    evolve->add_flag("--no-profile", cl.no_profile, "Do not profile new bests with Nsight Compute during the run");
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
    cl.evolve = evolve;
}

/** `runs`, `best` and `export`: what a project holds. */
void add_project_commands(CLI::App& app, CommandLine& cl) {
    cl.runs = app.add_subcommand("runs", "List the runs of a project");
    cl.runs->add_option("--project", cl.project_s, "Project folder")->required()->check(CLI::ExistingDirectory);
    cl.runs->add_flag("--json", cl.json_out, "Machine-readable output");

    cl.best = app.add_subcommand("best", "The best candidate of a project");
    cl.best->add_option("--project", cl.project_s, "Project folder")->required()->check(CLI::ExistingDirectory);
    cl.best->add_option("--task", cl.best_task, "Only this task");
    cl.best->add_flag("--json", cl.json_out, "Machine-readable output");

    cl.exp = app.add_subcommand("export", "Write the best kernel of a project, its header and a report with its lineage");
    cl.exp->add_option("--project", cl.project_s, "Project folder")->required()->check(CLI::ExistingDirectory);
    cl.exp->add_option("--task", cl.export_task, "Only this task");
    cl.exp->add_option("--out", cl.export_out, "Output folder")->capture_default_str();
}

/** `library` and its subcommands. */
void add_library_commands(CLI::App& app, CommandLine& cl) {
    auto* library = app.add_subcommand("library", "The experience library: patterns and insights");
    library->require_subcommand(1);
    cli::LibraryArgs& lib = cl.lib;
    library->add_option("--library", cl.lib_path, "Library file (default: the user's library)");
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
    cl.library = library;
}

/** `rewrite`. */
void add_rewrite_command(CLI::App& app, CommandLine& cl) {
    cl.rewrite = app.add_subcommand("rewrite", "Apply a named rewrite of the transform expert to a CUDA source");
    cl.rewrite->add_flag("--list", cl.rewrite_list, "List the rewrites and what they do");
    cl.rewrite->add_option("NAME", cl.rewrite_name, "block-size-tunable, launch-bounds, grid-stride, warp-rows, vector-loads or smem-tile");
    cl.rewrite->add_option("SOURCE", cl.rewrite_source, "The CUDA source to rewrite")->check(CLI::ExistingFile);
    cl.rewrite->add_option("--out", cl.rewrite_out, "Write the rewritten source here (default: standard output)");
}

/** The parsed subcommand run; its exit code. */
int run_command(CommandLine& cl) {
    if (cl.tasks_list->parsed()) return cmd_tasks_list(cl.root, cl.json_out);
    if (cl.header->parsed()) {
        Task t = load_task_arg(cl.task_arg);
        Backend b = backend_arg(cl.backend_s);
        std::cout << entry_header(t, b);
        return kExitOk;
    }
    if (cl.computation->parsed()) return cli::run_task_computation(cl.comp);
    if (cl.eval->parsed()) {
        cl.opt.time = !cl.no_time;
        cl.opt.tunables = parse_assignments(cl.tunables);
        return cmd_eval(cl.task_arg, cl.cand_paths, cl.backend_s, cl.json_out, cl.opt, cl.worker_path);
    }
    if (cl.profile->parsed()) {
        cl.prof.worker = cl.worker_path;
        return cli::run_profile(cl.prof);
    }
    if (cl.info->parsed()) return cmd_device_info(cl.backend_s, cl.json_out, cl.remeasure, cl.worker_path);
    if (cl.evolve->parsed()) {
        cli::EvolveArgs& ev = cl.ev;
        ev.project = cl.project_s;
        ev.worker = cl.worker_path;
        ev.options.search.time_limit_s = cl.time_limit;
        if (int rc = cli::resolve_executor(ev.executor, ev.project); rc != kExitOk) return rc;
        if (!cl.no_library) ev.options.experience_library = ExperienceLibrary::user_library_path();
        ev.options.profile = !cl.no_profile;
        if (ev.executor.array) return cli::submit_search_array(ev);
        return cli::run_evolve(ev);
    }
    if (cl.runs->parsed()) return cli::list_runs(cl.project_s, cl.json_out);
    if (cl.exp->parsed()) return cli::run_export(cl.project_s, cl.export_task, cl.export_out);
    if (cl.library->parsed()) {
        cli::LibraryArgs& lib = cl.lib;
        for (auto* sub : cl.library->get_subcommands()) lib.action = sub->get_name();
        if (lib.what == "pattern") lib.what = "patterns";
        if (lib.what == "insight") lib.what = "insights";
        lib.library = cl.lib_path;
        return cli::run_library(lib);
    }
    if (cl.best->parsed()) return cli::show_best(cl.project_s, cl.best_task, cl.json_out);
    if (cl.rewrite->parsed()) return cmd_rewrite(cl.rewrite_list, cl.rewrite_name, cl.rewrite_source, cl.rewrite_out);
    if (cl.kernelbench->parsed()) return cli::run_kernelbench(cl.kbargs);
    return kExitUsage;
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
    CommandLine cl;
    app.add_option("--worker", cl.worker_path, "kfoundry-worker executable (default: next to kfoundry)");
    add_task_commands(app, cl);
    add_eval_command(app, cl);
    add_profile_command(app, cl);
    add_device_command(app, cl);
    add_evolve_command(app, cl);
    add_project_commands(app, cl);
    add_library_commands(app, cl);
    add_rewrite_command(app, cl);
    cl.kernelbench = cli::add_kernelbench_command(app, cl.kbargs);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? kExitOk : kExitUsage;
    }
    try {
        return run_command(cl);
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
}
