#pragma once
// Confinement of the processes that run candidate code (docs/sandbox.md): resource limits
// and a seccomp filter applied by the process to itself, and the bubblewrap view
// (kf/sandbox_view.h) that gives it a private, read-only file system.
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
 * a seccomp filter that ends the process with SIGSYS when it starts a new process (fork,
 * vfork, clone without CLONE_THREAD, execve; clone3 answers ENOSYS so that threads fall back
 * to clone) and refuses (EPERM) signals to any process but itself, ptrace and cross-process memory access, namespaces,
 * mounts, network sockets other than the ones it holds, io_uring and bpf. Threads stay
 * allowed (OpenMP candidates use them). Called before the candidate's library is opened,
 * so that its constructors are confined too.
 */
Confinement confine_self(const SandboxLimits& limits, bool gpu);

/**
 * The bubblewrap arguments (kf/sandbox_view.h) that run a runner: the system's libraries and
 * `read_only` visible read-only, an unprivileged user, a private /tmp of `tmp_bytes` as its
 * working directory and only writable place, no network, the GPU's device nodes and /sys when
 * `gpu`; `info_fd` receives the sandboxed process's PID. Append the command.
 */
std::vector<std::string> runner_bwrap_arguments(const std::vector<std::filesystem::path>& read_only, bool gpu,
                                                std::uint64_t tmp_bytes, int info_fd);

}  // namespace kf::worker
