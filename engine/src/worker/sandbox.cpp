#include "sandbox.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kf/process.h"
#include "kf/sandbox_view.h"

namespace kf::worker {

namespace {

void set_limit(int resource, std::uint64_t value, const char* name, Confinement& c) {
    if (value == 0) return;
    rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    if (setrlimit(resource, &r) != 0) c.warnings.push_back(std::string("cannot set ") + name + ": " + std::strerror(errno));
}

/** Adds `rule`, recording a warning when libseccomp refuses it (an unknown syscall on this arch). */
void add_rule(scmp_filter_ctx ctx, std::uint32_t action, int syscall, const char* name, Confinement& c,
              unsigned count = 0, scmp_arg_cmp cmp = {}) {
    int rc = count == 0 ? seccomp_rule_add(ctx, action, syscall, 0) : seccomp_rule_add(ctx, action, syscall, 1, cmp);
    if (rc != 0) c.warnings.push_back(std::string("seccomp rule for ") + name + ": " + std::strerror(-rc));
}

}  // namespace

Confinement confine_self(const SandboxLimits& limits, bool gpu) {
    Confinement c;
    rlimit core{0, 0};
    setrlimit(RLIMIT_CORE, &core);
    if (!gpu) set_limit(RLIMIT_AS, limits.memory_bytes, "the memory limit", c);
    set_limit(RLIMIT_FSIZE, limits.file_bytes, "the file size limit", c);
    set_limit(RLIMIT_NOFILE, limits.open_files, "the open file limit", c);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // no /proc/self/mem or ptrace from outside either

    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        c.warnings.push_back("seccomp is unavailable: new processes and signals are not blocked");
        return c;
    }
    const std::uint32_t deny = SCMP_ACT_ERRNO(EPERM);
    const auto self = static_cast<scmp_datum_t>(getpid());
#define KF_DENY(name) add_rule(ctx, deny, SCMP_SYS(name), #name, c)
    // New processes: only threads may be created. An attempt ends the process with SIGSYS
    // (which nothing in it can catch), so that the judge sees it and names it (spawned_work)
    // rather than a candidate quietly falling back to working in its own process.
    const std::uint32_t end = SCMP_ACT_KILL_PROCESS;
    add_rule(ctx, end, SCMP_SYS(fork), "fork", c);
    add_rule(ctx, end, SCMP_SYS(vfork), "vfork", c);
    add_rule(ctx, end, SCMP_SYS(execve), "execve", c);
    add_rule(ctx, end, SCMP_SYS(execveat), "execveat", c);
    add_rule(ctx, end, SCMP_SYS(clone), "clone", c, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3", c);
    // Signals reach this process only.
    add_rule(ctx, deny, SCMP_SYS(kill), "kill", c, 1, SCMP_A0(SCMP_CMP_NE, self));
    add_rule(ctx, deny, SCMP_SYS(tgkill), "tgkill", c, 1, SCMP_A0(SCMP_CMP_NE, self));
    add_rule(ctx, deny, SCMP_SYS(rt_sigqueueinfo), "rt_sigqueueinfo", c, 1, SCMP_A0(SCMP_CMP_NE, self));
    add_rule(ctx, deny, SCMP_SYS(rt_tgsigqueueinfo), "rt_tgsigqueueinfo", c, 1, SCMP_A0(SCMP_CMP_NE, self));
    KF_DENY(tkill);
    KF_DENY(pidfd_open);
    KF_DENY(pidfd_send_signal);
    KF_DENY(pidfd_getfd);
    // Other processes' memory, and the kernel's attack surface a kernel needs none of.
    KF_DENY(ptrace);
    KF_DENY(process_vm_readv);
    KF_DENY(process_vm_writev);
    KF_DENY(kcmp);
    KF_DENY(unshare);
    KF_DENY(setns);
    KF_DENY(mount);
    KF_DENY(umount2);
    KF_DENY(pivot_root);
    KF_DENY(chroot);
    KF_DENY(bpf);
    KF_DENY(keyctl);
    KF_DENY(add_key);
    KF_DENY(request_key);
    KF_DENY(io_uring_setup);
    KF_DENY(userfaultfd);
    if (!gpu) KF_DENY(perf_event_open);
    // No network: the sockets it was given are its only channels.
    add_rule(ctx, deny, SCMP_SYS(socket), "socket", c, 1, SCMP_A0(SCMP_CMP_EQ, AF_INET));
    add_rule(ctx, deny, SCMP_SYS(socket), "socket", c, 1, SCMP_A0(SCMP_CMP_EQ, AF_INET6));
    add_rule(ctx, deny, SCMP_SYS(socket), "socket", c, 1, SCMP_A0(SCMP_CMP_EQ, AF_PACKET));
#undef KF_DENY
    int rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) c.warnings.push_back(std::string("seccomp filter not loaded: ") + std::strerror(-rc));
    else c.seccomp = true;
    return c;
}

std::vector<std::string> runner_bwrap_arguments(const std::vector<std::filesystem::path>& read_only, bool gpu,
                                                std::uint64_t tmp_bytes, int info_fd) {
    namespace fs = std::filesystem;
    SandboxView view;
    view.read_only = system_read_only_paths();
    view.read_only.insert(view.read_only.end(), read_only.begin(), read_only.end());
    view.unprivileged = true;
    view.tmp_bytes = tmp_bytes;
    view.info_fd = info_fd;
    if (gpu) {
        view.read_only.insert(view.read_only.end(), {"/sys", "/etc/nvidia"});
        std::error_code ec;
        for (const auto& e : fs::directory_iterator("/dev", ec))
            if (e.path().filename().string().rfind("nvidia", 0) == 0) view.devices.push_back(e.path());
    }
    return bwrap_prefix(view);
}

}  // namespace kf::worker
