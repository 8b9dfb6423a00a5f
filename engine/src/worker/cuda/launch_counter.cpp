// CUPTI kernel tracing for the worker's launch accounting (see launch_counter.h).
#include "cuda/launch_counter.h"

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <cuda_runtime_api.h>
#include <cupti.h>  // also brings the generated *_params structs of the launch calls

namespace kf::worker::gpu {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;  // one activity buffer: ~40k kernel records
constexpr std::size_t kAlign = 8;               // CUPTI wants 8-byte aligned buffers

std::mutex g_mutex;
std::vector<TracedKernel> g_records;
bool g_registered = false;  // guarded by g_mutex

// Launch callbacks: correlation id (of the runtime call, and of the driver call it makes) ->
// the launched kernel's host stub, so that take() can ask the runtime for its real name.
std::mutex g_launch_mutex;
std::unordered_map<std::uint32_t, const void*> g_runtime_launches;  // guarded by g_launch_mutex
std::unordered_map<std::uint32_t, const void*> g_driver_launches;   // guarded by g_launch_mutex
CUpti_SubscriberHandle g_subscriber = nullptr;
bool g_subscribe_tried = false;  // guarded by g_mutex
std::atomic<std::uint64_t> g_modules_loaded{0};  // CUPTI_CBID_RESOURCE_MODULE_LOADED callbacks seen
bool g_modules_watched = false;                  // set by watch_module_loads() only

std::string cupti_note(const char* call, CUptiResult r) {
    const char* text = nullptr;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
    return std::string(call) + " failed: " + text + " (CUPTI error " + std::to_string(static_cast<int>(r)) + ")";
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *max_records = 0;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;  // a null buffer makes CUPTI drop records; counted as dropped
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    if (!buffer) return;
    std::vector<TracedKernel> found;
    CUpti_Activity* record = nullptr;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        // CUDA 13's record for both kinds; the fields read here sit at the same place in every
        // version since CUpti_ActivityKernel4.
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        TracedKernel t;
        t.name = k->name ? k->name : "<unnamed kernel>";
        t.stream_id = k->streamId;
        t.context_id = k->contextId;
        t.correlation_id = k->correlationId;
        found.push_back(std::move(t));
    }
    std::free(buffer);
    if (found.empty()) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& t : found) g_records.push_back(std::move(t));
}

// The host stub of the runtime launch in progress on this thread (between the runtime call's
// entry and exit), so that the driver launch it makes can be tied to it.
thread_local const void* t_runtime_launch = nullptr;

const void* runtime_launch_function(CUpti_CallbackId cbid, const void* params) {
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        return static_cast<const cudaLaunchKernel_v7000_params*>(params)->func;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
        return static_cast<const cudaLaunchKernel_ptsz_v7000_params*>(params)->func;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
        return static_cast<const cudaLaunchKernelExC_v11060_params*>(params)->func;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
        return static_cast<const cudaLaunchKernelExC_ptsz_v11060_params*>(params)->func;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
        return static_cast<const cudaLaunchCooperativeKernel_v9000_params*>(params)->func;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
        return static_cast<const cudaLaunchCooperativeKernel_ptsz_v9000_params*>(params)->func;
    default:
        return nullptr;
    }
}

bool is_driver_launch(CUpti_CallbackId cbid) {
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        return true;
    default:
        return false;
    }
}

/** Records which host function each launch ran: only pointers are kept here; names are asked
 *  for after the window (no CUDA call is made inside a callback). A kernel launched through
 *  the driver API directly (no runtime launch around it) keeps CUPTI's record name. */
void CUPTIAPI api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {  // its data is a CUpti_ResourceData, not read here
        if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) g_modules_loaded.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (!cb) return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (!cb->functionParams) return;
        const void* fn = runtime_launch_function(cbid, cb->functionParams);
        if (!fn) return;
        if (cb->callbackSite == CUPTI_API_ENTER) {
            t_runtime_launch = fn;
            std::lock_guard<std::mutex> lock(g_launch_mutex);
            g_runtime_launches[cb->correlationId] = fn;
        } else {
            t_runtime_launch = nullptr;
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (cb->callbackSite != CUPTI_API_ENTER || !t_runtime_launch || !is_driver_launch(cbid)) return;
        std::lock_guard<std::mutex> lock(g_launch_mutex);
        g_driver_launches[cb->correlationId] = t_runtime_launch;
    }
}

/** The process's one CUPTI subscriber (api_callback), subscribed on first use; null when
 *  CUPTI refused it (another tool holds the one subscriber CUPTI allows). */
