// `kfoundry-worker --runner`: the sandboxed side of a runner (runner_process.h). It confines
// itself, loads one library, and calls its entry point on the tensor sets the judge
// describes. It holds no verdict, no reference output and no protocol channel to the engine.
// On CUDA it has a context of its own on the judge's GPU and maps the judge's shared device
// memory (map_cuda_arena); its device faults end its own context, not the judge's.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "device.h"
#include "kf/task.h"
#include "runner_main.h"
#include "runner_protocol.h"
#include "sandbox.h"

namespace kf::worker {

namespace {

std::uint64_t to_ns(double ms) { return ms > 0 && std::isfinite(ms) ? static_cast<std::uint64_t>(ms * 1e6) : 0; }

nlohmann::json launches_json(const LaunchReport& r) {
    return {{"supported", r.supported},
            {"kernels", r.kernels},
            {"kernels_other_streams", r.kernels_other_streams},
            {"kernel_names", r.kernel_names},
            {"modules_loaded", r.modules_loaded},
            {"note", r.note}};
}

}  // namespace

int runner_main(int argc, char** argv) {
    const auto started = std::chrono::steady_clock::now();
    std::string library, backend = "host";
    int ordinal = 0;
    SandboxLimits limits;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--library") library = argv[i + 1];
        else if (a == "--memory") limits.memory_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--file-size") limits.file_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--backend") backend = argv[i + 1];
        else if (a == "--device") ordinal = std::atoi(argv[i + 1]);
    }
    limits.open_files = 256;
    const int sock = kRunnerControlFd;
    const bool gpu = backend == "cuda";

    // The device is set up before the filter and the library: the driver opens its device
    // nodes and starts its threads first.
    std::unique_ptr<Device> dev;
    if (gpu) {
#ifdef KF_HAVE_CUDA
        try {
            dev = make_cuda_device(ordinal, true);
        } catch (const DeviceFault& f) {
            send_runner_message(sock, {RunnerMsg::DeviceError}, f.what());
            std::_Exit(0);
        }
#else
        send_runner_message(sock, {RunnerMsg::DeviceError}, "this worker was built without the cuda backend");
        std::_Exit(0);
#endif
    }
#ifdef _OPENMP
    // OpenMP's thread pool is started here, before the library, so that a host candidate's
    // parallel regions run on threads the judge counts as the runner's own (spawned_work).
    // CUDA candidates are built without OpenMP: their runners keep no idle pool.
    int team = 0;  // a region whose body does nothing is dropped by the compiler
    if (!gpu) {
#pragma omp parallel reduction(+ : team)
        team += 1;
    }
    if (!gpu && team < 1) std::_Exit(3);
#endif
#ifdef KF_HAVE_CUDA
    if (dev) {
        // The same for the threads the driver and CUPTI start on first use.
        try {
            (void)dev->timed_call([] {});
            (void)dev->account_launches([] {});
        } catch (const DeviceFault& f) {
            send_runner_message(sock, {RunnerMsg::DeviceError}, f.what());
            std::_Exit(0);
        }
    }
#endif
    Confinement conf = confine_self(limits, gpu);
    nlohmann::json warnings = conf.warnings;

    // The judge counts this process's threads now, while nothing of the library has run; the
    // value says whether its waits for the device sleep (its CPU time is then host work only),
    // the payload how long this set-up took. A runner started ahead of need waits here until
    // the judge has a candidate for it: Load names the library.
    const auto setup_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    send_runner_message(sock, {RunnerMsg::Confined, 0, dev && dev->waits_without_spinning() ? 1u : 0u},
                        std::to_string(setup_us.count()));
    auto go = receive_runner_message(sock);
    if (!go || go->header.type != RunnerMsg::Load) std::_Exit(0);
    if (!go->payload.empty()) library = go->payload;

    dlerror();
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    EntryFn entry = nullptr;
    if (handle) entry = reinterpret_cast<EntryFn>(dlsym(handle, kEntrySymbol));
    if (!entry) {
        const char* e = handle ? nullptr : dlerror();
        std::string msg = e ? e : std::string("no ") + kEntrySymbol + " symbol in " + library;
        send_runner_message(sock, {RunnerMsg::LoadError}, msg);
        std::_Exit(0);
    }
    if (dev) dev->library_loaded();  // device modules loaded from here on are the candidate's doing
    send_runner_message(sock, {RunnerMsg::Ready}, warnings.dump());

    char* base = nullptr;
    std::size_t mapped = 0;
