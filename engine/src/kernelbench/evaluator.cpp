// The engine's end of the KernelBench Python worker: one long-lived process for evaluations,
// one-shot processes for parallel compiles.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "kf/compile.h"
#include "kf/evaluator.h"
#include "kf/evolution.h"
#include "kf/kernelbench.h"
#include "kf/paths.h"
#include "kf/process.h"
#include "kf/sha256.h"
#include "kf/worker_protocol.h"

namespace kf::kb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string tail(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(s.size() - n); }

/** The last line of a process's output that is a JSON object with an "ok" member. */
json last_json_line(const std::string& output) {
    std::size_t end = output.size();
    while (end > 0) {
        std::size_t start = output.rfind('\n', end - 1);
        start = start == std::string::npos ? 0 : start + 1;
        json j = json::parse(output.substr(start, end - start), nullptr, false);
        if (j.is_object() && j.contains("ok")) return j;
        if (start == 0) break;
        end = start - 1;
    }
    return nullptr;
}

void fill_diagnosis(const json& res, Diagnosis& d) {
    d.status = status_from_string(res.value("status", "runtime_error"));
    d.stage = stage_from_string(res.value("stage", "load"));
    d.message = res.value("message", "");
    if (res.contains("device") && res["device"].is_string()) d.device = res["device"].get<std::string>();
    if (res.contains("compile") && res["compile"].is_object()) {
        const json& c = res["compile"];
        d.compile.ok = c.value("ok", d.status != Status::CompileError);
        d.compile.cached = c.value("cached", false);
        d.compile.seconds = c.value("seconds", 0.0);
        d.compile.compiler = c.value("compiler", "");
        d.compile.log = c.value("log", "");
        if (c.contains("diagnostics") && c["diagnostics"].is_array())
            d.compile.diagnostics = c["diagnostics"].get<std::vector<Diagnostic>>();
    }
    if (res.contains("correctness") && res["correctness"].is_object()) d.correctness = res["correctness"].get<Correctness>();
    if (res.contains("timing") && res["timing"].is_object()) d.timing = res["timing"].get<Timing>();
    if (res.contains("roofline") && res["roofline"].is_object()) d.roofline = res["roofline"].get<Roofline>();
    if (res.contains("integrity") && res["integrity"].is_array())
        d.integrity = res["integrity"].get<std::vector<IntegrityCheck>>();
    if (res.contains("kernel_launches") && res["kernel_launches"].is_number_integer())
        d.kernel_launches = res["kernel_launches"].get<std::int64_t>();
}

}  // namespace

std::vector<std::string> WorkerOptions::command() const {
    std::string py = python;
    if (const char* env = std::getenv("KF_PYTHON"); env && *env && python == "python3") py = env;
    fs::path s = script.empty() ? resources_dir() / "kernelbench" / "kb_worker.py" : script;
    return {py, "-u", s.string(), "--device", device};
}

std::string describe_tolerance(const std::string& policy) {
    if (policy == "current")
        return "KernelBench today: fp32 atol = rtol = 1e-4 (fp16/bf16 1e-2), or no further from fp64 than the fp32 "
               "reference within a factor";
    if (policy == "v0")
        return "KernelBench v0/v0.1, as in most published results: atol = rtol = 1e-2, or no further from fp64 than "
               "the fp32 reference within a factor";
    if (policy == "strict")
        return "fp32 atol = rtol = 1e-4 (fp16/bf16 1e-2) and no further from fp64 than the fp32 reference within a "
               "factor";
    return "";
}

json EvalOptions::to_json() const {
    json j = {{"trials", trials},       {"time", time},       {"warmup", warmup},
              {"reps", reps},           {"rotate_buffers", rotate_buffers}, {"seed", seed},
              {"baselines", baselines}, {"atol", nullptr},    {"rtol", nullptr},
              {"tolerance", tolerance}};
    if (atol) j["atol"] = *atol;
    if (rtol) j["rtol"] = *rtol;
    return j;
}