CUpti_SubscriberHandle subscriber() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_subscribe_tried) {
        g_subscribe_tried = true;
        if (cuptiSubscribe(&g_subscriber, api_callback, nullptr) != CUPTI_SUCCESS) g_subscriber = nullptr;
    }
    return g_subscriber;
}

/** The launched function's name from the runtime (cudaFuncGetName on its host stub); "" if unknown. */
std::string launched_name(std::uint32_t correlation_id) {
    const void* fn = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_launch_mutex);
        if (auto it = g_runtime_launches.find(correlation_id); it != g_runtime_launches.end()) fn = it->second;
        else if (auto jt = g_driver_launches.find(correlation_id); jt != g_driver_launches.end()) fn = jt->second;
    }
    if (!fn) return {};
    const char* name = nullptr;
    if (cudaFuncGetName(&name, fn) == cudaSuccess && name && *name) return name;
    (void)cudaGetLastError();  // a failed lookup must not look like a later launch error
    return {};
}

}  // namespace

std::string KernelTrace::start() {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!g_registered) {
            CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
            if (r != CUPTI_SUCCESS) return cupti_note("cuptiActivityRegisterCallbacks", r);
            g_registered = true;
        }
    }
    // Deliver and drop anything left from an earlier window (tracing is off outside windows,
    // so these are at most records of a window that ended with a device error).
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) return cupti_note("cuptiActivityFlushAll", r);
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_records.clear();
    }
    (void)dropped();  // reset the dropped-record counter
    {
        std::lock_guard<std::mutex> lock(g_launch_mutex);
        g_runtime_launches.clear();
        g_driver_launches.clear();
    }
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) return cupti_note("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
    enabled_ = true;
    // Launch callbacks, for the kernels' real names; optional (another tool may hold the one
    // subscriber CUPTI allows): without them the names come from CUPTI's records.
    if (subscriber()) {
        const bool rt = cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS;
        const bool drv = cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
        callbacks_on_ = rt || drv;
    }
    return {};
}

std::string KernelTrace::stop(bool flush) {
    std::string note;
    if (callbacks_on_ && g_subscriber) {
        (void)cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
        (void)cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    }
    callbacks_on_ = false;
    if (enabled_) {
        CUptiResult r = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        if (r != CUPTI_SUCCESS) note = cupti_note("cuptiActivityDisable(CONCURRENT_KERNEL)", r);
        enabled_ = false;
    }
    if (flush) {
        CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        if (r != CUPTI_SUCCESS && note.empty()) note = cupti_note("cuptiActivityFlushAll", r);
    }
    return note;
}

std::vector<TracedKernel> KernelTrace::take() {
    std::vector<TracedKernel> out;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        out.swap(g_records);
    }
    for (auto& k : out) {
        std::string name = launched_name(k.correlation_id);
        if (!name.empty()) {
            k.name = std::move(name);
            k.name_from_launch = true;
        }
    }
    return out;
}

std::size_t KernelTrace::dropped() {
    size_t n = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &n) != CUPTI_SUCCESS) return 0;
    return n;
}

bool KernelTrace::stream_id(cudaStream_t stream, std::uint32_t& id, std::string& note) {
    // cudaStream_t and CUstream are the same type (struct CUstream_st*).
    CUptiResult r = cuptiGetStreamIdEx(nullptr, stream, 0, &id);
    if (r != CUPTI_SUCCESS) {
        note = cupti_note("cuptiGetStreamIdEx", r);
        return false;
    }
    return true;
}

std::string watch_module_loads() {
    // Called from the device's thread only: g_modules_watched needs no lock, and none is held
    // while CUPTI delivers callbacks.
    if (g_modules_watched) return {};
    CUpti_SubscriberHandle sub = subscriber();
    if (!sub) return "cuptiSubscribe failed (another CUPTI subscriber in the process?)";
    CUptiResult r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
    if (r != CUPTI_SUCCESS) return cupti_note("cuptiEnableCallback(RESOURCE_MODULE_LOADED)", r);
    g_modules_watched = true;
    return {};
}

std::uint64_t modules_loaded() {
    return g_modules_loaded.load(std::memory_order_relaxed);
}

std::string demangle(const std::string& name) {
    if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
    int status = 0;
    char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !out) {
        std::free(out);
        return name;
    }
    std::string s(out);
    std::free(out);
    return s;
}

}  // namespace kf::worker::gpu
