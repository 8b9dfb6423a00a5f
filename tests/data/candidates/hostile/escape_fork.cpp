// Starts children with raw system calls (fork, and clone with a new session) that would
// outlive the evaluation under the name "kf-escapee".
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

extern "C" void kf_solve(const float*, float*, int) {
    if (syscall(SYS_fork) == 0) linger();
    if (syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) == 0) linger();
    if (syscall(SYS_vfork) == 0) _exit(0);
}
