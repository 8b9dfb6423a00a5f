#include "runner_checks.h"

#include <cstdio>

namespace kf::worker {

namespace {

/**
 * CPU time a stopped runner may show: what the clock still charges of a stop in progress,
 * some tens of microseconds a stop (an honest CUDA candidate showed 0.56 ms over about 17
 * stops on an H200). More than kIdleCpuStopMs in one stop, or more than kIdleCpuMs and
 * kIdleCpuPerStopMs a stop over the evaluation, is work the stop did not hold.
 */
constexpr double kIdleCpuMs = 0.5;
constexpr double kIdleCpuPerStopMs = 0.1;
constexpr double kIdleCpuStopMs = 1.0;
/** Growth of the device memory held between the first call and the last that is a leak. */
constexpr double kLeakMib = 64.0;

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

void add(nlohmann::json& checks, const std::string& name, const std::string& outcome, const std::string& detail) {
    checks.push_back({{"name", name}, {"outcome", outcome}, {"detail", detail}});
}

std::string spawned_work(const RunnerActivity& a, Backend backend, nlohmann::json& checks) {
    std::string failure;
    if (a.max_children > 0) failure = "the candidate started a process";
    else if (a.max_threads > a.baseline_threads)
        failure = "the candidate started " + std::to_string(a.max_threads - a.baseline_threads) +
                  " thread(s) beyond the runner's " + std::to_string(a.baseline_threads) +
                  (backend == Backend::Cuda ? " (its main thread, the driver's and CUPTI's)" : " (its main thread and OpenMP's pool)") +
                  ": work handed to threads of its own";
    if (!a.measured)
        add(checks, "spawned_work", "skipped", a.note.empty() ? "the runner's threads were not counted" : a.note);
    else
        add(checks, "spawned_work", failure.empty() ? "pass" : "fail",
            failure.empty() ? "the runner kept its " + std::to_string(a.baseline_threads) + " thread(s) over " +
                                  std::to_string(a.calls) + " counts after calls"
                            : failure);
    return failure;
}

std::string work_between_calls(const RunnerActivity& a, nlohmann::json& checks) {
    std::string failure;
    const std::string stopped = num(a.idle_cpu_ms) + " ms while stopped over " + std::to_string(a.stops) +
                                " stop(s), at most " + num(a.idle_cpu_max_ms) + " ms in one";
    if (a.idle_cpu_max_ms > kIdleCpuStopMs || a.idle_cpu_ms > kIdleCpuMs + kIdleCpuPerStopMs * a.stops)
        failure = "the runner used CPU time while it was stopped: " + stopped + " (" + num(a.call_cpu_ms) +
                  " ms while it ran): work escapes the judge's view";
    if (!a.cpu_measured)
        add(checks, "work_between_calls", "skipped", "the runner's CPU time could not be read");
    else
        add(checks, "work_between_calls", failure.empty() ? "pass" : "fail",
            failure.empty() ? num(a.call_cpu_ms) + " ms of CPU time while it ran, " + stopped : failure);
    return failure;
}

std::string device_memory(const DeviceMemoryUse& m, Backend backend, nlohmann::json& checks) {
    std::string failure;
    if (m.measured && m.growth_mib > kLeakMib)
        failure = "the candidate leaks device memory: it held " + num(m.growth_mib) +
                  " MiB more after its last call than after its first (" + std::to_string(m.calls) + " calls)";
    if (!m.measured)
        add(checks, "device_memory", "skipped",
            backend == Backend::Cuda ? "the device's free memory could not be read"
                                     : "host backend: the runner's address space is limited instead (memory_mb)");
    else
        add(checks, "device_memory", failure.empty() ? "pass" : "fail",
            failure.empty() ? "at most " + num(m.peak_mib) + " MiB held after a call (cap " + num(m.cap_mib) + " MiB), " +
                                  num(m.growth_mib) + " MiB more after the last call than after the first"
                            : failure);
    return failure;
}

std::string forbidden_loading(const ProcessFindings& f, nlohmann::json& checks) {
    std::string loaded;
    for (const auto& lib : f.forbidden_loaded) loaded += (loaded.empty() ? "" : ", ") + lib;
    if (f.modules_loaded > 0 && !f.libraries_allowed) {
        // Its library's modules were all loaded with it (CUDA_MODULE_LOADING=EAGER): a module
        // loaded in a call is code it brought in itself (cuModuleLoadData through the driver's
        // entry points, say), which no screen of its source or symbols has seen.
        const std::string what = (loaded.empty() ? "" : loaded + " and ") + std::to_string(f.modules_loaded) +
                                 " device module(s) after its library was loaded";
        add(checks, "forbidden_loading", "fail", "the candidate loaded, at run time, " + what);
        return "the candidate loaded code at run time: " + what;
    }
    const std::string not_judged =
        f.modules_loaded > 0
            ? "; " + std::to_string(f.modules_loaded) +
                  " device module(s) loaded after its library, not judged: the task allows vendor libraries"
            : "";
    if (!f.maps_read)
        add(checks, "forbidden_loading", "skipped", "the candidate's mapped files could not be read" + not_judged);
    else
        add(checks, "forbidden_loading", loaded.empty() ? "pass" : "fail",
            (loaded.empty() ? "no library the task does not allow was mapped after the candidate's calls"
                            : "the candidate loaded, at run time, " + loaded) +
                not_judged);
    return loaded.empty() ? loaded : "the candidate loaded a library the task does not allow: " + loaded;
}

}  // namespace

ProcessVerdict judge_process(const ProcessFindings& f, Backend backend, nlohmann::json& checks) {
    const std::string spawned = spawned_work(f.activity, backend, checks);
    const std::string idle = work_between_calls(f.activity, checks);
    const std::string leak = device_memory(f.memory, backend, checks);
    const std::string loaded = forbidden_loading(f, checks);
    if (!loaded.empty()) return {"integrity_violation", loaded};
    if (!spawned.empty()) return {"integrity_violation", spawned};
    if (!idle.empty()) return {"integrity_violation", idle};
    if (!leak.empty()) return {"runtime_error", leak};
    return {};
}

}  // namespace kf::worker
