// kfoundry-worker: the judge. Speaks JSON lines on stdin/stdout (docs/worker-protocol.md),
// loads the task's reference, and runs each candidate in a sandboxed runner process of its
// own (`kfoundry-worker --runner`, docs/sandbox.md) whose outputs it reads and compares itself.
#include <dlfcn.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "candidate_site.h"
#include "device.h"
#include "evaluation.h"
#include "runner_main.h"
#include "sandbox.h"
#include "kf/error.h"
#include "kf/evaluator.h"
#include "kf/task.h"
#include "kf/worker_protocol.h"
#include "profile_mode.h"

namespace {

using nlohmann::json;
using namespace kf;
using namespace kf::worker;

/** The protocol channel: a private copy of the original stdout, so that anything a candidate
 * prints (fd 1) goes to stderr instead of corrupting the JSON stream. */
FILE* g_out = nullptr;

void send(const json& j) {
    std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
    std::fputs(line.c_str(), g_out);
    std::fputc('\n', g_out);
    std::fflush(g_out);
}

json device_json(const DeviceInfo& d) {
    return {{"backend", d.backend}, {"name", d.name}, {"uuid", d.uuid}, {"arch", d.arch}, {"sm_count", d.sm_count},
            {"cc_major", d.cc_major}, {"cc_minor", d.cc_minor}, {"memory_bytes", d.memory_bytes},
            {"l2_bytes", d.l2_bytes}, {"driver", d.driver}};
}

std::filesystem::path peaks_cache_file(const DeviceInfo& d) { return kf::device_peaks_file(d.uuid); }

/** A loaded candidate or reference library. Closed when the request ends. */
class LoadedLibrary {
public:
    LoadedLibrary() = default;
    LoadedLibrary(const LoadedLibrary&) = delete;
    LoadedLibrary& operator=(const LoadedLibrary&) = delete;
    ~LoadedLibrary() {
        if (handle_) dlclose(handle_);
    }
    /** Empty string on success, else the loader's error. */
    std::string open(const std::string& path) {
        dlerror();
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) {
            const char* e = dlerror();
            return e ? e : "dlopen failed";
        }
        entry_ = reinterpret_cast<EntryFn>(dlsym(handle_, kEntrySymbol));
        if (!entry_) return std::string("no ") + kEntrySymbol + " symbol in " + path;
        return {};
    }
    EntryFn entry() const { return entry_; }

private:
    void* handle_ = nullptr;
    EntryFn entry_ = nullptr;
};

class Worker {
public:
    Worker(std::string backend, int ordinal) : backend_name_(std::move(backend)), ordinal_(ordinal) {}

    /** Returns false when the worker must exit after this request. */
    bool handle(const json& req) {
        json id = req.value("id", json(nullptr));
        const std::string word = req.value("cmd", "");
        const std::optional<WorkerCommand> cmd = parse_worker_command(word);
        if (!cmd) {
            send({{"id", id}, {"ok", false}, {"error", "unknown command '" + word + "'"}});
            return true;
        }
        try {
            switch (*cmd) {
            case WorkerCommand::Hello:
                send({{"id", id}, {"ok", true}, {"protocol", kWorkerProtocolVersion}, {"backend", backend_name_},
                      {"device", device_json(device().info())}, {"pid", static_cast<long>(getpid())}});
                break;
            case WorkerCommand::DeviceInfo:
                send({{"id", id}, {"ok", true}, {"device", device_json(device().info())},
                      {"peaks", peaks_json(req.value("remeasure", false))}});
                break;
            case WorkerCommand::Evaluate: return evaluate(id, req);
            case WorkerCommand::Shutdown: send({{"id", id}, {"ok", true}}); return false;
            }
        } catch (const DeviceFault& f) {
            send({{"id", id}, {"ok", false}, {"error", f.what()}, {"fatal", f.sticky()}});
            return !f.sticky();
        } catch (const std::exception& e) {
            send({{"id", id}, {"ok", false}, {"error", e.what()}});
        }
        return true;
    }

private:
    Device& device() {
        if (!device_) {
            if (backend_name_ == "host") device_ = make_host_device();
#ifdef KF_HAVE_CUDA
            else if (backend_name_ == "cuda") device_ = make_cuda_device(ordinal_);
#endif
            else throw DeviceFault("this worker was built without the " + backend_name_ + " backend", false);
        }
        return *device_;
    }