#ifdef KF_HAVE_CUDA
    std::unique_ptr<MappedArena> device_arena;
#endif
    std::vector<long long> sizes;
    std::vector<double> params;
    std::vector<std::vector<void*>> sets;
    void* stream = dev ? dev->stream() : nullptr;
    auto fault = [&](std::uint32_t index, const DeviceFault& f) {
        send_runner_message(sock, {RunnerMsg::Fault, index, 1}, f.what());
        if (f.sticky()) std::_Exit(0);  // its context is gone; the judge starts another runner
    };
    for (;;) {
        auto m = receive_runner_message(sock);
        if (!m) std::_Exit(0);
        switch (m->header.type) {
        case RunnerMsg::Arena: {
            if (!gpu) {
                // Between two inaccessible pages: a write just past either end faults instead
                // of landing in whatever mapping the kernel placed next to it.
                const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
                if (base) munmap(base - page, mapped + 2 * page);
                base = nullptr;
                void* range = mmap(nullptr, m->header.value + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (range == MAP_FAILED) std::_Exit(3);
                void* p = mmap(static_cast<char*>(range) + page, m->header.value, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                               m->fd, 0);
                if (m->fd >= 0) close(m->fd);
                if (p == MAP_FAILED) std::_Exit(3);
                base = static_cast<char*>(p);
            } else {
#ifdef KF_HAVE_CUDA
                device_arena.reset();
                try {
                    device_arena = map_cuda_arena(m->fd, m->header.value, ordinal);
                } catch (const DeviceFault& f) {
                    send_runner_message(sock, {RunnerMsg::DeviceError}, f.what());
                    std::_Exit(0);
                }
                base = device_arena->base();
#endif
            }
            mapped = m->header.value;
            break;
        }
        case RunnerMsg::Case: {
            auto j = nlohmann::json::parse(m->payload, nullptr, false);
            if (!j.is_object()) std::_Exit(3);
            sizes = j.value("sizes", std::vector<long long>{});
            params = j.value("params", std::vector<double>{});
            sets.clear();
            for (const auto& offs : j.value("sets", std::vector<std::vector<std::size_t>>{})) {
                std::vector<void*> ptrs;
                for (std::size_t o : offs) ptrs.push_back(o < mapped ? base + o : nullptr);
                sets.push_back(std::move(ptrs));
            }
            break;
        }
        case RunnerMsg::Call:
        case RunnerMsg::Account: {
            std::size_t k = m->header.index;
            if (k >= sets.size()) std::_Exit(3);
            auto call = [&] { entry(sets[k].data(), sizes.data(), params.data(), stream); };
            try {
                if (!dev) {
                    call();
                    send_runner_message(sock, {RunnerMsg::Done, m->header.index});
                } else if (m->header.type == RunnerMsg::Call) {
                    CallTime t = dev->timed_call(call);
                    send_runner_message(sock, {RunnerMsg::Done, m->header.index, to_ns(t.event_ms)});
                } else {
                    LaunchReport r = dev->account_launches(call);
                    send_runner_message(sock, {RunnerMsg::Launches, m->header.index}, launches_json(r).dump());
                }
            } catch (const DeviceFault& f) {
                fault(m->header.index, f);
            } catch (const std::exception& e) {
                send_runner_message(sock, {RunnerMsg::Fault, m->header.index}, e.what());
            } catch (...) {
                send_runner_message(sock, {RunnerMsg::Fault, m->header.index}, "an exception that is not a std::exception");
            }
            break;
        }
        case RunnerMsg::Arm: {
            // Before a timed call on CUDA: the switch from the judge's context to this one
            // happens here, outside the judge's clock.
            if (dev) {
                try {
                    (void)dev->timed_call([] {});
                } catch (const DeviceFault& f) {
                    fault(m->header.index, f);
                    break;
                }
            }
            send_runner_message(sock, {RunnerMsg::Armed, m->header.index});
            break;
        }
        case RunnerMsg::Exit: std::_Exit(0);
        default: std::_Exit(3);
        }
    }
}

}  // namespace kf::worker
