#pragma once
// Confinement of the processes that run candidate code (docs/sandbox.md): resource limits
// and a seccomp filter applied by the process to itself, and the bubblewrap command line
// that gives it a private, read-only view of the file system.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kf::worker {

/** Limits applied to a process that runs candidate code. Zero means "no limit". */
struct SandboxLimits {
    std::uint64_t memory_bytes = 0;  ///< RLIMIT_AS (not applied on CUDA: the driver reserves huge ranges)
    std::uint64_t file_bytes = 0;    ///< RLIMIT_FSIZE: largest file the process may write
    std::uint64_t open_files = 0;    ///< RLIMIT_NOFILE
};

/** What confine_self() managed to apply; `warnings` says what it could not. */
struct Confinement {
    bool seccomp = false;
    std::vector<std::string> warnings;
};

/**
 * Confines the calling process for good: no core dumps, the limits, no new privileges, and
 * a seccomp filter that refuses (EPERM) new processes (fork, vfork, clone without
 * CLONE_THREAD; clone3 answers ENOSYS so that threads fall back to clone), execve,
 * signals to any process but itself, ptrace and cross-process memory access, namespaces,
 * mounts, network sockets other than the ones it holds, io_uring and bpf. Threads stay
 * allowed (OpenMP candidates use them). Called before the candidate's library is opened,
 * so that its constructors are confined too.
 */
Confinement confine_self(const SandboxLimits& limits, bool gpu);

/** Where a sandboxed process may look. */
struct SandboxView {
    std::vector<std::filesystem::path> read_only;  ///< visible read-only at the same path
    bool gpu = false;                              ///< /dev/nvidia* bound, /sys visible
    std::uint64_t scratch_bytes = 64ull << 20;     ///< size of the private /tmp (the one writable place)
};

/** True when bubblewrap is installed and can create namespaces here (probed once). */
bool bwrap_usable(std::string* why_not = nullptr);

/**
 * The bubblewrap arguments that run a command in `view`: the system's libraries read-only,
 * the given paths read-only, a private /tmp of scratch_bytes (also the working directory),
 * fresh /dev and /proc, no network, own PID, IPC and UTS namespaces, a new session, and
 * death with its parent. `info_fd` receives bubblewrap's JSON with the sandboxed process's
 * PID. Append the command after the returned list.
 */
std::vector<std::string> bwrap_arguments(const SandboxView& view, int info_fd);

}  // namespace kf::worker