double Result::eager_ms() const {
    if (baselines.contains("eager") && baselines["eager"].is_object()) return baselines["eager"].value("median_ms", 0.0);
    return diagnosis.timing ? diagnosis.timing->reference_median_ms : 0.0;
}

double Result::compile_ms() const {
    if (baselines.contains("compile") && baselines["compile"].is_object()) return baselines["compile"].value("median_ms", 0.0);
    return 0.0;
}

json Result::verdict() const {
    if (!raw.is_object() || !raw.contains("correctness") || !raw["correctness"].is_object()) return json::object();
    const json& c = raw["correctness"];
    std::string policy;
    if (raw.contains("tolerance") && raw["tolerance"].is_object()) policy = raw["tolerance"].value("policy", "");
    return {{"tolerance", policy},
            {"passed_by", c.value("passed_by", "")},
            {"fp64_available", c.value("fp64_available", false)},
            {"candidate_error_fp64", c.value("candidate_error_fp64", 0.0)},
            {"reference_error_fp64", c.value("reference_error_fp64", 0.0)}};
}

struct Evaluator::Impl {
    explicit Impl(WorkerConfig wc) : worker(std::move(wc)) {}
    WorkerClient worker;
    std::string device_name;
    /** One request at a time on the worker: a search and a hand evaluation may share it. */
    std::mutex requests;
};

Evaluator::Evaluator(WorkerOptions opt) : opt_(std::move(opt)) {
    if (opt_.build_root.empty()) opt_.build_root = CompileCache::default_dir().parent_path() / "kernelbench";
    WorkerConfig wc;
    wc.command = opt_.command();
    wc.log = opt_.log;
    wc = executor_worker(opt_.executor, wc);  // a Slurm job's relay, where the options say so
    impl_ = std::make_unique<Impl>(std::move(wc));
}

Evaluator::~Evaluator() = default;

json Evaluator::hello() {
    std::lock_guard<std::mutex> lock(impl_->requests);
    json h = impl_->worker.hello();
    if (h.value("protocol", 0) != 1)
        throw Error("the KernelBench worker speaks protocol " + h.value("protocol", json(0)).dump() + ", not 1");
    if (h.value("torch", json()).is_null())
        throw Error(h.value("error", std::string("PyTorch is not installed for ") + opt_.command().front()));
    if (!h.value("cuda", false) && opt_.device != "cpu")
        throw Error("PyTorch " + h["torch"].get<std::string>() + " sees no CUDA device; KernelBench problems run on a GPU");
    if (h.contains("device") && h["device"].is_object()) impl_->device_name = h["device"].value("name", "");
    return h;
}

fs::path Evaluator::build_dir_for(const std::string& source) const {
    return opt_.build_root / sha256_hex(source).substr(0, 24);
}

std::vector<CompileInfo> Evaluator::compile_all(const std::vector<fs::path>& candidates, int jobs, double timeout_s) {
    std::vector<CompileInfo> out(candidates.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next++) < candidates.size();) {
            CompileInfo& ci = out[i];
            ci.compiler = "kb_worker.py --compile";
            std::error_code rec;
            if (!fs::is_regular_file(candidates[i], rec)) {
                ci.log = "cannot read the candidate file " + candidates[i].string();
                continue;
            }
            std::string source = read_text_file(candidates[i]);
            fs::path dir = build_dir_for(source);
            std::error_code ec;
            fs::create_directories(dir, ec);
            std::vector<std::string> argv = opt_.command();
            argv.resize(3);  // python -u script
            argv.insert(argv.end(), {"--compile", candidates[i].string(), "--build-dir", dir.string()});
            ProcessResult pr = run_process(argv, std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
            ci.seconds = pr.seconds;
            if (pr.timed_out) {
                ci.log = "the compile did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s\n" +
                         tail(pr.output, 8000);
                continue;
            }
            json j = last_json_line(pr.output);
            if (j.is_null()) {
                ci.log = "the compile step gave no result (" +
                         (pr.signal ? "signal " + std::to_string(pr.signal) : "exit " + std::to_string(pr.exit_code)) +
                         ")\n" + tail(pr.output, 8000);
                continue;
            }
            ci.ok = j.value("ok", false);
            ci.cached = j.value("cached", false);
            if (j.contains("seconds") && j["seconds"].is_number()) ci.seconds = j["seconds"].get<double>();
            ci.log = ci.ok ? std::string() : j.value("message", std::string()) + "\n" + j.value("log", std::string());
        }
    };
    int n = std::clamp(jobs, 1, std::max<int>(1, static_cast<int>(candidates.size())));
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
    return out;
}

