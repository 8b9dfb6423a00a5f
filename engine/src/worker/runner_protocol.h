#pragma once
// The judge's channel to a runner (docs/sandbox.md): fixed-size messages on a SOCK_SEQPACKET
// socket pair, an optional text payload after the header, and the arena's memfd passed with
// SCM_RIGHTS. Nothing the runner sends decides a verdict: the judge reads the outputs itself.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kf::worker {

enum class RunnerMsg : std::uint32_t {
    Ready = 1,      ///< runner → judge: library loaded, entry point found
    LoadError = 2,  ///< runner → judge: payload says why
    Arena = 3,      ///< judge → runner: fd attached, value = its size in bytes
    Case = 4,       ///< judge → runner: payload = JSON {sizes, params, sets: [[offset...]...]}
    Call = 5,       ///< judge → runner: index = tensor set
    Done = 6,       ///< runner → judge: the call returned; value = its event time in ns (CUDA), else 0
    Fault = 7,      ///< runner → judge: the call threw (value 0) or faulted on the device (value 1); payload says what
    Exit = 8,       ///< judge → runner
    Account = 9,    ///< judge → runner: call set `index` under launch accounting (CUDA); value = ms to go on counting after its work (late work)
    Launches = 10,  ///< runner → judge: payload = JSON of the launch report
    DeviceError = 11,  ///< runner → judge: the runner's device could not be set up; payload says why
    Arm = 12,       ///< judge → runner: an empty device operation, so that the runner's context holds the GPU
    Armed = 13,     ///< runner → judge: done
    Confined = 14,  ///< runner → judge: confined, not yet loaded; it waits for Load while the judge counts its threads; value 1: its device waits sleep; payload: JSON of its set-up's steps in microseconds (setup_us, spawn_us, driver_us, unopened_us, device_us, threads_us, confine_us; init_us, context_us)
    Load = 15,      ///< judge → runner: load the library; payload: its path (else the one given at start)
    Started = 16,   ///< runner → judge: its driver is started, nothing of its own is on the device yet; it waits for Open
    Open = 17,      ///< judge → runner: make the device context (and go on to Confined)
};

struct RunnerHeader {
    RunnerMsg type;
    std::uint32_t index = 0;
    std::uint64_t value = 0;
};

inline constexpr std::size_t kRunnerMaxMessage = 1 << 16;
/** The monotonic clock in ns, which the judge and its runners share (`--spawned-ns`). */
inline std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
/** The control socket's descriptor number in the runner. */
inline constexpr int kRunnerControlFd = 3;

/** Sends one message (header, payload, optionally one descriptor). False when the peer is gone. */
bool send_runner_message(int sock, const RunnerHeader& h, const std::string& payload = {}, int fd = -1);

struct ReceivedMessage {
    RunnerHeader header;
    std::string payload;
    int fd = -1;  ///< a descriptor that came with it, or -1
};

/** Receives one message; nullopt when the peer closed the socket or sent garbage. */
std::optional<ReceivedMessage> receive_runner_message(int sock);

}  // namespace kf::worker