    json peaks_json(bool remeasure) {
        DeviceInfo info = device().info();
        auto file = peaks_cache_file(info);
        if (!remeasure) {
            std::ifstream in(file);
            json cached;
            if (in && (cached = json::parse(in, nullptr, false)).is_object() && cached.value("bandwidth_gbps", 0.0) > 0)
                return cached;
        }
        Peaks p = device().measure_peaks();
        json j = {{"bandwidth_gbps", p.bandwidth_gbps}, {"fp32_gflops", p.fp32_gflops}, {"method", p.method},
                  {"device", info.name}};
        std::error_code ec;
        std::filesystem::create_directories(file.parent_path(), ec);
        auto tmp = file;
        tmp += ".tmp" + std::to_string(getpid());
        {
            std::ofstream out(tmp);
            out << j.dump(2) << "\n";
        }
        std::filesystem::rename(tmp, file, ec);
        return j;
    }

    const Task& task_at(const std::string& path) {
        auto it = tasks_.find(path);
        if (it == tasks_.end()) it = tasks_.emplace(path, load_task(path)).first;
        return it->second;
    }

    bool evaluate(const json& id, const json& req) {
        auto backend = backend_from_string(backend_name_);
        const Task& task = task_at(req.at("task").get<std::string>());
        json peaks = peaks_json(false);
        EvalInputs in;
        in.task = &task;
        in.backend = *backend;
        in.settings = EvalSettings::from_json(req.value("options", json::object()));
        in.peaks.bandwidth_gbps = peaks.value("bandwidth_gbps", 0.0);
        in.peaks.fp32_gflops = peaks.value("fp32_gflops", 0.0);

        std::string ref_path = req.at("reference").get<std::string>();
        auto ref_it = references_.find(ref_path);
        if (ref_it == references_.end()) {
            auto lib = std::make_unique<LoadedLibrary>();
            std::string err = lib->open(ref_path);
            if (!err.empty()) {
                send({{"id", id}, {"ok", false}, {"error", "the task's reference cannot be loaded: " + err}});
                return true;
            }
            ref_it = references_.emplace(ref_path, std::move(lib)).first;
        }
        in.reference = ref_it->second->entry();
        in.reference_key = ref_path;

        std::string cand_path = req.at("candidate").get<std::string>();
        std::unique_ptr<CandidateSite> site;
        json notes = json::array();
        const bool gpu = *backend == Backend::Cuda;
        if (gpu) device().info();  // the judge's own context first
        if (gpu && in_process_cuda()) {
            // KF_CUDA_IN_PROCESS=1: the candidate shares this process (for comparing timings
            // with the runner; no containment). From its first load on, the process can
            // start no other process and signal none but itself.
            if (!confined_) {
                SandboxLimits limits;
                limits.file_bytes = 256ull << 20;
                confinement_ = confine_self(limits, true).warnings;
                confinement_.push_back("KF_CUDA_IN_PROCESS=1: the candidate runs in the worker's process");
                confined_ = true;
            }
            for (const auto& w : confinement_) notes.push_back(w);
            auto cand = std::make_unique<LoadedLibrary>();
            std::string err = cand->open(cand_path);
            if (!err.empty()) {
                send({{"id", id}, {"ok", true},
                      {"result", {{"status", "load_error"}, {"stage", "load"}, {"message", "cannot load the candidate: " + err},
                                  {"fatal", false}}}});
                return true;
            }
            site = in_process_site(device(), cand->entry(), true);
            in.reference_timer = [this, &in] { return in_process_site(device(), in.reference, false); };
            in.candidate = site.get();
            in_process_ = std::move(cand);
            return finish_evaluation(id, in, notes, false);
        }
        // The candidate runs in a sandboxed process of its own; the reference is timed in
        // another. This process keeps the verdict, the reference outputs and the channel.
        json runner_start;
        try {
            auto runner = pool_.take(runner_options(cand_path, in.settings));
            const RunnerStart st = runner->start_figures();
            runner_start = {{"ahead", st.ahead}, {"waited_ms", st.waited_ms}};
            if (st.setup_ms >= 0) runner_start["setup_ms"] = st.setup_ms;
            for (const auto& [k, v] : st.parts) runner_start["setup_steps"][k] = v;
            site = runner_site(device(), std::move(runner), gpu, &pool_);
        } catch (const CandidateFault& f) {
            bool load = f.message.rfind("load_error:", 0) == 0;
            std::string why = load ? f.message.substr(11) : f.message;
            std::string status = load ? "load_error" : f.integrity ? "integrity_violation" : "runtime_error";
            json checks = json::array();
            if (f.integrity) checks.push_back({{"name", "runner_channel"}, {"outcome", "fail"}, {"detail", why}});
            send({{"id", id}, {"ok", true},
                  {"result", {{"status", status}, {"stage", "load"},
                              {"message", (load ? "cannot load the candidate: " : f.integrity ? "" : "the candidate failed while loading: ") + why},
                              {"integrity", checks}, {"fatal", false}}}});
            return true;
        }
        for (const auto& n : site->notes()) notes.push_back(n);
        in.reference_timer = [this, ref_path, &in, gpu] {
            return runner_site(device(), pool_.take(runner_options(ref_path, in.settings)), gpu, &pool_);
        };
        in.candidate = site.get();
        return finish_evaluation(id, in, notes, true, runner_start);
    }

