#pragma once
/**
 * What an untrusted child process may see of the file system, and the bubblewrap (`bwrap`)
 * command prefix that shows it exactly that: the listed paths read-only, one scratch folder
 * read-write, a minimal /dev (plus the device nodes named), a private /tmp, its own /proc,
 * no network, no other file of the machine. Used for compilers (docs/compile.md) and
 * reusable for any child that runs candidate-controlled work.
 */
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kf {

/** A description of the file-system view of a sandboxed process. Paths are absolute. */
struct SandboxView {
    /**
     * Bound read-only at the same path. A path that does not exist is left out; a symbolic
     * link (e.g. /bin -> usr/bin, /usr/local/cuda -> cuda-13.0) is recreated as the same link,
     * and its target is bound too.
     */
    std::vector<std::filesystem::path> read_only;
    /** Bound read-write at the same path, and the working directory; empty: none. */
    std::filesystem::path scratch;
    /** Device nodes bound in besides the minimal /dev (null, zero, full, random, urandom, tty), e.g. /dev/nvidia0. */
    std::vector<std::filesystem::path> devices;
    /** Keep the host's network; the default is none (--unshare-net). */
    bool network = false;
    /** Size limit of the private /tmp in bytes (0: tmpfs's default). */
    std::uint64_t tmp_bytes = 0;
    /** Run as an unprivileged user (uid/gid 65534 in a new user namespace, no capabilities). */
    bool unprivileged = false;
    /** A descriptor bwrap writes its JSON to, with the sandboxed process's PID (--info-fd). */
    int info_fd = -1;
};

/** The read-only system paths every compiler and loader needs: /usr, /lib*, /bin, /sbin, the dynamic loader's configuration and /etc/alternatives. */
std::vector<std::filesystem::path> system_read_only_paths();

/**
 * The argument list that runs a command inside `view`: {"bwrap", options..., "--"}; append
 * the command's argv. Always: --die-with-parent, --new-session, --unshare-all (no network
 * unless view.network), --dev /dev, --proc /proc, --tmpfs /tmp, TMPDIR=/tmp, and --chdir to
 * the scratch folder when there is one. The program is `bwrap_program()`.
 */
std::vector<std::string> bwrap_prefix(const SandboxView& view);

/** "bwrap" found on PATH (or $KF_BWRAP when set); "" when there is none. */
std::string bwrap_program();

/**
 * Whether bwrap can run here: found, and `bwrap --ro-bind / / true` succeeds (user
 * namespaces may be forbidden, e.g. in some containers). Probed once per bwrap program; `why`
 * receives the reason when it cannot. KF_SANDBOX=off answers false.
 */
bool bwrap_usable(std::string* why = nullptr);

}  // namespace kf
