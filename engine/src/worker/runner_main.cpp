// `kfoundry-worker --runner`: the sandboxed side of a runner (runner_process.h). It confines
// itself, loads one library, and calls its entry point on the tensor sets the judge
// describes. It holds no verdict, no reference output and no protocol channel to the engine.
// On CUDA it has a context of its own on the judge's GPU and maps the judge's shared device
// memory (map_cuda_arena); its device faults end its own context, not the judge's.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>
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

/** The command line: `--library PATH --memory BYTES --file-size BYTES --backend B --device N
 *  --spawned-ns T` (T: steady_ns() when the judge started it). */
struct RunnerArgs {
    std::string library, backend = "host";
    int ordinal = 0;
    std::int64_t spawned_ns = 0;
    SandboxLimits limits;
};

RunnerArgs read_args(int argc, char** argv) {
    RunnerArgs a;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k == "--library") a.library = argv[i + 1];
        else if (k == "--memory") a.limits.memory_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (k == "--file-size") a.limits.file_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (k == "--backend") a.backend = argv[i + 1];
        else if (k == "--device") a.ordinal = std::atoi(argv[i + 1]);
        else if (k == "--spawned-ns") a.spawned_ns = std::strtoll(argv[i + 1], nullptr, 10);
    }
    a.limits.open_files = 256;
    return a;
}

/** Tells the judge why the device could not be set up, and ends. */
[[noreturn]] void device_error(int sock, const std::string& why) {
    send_runner_message(sock, {RunnerMsg::DeviceError}, why);
    std::_Exit(0);
}

/** The driver started (CUDA), with nothing of this process on the device yet. */
void start_driver(int sock, const RunnerArgs& a) {
    if (a.backend != "cuda") return;
#ifdef KF_HAVE_CUDA
    try {
        (void)start_cuda_driver(true);
    } catch (const DeviceFault& f) {
        device_error(sock, f.what());
    }
#endif
}

/** Tells the judge the driver is started and waits until it says to open the device: until
 *  then this process has nothing on the device, so the judge need not stop it while it
 *  measures a call (runner_pool.h). Exit (a runner started ahead and never used) ends it. */
void await_open(int sock) {
    if (!send_runner_message(sock, {RunnerMsg::Started})) std::_Exit(0);
    auto m = receive_runner_message(sock);
    if (!m || m->header.type == RunnerMsg::Exit) std::_Exit(0);
    if (m->header.type != RunnerMsg::Open) std::_Exit(3);
}

/** The device, set up before the filter and the library: the driver opens its device nodes
 *  and starts its threads first. Null on the host. */
std::unique_ptr<Device> open_device(int sock, const RunnerArgs& a) {
    if (a.backend != "cuda") return nullptr;
#ifdef KF_HAVE_CUDA
    try {
        return make_cuda_device(a.ordinal, true);
    } catch (const DeviceFault& f) {
        device_error(sock, f.what());
    }
#else
    device_error(sock, "this worker was built without the cuda backend");
#endif
}

/** The threads the runner keeps are started before the library, so that the judge counts
 *  them as the runner's own (spawned_work): OpenMP's pool on the host (CUDA candidates are
 *  built without OpenMP: their runners keep no idle pool), the driver's and CUPTI's on CUDA. */
void start_own_threads(int sock, Device* dev) {
    (void)sock;
    (void)dev;
#ifdef _OPENMP
    int team = 0;  // a region whose body does nothing is dropped by the compiler
    if (!dev) {
#pragma omp parallel reduction(+ : team)
        team += 1;
    }
    if (!dev && team < 1) std::_Exit(3);
#endif
#ifdef KF_HAVE_CUDA
    if (dev) {
        try {
            (void)dev->timed_call([] {});
            (void)dev->account_launches([] {}, 0);
        } catch (const DeviceFault& f) {
            device_error(sock, f.what());
        }
    }
#endif
}

/** Waits for Load and loads the library it names (else `library`): its entry point. A
 *  library that cannot be loaded is reported, and the runner ends. */