    /** A request is waiting on standard input (read through stdio's buffer), or comes within
     *  `timeout_ms`. */
    static bool request_waiting(int timeout_ms) {
#ifdef __GLIBC__
        if (stdin->_IO_read_ptr < stdin->_IO_read_end) return true;
#endif
        if (std::cin.rdbuf()->in_avail() > 0) return true;
        pollfd p{STDIN_FILENO, POLLIN, 0};
        return poll(&p, 1, timeout_ms) > 0;
    }

    static bool in_process_cuda() {
        const char* v = std::getenv("KF_CUDA_IN_PROCESS");
        return v && std::string(v) == "1";
    }

    bool finish_evaluation(const json& id, const EvalInputs& in, const json& notes, bool own_process,
                           const json& runner_start = nullptr) {
        json result = evaluate_candidate(device(), in, ref_times_, [&](const json& p) {
            send({{"id", id}, {"progress", p}});
        });
        result["device"] = device().info().name;
        result["sandbox"] = {{"process", own_process}, {"notes", notes}};
        if (!runner_start.is_null()) result["sandbox"]["runner"] = runner_start;
        bool fatal = result.value("fatal", false);
        send({{"id", id}, {"ok", true}, {"result", result}});
        return !fatal;
    }

    RunnerOptions runner_options(const std::string& library, const EvalSettings& st) {
        RunnerOptions o;
        o.worker = self_path_;
        o.library = library;
        o.stage_root = stage_root_;
        o.limits.memory_bytes = st.memory_mb * (1ull << 20);
        o.limits.file_bytes = 64ull << 20;
        o.backend = backend_name_;
        o.device = ordinal_;
        return o;
    }

public:
    std::filesystem::path self_path_;
    std::filesystem::path stage_root_;  ///< the runners' library folders (runner_process.h)

    /** While the worker waits for its next request, when no call is measured (runner_pool.h):
     *  with KF_RUNNER_AHEAD=after the next candidate's runner is started now; by default the
     *  runners started ahead make their device contexts, one at a time, until a request comes. */
    void between_requests() {
        pool_.prepare();
        while (!request_waiting(0) && pool_.open_while_idle()) (void)request_waiting(5);
    }

    /** Ends the runners (the one started ahead, those being ended) and removes their folders. */
    void end_runners() {
        pool_.clear();
        std::error_code ec;
        if (!stage_root_.empty()) std::filesystem::remove_all(stage_root_, ec);
    }

private:
    std::string backend_name_;
    int ordinal_;
    bool confined_ = false;
    std::vector<std::string> confinement_;
    std::unique_ptr<Device> device_;
    RunnerPool pool_{RunnerPool::ahead_from_environment(), RunnerPool::depth_from_environment(),
                     RunnerPool::open_next_from_environment()};
    std::map<std::string, Task> tasks_;
    std::map<std::string, std::unique_ptr<LoadedLibrary>> references_;
    std::unique_ptr<LoadedLibrary> in_process_;  ///< the last candidate loaded with KF_CUDA_IN_PROCESS=1
    ReferenceTimes ref_times_;
};

