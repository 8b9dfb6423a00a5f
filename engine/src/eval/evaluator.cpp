// Compile, screen, then evaluate in the worker; every failure becomes a Diagnosis.
#include "kf/evaluator.h"

#include <cctype>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "kf/error.h"
#include "kf/screening.h"
#include "kf/worker_protocol.h"
#include "protected_files.h"

namespace kf {

using nlohmann::json;

namespace {

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw Error("cannot read " + p.string());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string extension(Backend b) { return b == Backend::Cuda ? ".cu" : ".cpp"; }

/**
 * A candidate's name as the file name of its source in the compile folder: anything but a
 * letter, a digit, '-' and '_' (a template instance's "rows-group/warp", a path) becomes '_'.
 */
std::string file_safe(const std::string& name) {
    std::string out;
    for (char ch : name) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' ? ch : '_';
    return out.empty() ? "candidate" : out;
}


/** Remedies the router can act on, from the outcome. */
std::vector<std::string> advise(const Diagnosis& d) {
    switch (d.status) {
    case Status::CompileError: return {"repair_compile"};
    case Status::LoadError: return {"repair_compile"};
    case Status::RuntimeError: return {"repair_runtime"};
    case Status::Timeout: return {"repair_runtime", "reduce_work_per_launch"};
    case Status::Incorrect: return {"repair_numerics"};
    case Status::IntegrityViolation: return {"remove_cheat"};
    case Status::Ok: break;
    }
    std::vector<std::string> out;
    if (d.roofline) {
        if (d.roofline->bound == "memory") out = {"improve_memory_access", "fuse"};
        else if (d.roofline->bound == "compute") out = {"use_tensor_cores", "reduce_instructions"};
        else out = {"increase_parallelism", "tune_launch"};
    }
    for (const auto& r : d.compile.resources) {
        if (r.spill_store_bytes > 0 || r.spill_load_bytes > 0) {
            out.push_back("reduce_registers");
            break;
        }
    }
    return out;
}

}  // namespace

namespace {
/** What the last run_worker() on this thread found wrong with the device, not the candidate. */
thread_local std::string t_device_failure;
}  // namespace

struct Evaluator::Impl {
    EvaluatorConfig cfg;
    CompileCache cache;
    CompilePool pool;
    WorkerClient worker;
    std::string arch;
    std::string device_name;
    std::mutex prepare_mutex;     ///< guards the compiled reference (prepare() may run on any thread)
    std::recursive_timed_mutex device_mutex;  ///< one evaluation, device query or profile on the device at a time (they nest)
    CompileResult reference;      ///< the compiled reference of reference_task
    std::filesystem::path reference_task;
    ProtectedFiles guard;         ///< the task, the compiled reference, the device's peaks
    std::filesystem::path peaks_file;

    explicit Impl(EvaluatorConfig c)
        : cfg(std::move(c)),
          cache(cfg.cache_dir.empty() ? CompileCache::default_dir() : cfg.cache_dir),
          pool(cache, cfg.compile_threads),
          worker(cfg.worker) {}

    std::string target_arch() {
        if (!cfg.arch.empty()) return cfg.arch;
        if (arch.empty()) {
            arch = "sm_90";
            if (cfg.worker.backend == Backend::Cuda) {
                try {
                    json h = worker.hello();
                    arch = h["device"].value("arch", "sm_90");
                    device_name = h["device"].value("name", "");
                } catch (const Error&) {
                    // No device here: compile for the default target; evaluation reports the error.
                }
            }
        }
        return arch;
    }

    CompileRequest request(const Task& task, const std::string& source, const std::string& name) {
        Backend b = cfg.worker.backend;
        CompileRequest req;
        req.backend = b;
        req.source = source;
        req.source_name = file_safe(name) + extension(b);
        req.header = entry_header(task, b);
        req.glue = entry_glue(task, b, req.source_name);
        req.libraries = task.rules.allowed_libraries;
        req.include_dirs = {task.dir};  // the task's own headers, and nothing else outside
        if (b == Backend::Cuda) req.arch = target_arch();
        return req;
    }

