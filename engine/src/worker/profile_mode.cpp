// The worker's one-shot profile mode (docs/worker-protocol.md, docs/profiling.md):
//   kfoundry-worker --backend cuda --profile-request FILE
// run under Nsight Compute by the engine. It loads the candidate, fills the primary case's
// inputs once, makes a few unprofiled warm-up calls, then `runs` calls each wrapped in the
// NVTX range the profiler filters on, and writes a small JSON result file. The worker's own
// kernels (fills, poison) run outside the range, so only the candidate's kernels are profiled.
#include "profile_mode.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "case_buffers.h"
#include "device.h"
#include "kf/task.h"
#include "rng.h"

namespace kf::worker {

using nlohmann::json;

namespace {

void write_result(const std::string& path, const json& j) {
    if (path.empty()) {
        std::fprintf(stderr, "%s\n", j.dump().c_str());
        return;
    }
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        out << j.dump(2) << "\n";
    }
    std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

void run_profile_request(const std::string& backend_name, int ordinal, const std::string& request_file) {
    json req;
    {
        std::ifstream in(request_file);
        if (!in) {
            std::fprintf(stderr, "kfoundry-worker: cannot read the profile request %s\n", request_file.c_str());
            std::exit(2);
        }
        req = json::parse(in, nullptr, false);
    }
    if (!req.is_object()) {
        std::fprintf(stderr, "kfoundry-worker: the profile request %s is not a JSON object\n", request_file.c_str());
        std::exit(2);
    }
    const std::string result_path = req.value("result", "");
    // Keep the profiler's output clean: anything the worker or the candidate prints goes to the log.
    if (std::string log = req.value("log", ""); !log.empty()) {
        if (std::freopen(log.c_str(), "a", stderr)) dup2(fileno(stderr), STDOUT_FILENO);
    }
    json result = {{"ok", false}, {"status", "error"}, {"error", ""}};
    void* handle = nullptr;
    int rc = 1;
    try {
        auto backend = backend_from_string(backend_name);
        if (!backend) throw std::runtime_error("unknown backend " + backend_name);
        Task task = load_task(req.at("task").get<std::string>());
        std::unique_ptr<Device> dev;
        if (*backend == Backend::Host) dev = make_host_device();
#ifdef KF_HAVE_CUDA
        else dev = make_cuda_device(ordinal);
#else
        else throw std::runtime_error("this worker was built without the cuda backend");
        (void)ordinal;
#endif
        std::string case_name = req.value("case", "");
        const TaskCase* c = case_name.empty() ? &task.primary_case(*backend) : task.find_case(case_name);
        if (!c) throw std::runtime_error("no case '" + case_name + "' in task " + task.name);
        result["case"] = c->name;
        result["device"] = dev->info().name;

        std::string lib = req.at("candidate").get<std::string>();
        dlerror();
        handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* e = dlerror();
            result["status"] = "load_error";
            throw std::runtime_error(std::string("cannot load the candidate: ") + (e ? e : "dlopen failed"));
        }
        auto entry = reinterpret_cast<EntryFn>(dlsym(handle, kEntrySymbol));
        if (!entry) {
            result["status"] = "load_error";
            throw std::runtime_error(std::string("no ") + kEntrySymbol + " symbol in " + lib);
        }

        const int warmup = std::clamp(req.value("warmup", 2), 0, 100);
        const int runs = std::clamp(req.value("runs", 1), 1, 100);
        const std::string range = req.value("range", std::string("kf_candidate"));
        CaseContext cc(*dev, task, *c);
        TensorSet& set = cc.new_set();
        cc.fill_inputs(set, splitmix64(req.value("seed", std::uint64_t{1})));
        cc.poison_outputs(set, 0xFF);
        dev->synchronize();
        for (int w = 0; w < warmup; ++w) run_candidate(*dev, cc.call(entry, set));
        json wall = json::array();
        for (int r = 0; r < runs; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            dev->range_push(range.c_str());
            try {
                run_candidate(*dev, cc.call(entry, set));
            } catch (...) {
                dev->range_pop();
                throw;
            }
            dev->range_pop();
            wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        result["ok"] = true;
        result["status"] = "ok";
        result["warmup"] = warmup;
        result["runs"] = runs;
        result["wall_ms"] = wall;
        rc = 0;
    } catch (const CandidateFault& f) {
        result["status"] = "runtime_error";
        result["error"] = "the candidate faulted: " + f.message;
        rc = 3;
    } catch (const DeviceFault& f) {
        result["error"] = std::string("device error: ") + f.what();
        rc = 1;
    } catch (const std::exception& e) {
        result["error"] = e.what();
        rc = result["status"] == "load_error" ? 3 : 1;
    }
    write_result(result_path, result);
    std::fflush(stdout);
    std::fflush(stderr);
    // Like the server loop: skip static destructors a candidate's library may have broken.
    std::_Exit(rc);
}

}  // namespace kf::worker
