// Tries to leave the evaluation from the worker's process: children by fork, by clone with a
// new session and by vfork, and a shell by execve, each named "kf-escapee"; computes nothing.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kf_task.h"

static void linger() {
    prctl(PR_SET_NAME, "kf-escapee");
    setsid();
    for (int i = 0; i < 600; ++i) usleep(100000);
    _exit(0);
}

extern "C" void kf_solve(const float*, const float*, float*, int, float, cudaStream_t) {
    if (syscall(SYS_fork) == 0) linger();
    if (syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) == 0) linger();
    if (syscall(SYS_vfork) == 0) _exit(0);
    char sh[] = "/bin/sh", c[] = "-c", cmd[] = "exec -a kf-escapee sleep 60 &", *argv[] = {sh, c, cmd, nullptr};
    syscall(SYS_execve, sh, argv, environ);
}