EntryFn load_library(int sock, std::string library, Device* dev, const nlohmann::json& warnings) {
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
    return entry;
}

/** The loaded runner's side of the protocol: the tensors the judge describes, and the calls
 *  on them. */
class Serving {
public:
    Serving(int sock, Device* dev, EntryFn entry, int ordinal)
        : sock_(sock), dev_(dev), entry_(entry), ordinal_(ordinal), stream_(dev ? dev->stream() : nullptr) {}

    [[noreturn]] void run() {
        for (;;) {
            auto m = receive_runner_message(sock_);
            if (!m) std::_Exit(0);
            switch (m->header.type) {
            case RunnerMsg::Arena: map_arena(*m); break;
            case RunnerMsg::Case: read_case(*m); break;
            case RunnerMsg::Call:
            case RunnerMsg::Account: call(*m); break;
            case RunnerMsg::Arm: arm(*m); break;
            case RunnerMsg::Exit: std::_Exit(0);
            default: std::_Exit(3);
            }
        }
    }

private:
    void map_arena(const ReceivedMessage& m) {
        if (!dev_) {
            // Between two inaccessible pages: a write just past either end faults instead
            // of landing in whatever mapping the kernel placed next to it.
            const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
            if (base_) munmap(base_ - page, mapped_ + 2 * page);
            base_ = nullptr;
            void* range = mmap(nullptr, m.header.value + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (range == MAP_FAILED) std::_Exit(3);
            void* p = mmap(static_cast<char*>(range) + page, m.header.value, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                           m.fd, 0);
            if (m.fd >= 0) close(m.fd);
            if (p == MAP_FAILED) std::_Exit(3);
            base_ = static_cast<char*>(p);
        } else {
#ifdef KF_HAVE_CUDA
            device_arena_.reset();
            try {
                device_arena_ = map_cuda_arena(m.fd, m.header.value, ordinal_);
            } catch (const DeviceFault& f) {
                device_error(sock_, f.what());
            }
            base_ = device_arena_->base();
#endif
        }
        mapped_ = m.header.value;
    }

    void read_case(const ReceivedMessage& m) {
        auto j = nlohmann::json::parse(m.payload, nullptr, false);
        if (!j.is_object()) std::_Exit(3);
        sizes_ = j.value("sizes", std::vector<long long>{});
        params_ = j.value("params", std::vector<double>{});
        sets_.clear();
        for (const auto& offs : j.value("sets", std::vector<std::vector<std::size_t>>{})) {
            std::vector<void*> ptrs;
            for (std::size_t o : offs) ptrs.push_back(o < mapped_ ? base_ + o : nullptr);
            sets_.push_back(std::move(ptrs));
        }
    }

    void call(const ReceivedMessage& m) {
        std::size_t k = m.header.index;
        if (k >= sets_.size()) std::_Exit(3);
        auto invoke = [&] { entry_(sets_[k].data(), sizes_.data(), params_.data(), stream_); };
        try {
            if (!dev_) {
                invoke();
                send_runner_message(sock_, {RunnerMsg::Done, m.header.index});
            } else if (m.header.type == RunnerMsg::Call) {
                CallTime t = dev_->timed_call(invoke);
                send_runner_message(sock_, {RunnerMsg::Done, m.header.index, to_ns(t.event_ms)});
            } else {
                // value: how long to go on counting after the call's work (ms, capped).
                const int late_ms = static_cast<int>(std::min<std::uint64_t>(m.header.value, 1000));
                LaunchReport r = dev_->account_launches(invoke, late_ms);
                send_runner_message(sock_, {RunnerMsg::Launches, m.header.index}, launches_json(r).dump());
            }
        } catch (const DeviceFault& f) {
            fault(m.header.index, f);
        } catch (const std::exception& e) {
            send_runner_message(sock_, {RunnerMsg::Fault, m.header.index}, e.what());
        } catch (...) {
            send_runner_message(sock_, {RunnerMsg::Fault, m.header.index}, "an exception that is not a std::exception");
        }
    }

    /** Before a timed call on CUDA: the switch from the judge's context to this one happens
     *  here, outside the judge's clock. */
    void arm(const ReceivedMessage& m) {
        if (dev_) {
            try {
                (void)dev_->timed_call([] {});
            } catch (const DeviceFault& f) {
                fault(m.header.index, f);
                return;
            }
        }
        send_runner_message(sock_, {RunnerMsg::Armed, m.header.index});
    }

    void fault(std::uint32_t index, const DeviceFault& f) {
        send_runner_message(sock_, {RunnerMsg::Fault, index, 1}, f.what());
        if (f.sticky()) std::_Exit(0);  // its context is gone; the judge starts another runner
    }

    int sock_;
    Device* dev_;
    EntryFn entry_;
    int ordinal_;
    void* stream_;
    char* base_ = nullptr;
    std::size_t mapped_ = 0;
#ifdef KF_HAVE_CUDA
    std::unique_ptr<MappedArena> device_arena_;
#endif
    std::vector<long long> sizes_;
    std::vector<double> params_;
    std::vector<std::vector<void*>> sets_;
};

}  // namespace