    CompileRequest reference_request(const Task& task) {
        Backend b = cfg.worker.backend;
        if (!task.supports(b))
            throw Error("task " + task.name + " has no " + std::string(to_string(b)) + " reference");
        return request(task, read_text(task.references.at(b)), task.references.at(b).stem().string());
    }
};

Evaluator::Evaluator(EvaluatorConfig cfg) : impl_(std::make_unique<Impl>(std::move(cfg))) {}
Evaluator::~Evaluator() = default;

Backend Evaluator::backend() const { return impl_->cfg.worker.backend; }
WorkerClient& Evaluator::worker() { return impl_->worker; }

CompileResult Evaluator::compile(const Task& task, const Candidate& cand, const Assignment& tunables) {
    return impl_->cache.compile(impl_->request(task, apply_tunables(cand.source, tunables), cand.name));
}

Evaluator::DeviceTurn Evaluator::device_turn(const std::function<bool()>& cancelled) {
    std::unique_lock<std::recursive_timed_mutex> lock(impl_->device_mutex, std::defer_lock);
    while (!lock.try_lock_for(std::chrono::milliseconds(50)))
        if (cancelled && cancelled()) throw Cancelled("cancelled while waiting for the device");
    return lock;
}

json Evaluator::device_info() {
    DeviceTurn turn = device_turn();
    WorkerClient::Reply r = impl_->worker.request({{"cmd", to_string(WorkerCommand::DeviceInfo)}}, std::chrono::minutes(5));
    if (!r.ok) throw Error("the worker did not report its device: " + (r.timed_out ? std::string("timed out") : r.exit));
    if (!r.body.value("ok", false)) throw Error(r.body.value("error", "device_info failed"));
    return {{"device", r.body["device"]}, {"peaks", r.body["peaks"]}};
}

json Evaluator::hello() {
    DeviceTurn turn = device_turn();
    return impl_->worker.hello();
}

Diagnosis Evaluator::evaluate(const Task& task, const Candidate& cand, const EvalOptions& opt) {
    auto all = evaluate_all(task, {cand}, opt);
    return all.front();
}

std::vector<Diagnosis> Evaluator::evaluate_all(const Task& task, const std::vector<Candidate>& cands,
                                               const EvalOptions& opt,
                                               const std::function<void(std::size_t, const Diagnosis&)>& on_done) {
    // The reference and every candidate compile in parallel.
    prepare(task);
    std::vector<Diagnosis> out(cands.size());
    std::vector<std::optional<std::future<CompileResult>>> futures(cands.size());
    for (std::size_t i = 0; i < cands.size(); ++i)
        if (std::optional<CompileRequest> req = compile_request(task, cands[i], opt, out[i]))
            futures[i] = impl_->pool.submit(*req);
    for (std::size_t i = 0; i < cands.size(); ++i) {
        if (futures[i]) {
            CompileResult cr = futures[i]->get();
            try {
                if (accept_compiled(cr, out[i])) evaluate_stage(task, cr, opt, out[i]);
            } catch (const Cancelled&) {
                throw;
            } catch (const std::exception& e) {
                // One candidate's failure is its own record; the others go on.
                out[i].status = Status::RuntimeError;
                out[i].message = std::string("the evaluation failed: ") + e.what();
            }
        }
        finish(out[i]);
        if (on_done) on_done(i, out[i]);
    }
    return out;
}

void Evaluator::prepare(const Task& task) { (void)reference_for(task); }

CompileResult Evaluator::reference_for(const Task& task) {
    // One lock for the compile and the copy: an Evaluator shared by a search and a hand
    // evaluation (kf::Engine) sees tasks alternate, and must not hand out the other's reference.
    std::lock_guard<std::mutex> lock(impl_->prepare_mutex);
    impl_->target_arch();
    if (impl_->reference_task == task.dir && impl_->reference.ok) return impl_->reference;
    CompileResult ref = impl_->cache.compile(impl_->reference_request(task));
    if (!ref.ok) {
        std::string first = ref.info.diagnostics.empty() ? ref.info.log.substr(0, 500) : ref.info.diagnostics.front().message;
        throw Error("the reference of task " + task.name + " does not compile: " + first);
    }
    impl_->reference = ref;
    impl_->reference_task = task.dir;
    impl_->guard.record(ref.library);
    return ref;
}

std::optional<CompileRequest> Evaluator::compile_request(const Task& task, const Candidate& cand,
                                                         const EvalOptions& opt, Diagnosis& d) {
    const Backend b = impl_->cfg.worker.backend;
    d.task = task.name;
    d.backend = std::string(to_string(b));
    std::string source;
    try {
        source = apply_tunables(cand.source, opt.tunables);
    } catch (const TunableError& e) {
        d.status = Status::CompileError;
        d.stage = Stage::Compile;
        d.message = std::string("tunable annotation: ") + e.what();
        d.compile.diagnostics.push_back(Diagnostic{cand.name + extension(b), e.line(), 0, Severity::Error, e.what(), "kfoundry"});
        return std::nullopt;
    }
    return impl_->request(task, source, cand.name);
}

bool Evaluator::accept_compiled(const CompileResult& cr, Diagnosis& d) {
    d.compile = cr.info;
    if (cr.ok) return true;
    d.status = Status::CompileError;
    d.stage = Stage::Compile;
    std::string first;
    for (const auto& dg : cr.info.diagnostics)
        if (dg.severity == Severity::Error) {
            first = dg.file + (dg.line ? ":" + std::to_string(dg.line) : "") + ": " + dg.message;
            break;
        }
    d.message = "compile error" + (first.empty() ? std::string() : ": " + first);
    return false;
}

CompileResult Evaluator::compile_stage(const Task& task, const Candidate& cand, const EvalOptions& opt, Diagnosis& d) {
    std::optional<CompileRequest> req = compile_request(task, cand, opt, d);
    if (!req) return {};
    CompileResult cr = impl_->cache.compile(*req);
    accept_compiled(cr, d);
    return cr;
}

void Evaluator::evaluate_stage(const Task& task, const CompileResult& cr, const EvalOptions& opt, Diagnosis& d,
                               std::string* device_failure) {
    if (device_failure) device_failure->clear();
    if (!cr.ok) return;
    DeviceTurn turn = device_turn(opt.cancel);
    t_device_failure.clear();
    evaluate_compiled(task, cr, reference_for(task), opt, d);
    if (device_failure) *device_failure = t_device_failure;
}

void Evaluator::finish(Diagnosis& d) {
    d.device = d.device.empty() ? impl_->device_name : d.device;
    d.advice = advise(d);
}

void Evaluator::evaluate_compiled(const Task& task, const CompileResult& cr, const CompileResult& ref,
                                  const EvalOptions& opt, Diagnosis& d) {
    d.stage = Stage::Load;
    SymbolScreen screen = screen_symbols(cr.library, task.rules);
    if (!screen.ran) {
        d.integrity.push_back({"forbidden_symbols", "skipped", "symbol table not read: " + screen.error});
    } else if (!screen.forbidden.empty()) {
        std::string list;
        for (const auto& f : screen.forbidden) list += (list.empty() ? "" : "; ") + f;
        d.integrity.push_back({"forbidden_symbols", "fail", list});
        d.status = Status::IntegrityViolation;
        d.message = "forbidden symbols: " + list;
        return;
    } else {
        d.integrity.push_back({"forbidden_symbols", "pass",
                               std::to_string(screen.undefined_symbols) + " undefined symbols screened"});
    }

    json req = {{"cmd", to_string(WorkerCommand::Evaluate)},
                {"task", task.dir.string()},
                {"candidate", cr.library.string()},
                {"reference", ref.library.string()},
                {"options", opt.to_json()}};
    // The device's cached peaks: measured now if they are not yet, so that they are on
    // record before any candidate runs.
    if (impl_->peaks_file.empty()) {
        try {
            std::string uuid = impl_->worker.hello()["device"].value("uuid", "");
            if (!uuid.empty()) impl_->peaks_file = device_peaks_file(uuid);
            std::error_code ec;
            if (!impl_->peaks_file.empty() && !std::filesystem::exists(impl_->peaks_file, ec)) device_info();
        } catch (const std::exception&) {
            // No device answer: the evaluation below reports it.
        }
    }
    // What the candidate must not change, as it is now (the task as the user last saved it).
    {
        std::lock_guard<std::mutex> lock(impl_->prepare_mutex);
        impl_->guard.record(task.dir);
        if (!impl_->peaks_file.empty()) impl_->guard.record_once(impl_->peaks_file);
        impl_->guard.restore_changed();
    }
    run_worker(req, opt, d);
    std::vector<std::string> changed;
    {
        std::lock_guard<std::mutex> lock(impl_->prepare_mutex);
        changed = impl_->guard.restore_changed();
    }
    if (!changed.empty()) {
        std::string list;
        for (const auto& f : changed) list += (list.empty() ? "" : ", ") + f;
        d.status = Status::IntegrityViolation;
        d.message = "the candidate changed files it must not touch (" + list + "); the clean copies were restored";
        d.integrity.push_back({"protected_files", "fail", d.message});
        impl_->worker.restart();  // nothing it may have read from them stays loaded
    } else {
        d.integrity.push_back({"protected_files", "pass", "the task, the compiled reference and the cached peaks are unchanged"});
    }
}

void Evaluator::run_worker(const json& req, const EvalOptions& opt, Diagnosis& d) {
    auto timeout = std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000));
    auto t0 = std::chrono::steady_clock::now();
    WorkerClient::Reply r = impl_->worker.request(req, timeout, {}, opt.cancel);
    d.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    d.ran_on = r.ran_on(impl_->cfg.worker.command.empty());
    if (r.cancelled)
        throw Cancelled("evaluation cancelled during " + describe_worker_progress(r.last_progress) +
                        "; the worker was stopped");
    if (r.timed_out) {
        d.status = Status::Timeout;
        d.stage = worker_progress_stage(r.last_progress);
        d.message = "no result within " + std::to_string(static_cast<int>(opt.timeout_s)) + " s, during " +
                    describe_worker_progress(r.last_progress) + "; the worker was killed and restarted";
        return;
    }
    if (r.crashed) {
        d.status = Status::RuntimeError;
        d.stage = worker_progress_stage(r.last_progress);
        d.message = "the worker process died (" + r.exit + ") during " + describe_worker_progress(r.last_progress) +
                    "; it was restarted";
        // Before any progress the worker had not reached a candidate: the device's fault.
        if (!r.last_progress.is_object()) t_device_failure = d.message;
        return;
    }
    // Whatever the worker answers ends as one record with a status, never as an exception.
    if (!r.body.value("ok", false)) {
        d.status = Status::RuntimeError;
        d.message = "the worker could not evaluate the candidate: " + r.body.value("error", std::string("unknown error"));
        if (r.body.value("fatal", false)) t_device_failure = d.message;
        impl_->worker.restart();
        return;
    }
    try {
        const json& res = r.body.at("result");
        d.status = status_from_string(res.value("status", "runtime_error"));
        d.stage = stage_from_string(res.value("stage", "load"));
        d.message = res.value("message", "");
        d.device = res.value("device", impl_->device_name);
        if (res.contains("correctness") && res["correctness"].is_object()) d.correctness = res["correctness"].get<Correctness>();
        if (res.contains("timing") && res["timing"].is_object()) d.timing = res["timing"].get<Timing>();
        if (res.contains("roofline") && res["roofline"].is_object()) d.roofline = res["roofline"].get<Roofline>();
        d.kernel_launches = res.value("kernel_launches", std::int64_t{-1});
        if (res.contains("integrity"))
            for (const auto& c : res["integrity"]) d.integrity.push_back(c.get<IntegrityCheck>());
        if (auto ph = res.find("phases"); ph != res.end() && ph->is_object()) d.phases = *ph;
        if (res.contains("sandbox") && res["sandbox"].is_object()) {
            for (const auto& n : res["sandbox"].value("notes", json::array()))
                if (n.is_string()) d.integrity.push_back({"sandbox", "warning", n.get<std::string>()});
            if (auto rs = res["sandbox"].find("runner"); rs != res["sandbox"].end() && rs->is_object()) d.runner = *rs;
        }
        if (res.value("fatal", false)) {
            d.message += " (sticky device error: the worker was restarted)";
            // Candidates run in runner processes: a sticky error in the worker's own context is the device's.
            t_device_failure = d.message;
        }
    } catch (const std::exception& e) {
        d.correctness.reset();
        d.timing.reset();
        d.roofline.reset();
        d.status = Status::RuntimeError;
        d.stage = Stage::Load;
        d.message = std::string("the worker's reply could not be read: ") + e.what();
        impl_->worker.restart();
    }
}

std::filesystem::path device_peaks_file(const std::string& uuid) {
    const char* explicit_dir = std::getenv("KF_CACHE_DIR");
    std::filesystem::path dir;
    if (explicit_dir && *explicit_dir) dir = std::filesystem::path(explicit_dir).parent_path() / "devices";
    else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) dir = std::filesystem::path(xdg) / "kernel-foundry" / "devices";
    else if (const char* home = std::getenv("HOME"); home && *home) dir = std::filesystem::path(home) / ".cache" / "kernel-foundry" / "devices";
    else dir = std::filesystem::temp_directory_path() / "kernel-foundry-devices";
    std::string id = uuid;
    for (char& c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
    return dir / (id + ".json");
}

}  // namespace kf
