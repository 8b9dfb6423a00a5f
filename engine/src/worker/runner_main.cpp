// `kfoundry-worker --runner`: the sandboxed side of a runner (runner_process.h). It confines
// itself, loads one library, and calls its entry point on the tensor sets the judge
// describes. It holds no verdict, no reference output and no protocol channel to the engine.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/task.h"
#include "runner_main.h"
#include "runner_protocol.h"
#include "sandbox.h"

namespace kf::worker {

int runner_main(int argc, char** argv) {
    std::string library;
    SandboxLimits limits;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--library") library = argv[i + 1];
        else if (a == "--memory") limits.memory_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--file-size") limits.file_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    }
    limits.open_files = 256;
    const int sock = kRunnerControlFd;
    Confinement conf = confine_self(limits, false);
    nlohmann::json warnings = conf.warnings;

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
    send_runner_message(sock, {RunnerMsg::Ready}, warnings.dump());

    char* base = nullptr;
    std::size_t mapped = 0;
    std::vector<long long> sizes;
    std::vector<double> params;
    std::vector<std::vector<void*>> sets;
    for (;;) {
        auto m = receive_runner_message(sock);
        if (!m) std::_Exit(0);
        switch (m->header.type) {
        case RunnerMsg::Arena: {
            if (base) munmap(base, mapped);
            base = nullptr;
            void* p = mmap(nullptr, m->header.value, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
            if (m->fd >= 0) close(m->fd);
            if (p == MAP_FAILED) std::_Exit(3);
            base = static_cast<char*>(p);
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
        case RunnerMsg::Call: {
            std::size_t k = m->header.index;
            if (k >= sets.size()) std::_Exit(3);
            try {
                entry(sets[k].data(), sizes.data(), params.data(), nullptr);
                send_runner_message(sock, {RunnerMsg::Done, m->header.index});
            } catch (const std::exception& e) {
                send_runner_message(sock, {RunnerMsg::Fault, m->header.index}, e.what());
            } catch (...) {
                send_runner_message(sock, {RunnerMsg::Fault, m->header.index}, "an exception that is not a std::exception");
            }
            break;
        }
        case RunnerMsg::Exit: std::_Exit(0);
        default: std::_Exit(3);
        }
    }
}

}  // namespace kf::worker