int runner_main(int argc, char** argv) {
    const std::int64_t started = steady_ns();
    const RunnerArgs args = read_args(argc, argv);
    // KF_RUNNER_SLOW_SETUP_MS and KF_RUNNER_SLOW_DEVICE_MS: a runner slow to start, as one
    // starting the CUDA driver is, and slow to make its device context (for tests of when
    // runners are started and stopped; docs/sandbox.md).
    const auto slow = [](const char* name) {
        if (const char* v = std::getenv(name))
            std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp(std::atoi(v), 0, 10000)));
    };
    slow("KF_RUNNER_SLOW_SETUP_MS");
    const int sock = kRunnerControlFd;
    const std::int64_t t0 = steady_ns();
    start_driver(sock, args);
    const std::int64_t t1 = steady_ns();
    await_open(sock);
    const std::int64_t t2 = steady_ns();
    slow("KF_RUNNER_SLOW_DEVICE_MS");
    std::unique_ptr<Device> dev = open_device(sock, args);
    const std::int64_t t3 = steady_ns();
    start_own_threads(sock, dev.get());
    const std::int64_t t4 = steady_ns();
    Confinement conf = confine_self(args.limits, dev != nullptr);
    const std::int64_t t5 = steady_ns();

    // The judge counts this process's threads now, while nothing of the library has run; the
    // value says whether its waits for the device sleep (its CPU time is then host work only),
    // the payload how long this set-up took, step by step (the wait for Open apart). A runner
    // started ahead of need waits here until the judge has a candidate for it: Load names the
    // library.
    const auto us = [](std::int64_t ns) { return ns / 1000; };
    nlohmann::json steps = {{"setup_us", us(t5 - started - (t2 - t1))}, {"driver_us", us(t1 - t0)},
                            {"unopened_us", us(t2 - t1)},          {"device_us", us(t3 - t2)},
                            {"threads_us", us(t4 - t3)},           {"confine_us", us(t5 - t4)}};
    if (args.spawned_ns > 0 && started >= args.spawned_ns) steps["spawn_us"] = us(started - args.spawned_ns);
    if (dev) {
        const Device::SetupTimes st = dev->setup_times();
        if (st.init_ms >= 0) steps["init_us"] = static_cast<std::int64_t>(st.init_ms * 1000);
        if (st.context_ms >= 0) steps["context_us"] = static_cast<std::int64_t>(st.context_ms * 1000);
    }
    send_runner_message(sock, {RunnerMsg::Confined, 0, dev && dev->waits_without_spinning() ? 1u : 0u}, steps.dump());
    const EntryFn entry = load_library(sock, args.library, dev.get(), conf.warnings);
    Serving(sock, dev.get(), entry, args.ordinal).run();
}

}  // namespace kf::worker