Result Evaluator::evaluate(const Problem& p, const std::optional<fs::path>& candidate, const EvalOptions& opt,
                           const std::function<void(const json&)>& on_progress) {
    std::lock_guard<std::mutex> lock(impl_->requests);
    Result r;
    Diagnosis& d = r.diagnosis;
    d.backend = "kernelbench";
    d.task = p.key();
    d.device = impl_->device_name;
    json req = {{"cmd", to_string(WorkerCommand::Evaluate)}, {"problem", p.file.string()}, {"candidate", nullptr}, {"options", opt.to_json()}};
    if (candidate) {
        req["candidate"] = fs::absolute(*candidate).string();
        std::error_code ec;
        if (!fs::is_regular_file(*candidate, ec)) {
            d.status = Status::LoadError;
            d.stage = Stage::Load;
            d.message = "cannot read the candidate file " + candidate->string();
            return r;
        }
        std::string source = read_text_file(*candidate);
        req["build_dir"] = build_dir_for(source).string();
    } else {
        req["build_dir"] = (opt_.build_root / "baseline").string();
    }
    auto t0 = std::chrono::steady_clock::now();
    WorkerClient::Reply rep =
        impl_->worker.request(req, std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000)), on_progress);
    d.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep.timed_out) {
        d.status = Status::Timeout;
        d.stage = worker_progress_stage(rep.last_progress);
        d.message = "no result within " + std::to_string(static_cast<int>(opt.timeout_s)) + " s, during " +
                    describe_worker_progress(rep.last_progress) + "; the worker was killed and restarted";
        return r;
    }
    if (rep.crashed) {
        d.status = Status::RuntimeError;
        d.stage = worker_progress_stage(rep.last_progress);
        d.message = "the KernelBench worker died (" + rep.exit + ") during " + describe_worker_progress(rep.last_progress) +
                    "; it will be restarted";
        return r;
    }
    if (!rep.body.value("ok", false) || !rep.body.contains("result") || !rep.body["result"].is_object()) {
        d.status = Status::RuntimeError;
        d.stage = Stage::Load;
        d.message = "the KernelBench worker could not evaluate: " + rep.body.value("error", std::string("no result"));
        return r;
    }
    r.raw = rep.body["result"];
    try {
        fill_diagnosis(r.raw, d);
    } catch (const std::exception& e) {
        d.status = Status::RuntimeError;
        d.message = std::string("malformed result from the KernelBench worker: ") + e.what();
        return r;
    }
    if (r.raw.contains("baselines") && r.raw["baselines"].is_object()) r.baselines = r.raw["baselines"];
    if (r.raw.contains("kernelbench_mean_ms") && r.raw["kernelbench_mean_ms"].is_object()) r.means = r.raw["kernelbench_mean_ms"];
    if (d.device.empty()) d.device = impl_->device_name;
    // Where it ran: the Slurm relay names the job (kfoundry runs shows it).
    d.ran_on = rep.ran_on(opt_.executor.kind == ExecutorKind::Local);
    return r;
}

}  // namespace kf::kb