/** A folder for the runners' libraries, `kf-worker-<pid>-XXXXXX` in the temporary folder;
 *  those of workers that are gone (killed before they could remove theirs) are removed. */
std::filesystem::path make_stage_root() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    if (ec) return {};
    for (const auto& e : fs::directory_iterator(tmp, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("kf-worker-", 0) != 0) continue;
        const long pid = std::atol(name.c_str() + 10);
        std::error_code ec2;
        if (pid > 0 && !fs::exists("/proc/" + std::to_string(pid), ec2)) fs::remove_all(e.path(), ec2);
    }
    std::string tmpl = (tmp / ("kf-worker-" + std::to_string(getpid()) + "-XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) return {};
    return tmpl;
}

/**
 * The judge's OpenMP threads (its checksums and fills between the timed calls) sleep as soon
 * as a parallel region ends, OMP_WAIT_POLICY=passive: spinning, as they do by default for a
 * while after each, they took a core from the candidate timed next, and a two-thread host
 * kernel measured 1.8x and 0.9x by turns. libgomp reads the policy when it loads, before
 * main, so the worker starts itself once more with it set; the runners it starts get the
 * policy the worker was given (candidates keep OpenMP's default, as the reference has it).
 */
void judge_threads_passive(char** argv) {
    constexpr const char* kGiven = "KF_WORKER_OMP_WAIT_POLICY";  // the policy given, "-" for none
    if (const char* given = std::getenv(kGiven)) {
        if (std::strcmp(given, "-") == 0) unsetenv("OMP_WAIT_POLICY");
        else setenv("OMP_WAIT_POLICY", given, 1);
        unsetenv(kGiven);
        return;
    }
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const std::string was = policy ? policy : "-";
    setenv(kGiven, was.c_str(), 1);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();  // its name stays in ps
    if (!ec) execv(self.c_str(), argv);
    // Not started again (no /proc): on as it is, the policy as given.
    unsetenv(kGiven);
    if (was == "-") unsetenv("OMP_WAIT_POLICY");
    else setenv("OMP_WAIT_POLICY", was.c_str(), 1);
}

void usage() {
    std::fprintf(stderr,
                 "usage: kfoundry-worker --backend host|cuda [--device N] [--profile-request FILE]\n"
                 "Speaks the Kernel Foundry worker protocol (JSON lines) on stdin/stdout, or serves one\n"
                 "profile request file (run under Nsight Compute by `kfoundry profile`) and exits.\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--runner") return kf::worker::runner_main(argc, argv);
    std::string backend = "host";
    int ordinal = 0;
    std::string profile_request;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--backend" && i + 1 < argc) backend = argv[++i];
        else if (a == "--profile-request" && i + 1 < argc) profile_request = argv[++i];
        else if (a == "--device" && i + 1 < argc) ordinal = std::atoi(argv[++i]);
        else if (a == "--help" || a == "-h") {
            usage();
            return 0;
        } else {
            usage();
            return 2;
        }
    }
    if (backend != "host" && backend != "cuda") {
        usage();
        return 2;
    }
    if (profile_request.empty()) judge_threads_passive(argv);
    // No core dumps from faulting candidates.
    rlimit core{0, 0};
    setrlimit(RLIMIT_CORE, &core);
    if (!profile_request.empty()) run_profile_request(backend, ordinal, profile_request);
    int proto_fd = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    g_out = fdopen(proto_fd, "w");
    if (!g_out) return 1;

    Worker worker(backend, ordinal);
    std::error_code ec;
    worker.self_path_ = std::filesystem::read_symlink("/proc/self/exe", ec);
    worker.stage_root_ = make_stage_root();
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        json req = json::parse(line, nullptr, false);
        if (req.is_discarded() || !req.is_object()) {
            send({{"id", nullptr}, {"ok", false}, {"error", "request is not a JSON object"}});
            continue;
        }
        if (!worker.handle(req)) break;
        worker.between_requests();
    }
    std::fflush(g_out);
    worker.end_runners();
    // Skip static destructors: a candidate's library may have left state behind.
    std::_Exit(0);
}
