// Evaluator::profile: Nsight Compute over a one-shot worker (docs/profiling.md). The compile
// goes through the evaluator's cache; the profile itself runs in child processes only.
#include <chrono>
#include <map>
#include <mutex>

#include "kf/evaluator.h"
#include "kf/process.h"
#include "kf/profile.h"

namespace kf {

using nlohmann::json;

namespace {

/** Counter access is a property of the machine's driver: once an ncu was denied it, later
 *  calls in this process answer at once instead of starting that ncu again. */
std::mutex g_blocked_mutex;
std::map<std::string, json> g_permission_denied;  ///< by ncu path

json denied(const std::filesystem::path& ncu) {
    std::lock_guard<std::mutex> lock(g_blocked_mutex);
    auto it = g_permission_denied.find(ncu.string());
    return it == g_permission_denied.end() ? json() : it->second;
}

}  // namespace

bool Evaluator::profiler_available(std::string* why) {
    if (backend() != Backend::Cuda) {
        if (why) *why = "the " + std::string(to_string(backend())) + " backend has no hardware profiler: timing-only diagnosis";
        return false;
    }
    std::string reason;
    std::filesystem::path ncu = find_ncu(reason);
    if (ncu.empty()) {
        if (why) *why = reason;
        return false;
    }
    if (json d = denied(ncu); d.is_object()) {
        if (why) *why = d.value("reason", "");
        return false;
    }
    return true;
}

json Evaluator::profile(const Task& task, const Candidate& cand, const ProfileOptions& opt) {
    auto t0 = std::chrono::steady_clock::now();
    auto finish = [&](json j) {
        j["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return j;
    };
    if (backend() != Backend::Cuda)
        return finish(profile_unavailable(
            "the " + std::string(to_string(backend())) + " backend has no hardware profiler: timing-only diagnosis", "backend"));
    std::string why;
    std::filesystem::path ncu = find_ncu(why);
    if (ncu.empty()) return finish(profile_unavailable(why, "no_profiler"));
    DeviceTurn turn = device_turn();  // not while an evaluation runs on the same device
    if (json d = denied(ncu); d.is_object()) {
        d["seconds"] = 0.0;  // answered from the earlier denial, without running ncu
        d["cached"] = true;
        return finish(d);
    }
    CompileResult cr;
    try {
        cr = compile(task, cand, opt.tunables);
    } catch (const std::exception& e) {
        return finish(profile_unavailable(std::string("the candidate cannot be compiled: ") + e.what(), "compile"));
    }
    if (!cr.ok) return finish(profile_unavailable("the candidate does not compile", "compile"));
    const WorkerConfig& wc = worker().config();
    ProfileRequest req;
    req.ncu = ncu;
    req.worker = wc.worker.empty() ? executable_dir() / "kfoundry-worker" : wc.worker;
    req.backend = backend();
    req.device = wc.device;
    req.task_dir = task.dir;
    req.library = cr.library;
    req.case_name = opt.case_name;
    req.warmup = opt.warmup;
    req.runs = opt.runs;
    req.seed = opt.seed;
    req.max_launches = opt.max_launches;
    req.timeout_s = opt.timeout_s;
    req.keep_output = opt.keep_output;
    json j = profile_library(req);
    if (j.value("code", "") == "permission") {
        std::lock_guard<std::mutex> lock(g_blocked_mutex);
        g_permission_denied[ncu.string()] = j;
    }
    j["compile_seconds"] = cr.info.cached ? 0.0 : cr.info.seconds;
    return finish(j);
}

void Evaluator::profile_into(Diagnosis& d, const Task& task, const Candidate& cand, const ProfileOptions& opt) {
    if (!d.ok()) {
        apply_profile(d, profile_unavailable("not profiled: the candidate's status is " + std::string(to_string(d.status)),
                                             "not_profiled"));
        return;
    }
    apply_profile(d, profile(task, cand, opt));
}

}  // namespace kf
