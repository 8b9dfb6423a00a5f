// Slows whatever shares its process down from a constructor (one OpenMP thread, lowest
// priority), and itself asks for every core explicitly: a reference timed in the same
// process would look slow.
#include <omp.h>
#include <sys/resource.h>

#include <cmath>

#include "kf_task.h"

__attribute__((constructor)) static void sabotage() {
    omp_set_num_threads(1);
    setpriority(PRIO_PROCESS, 0, 19);
}

extern "C" void kf_solve(const float* x, float* y, int n) {
#pragma omp parallel for schedule(static) num_threads(omp_get_num_procs())
    for (int i = 0; i < n; ++i) {
        float s = 0;
        for (int k = 1; k <= 32; ++k) s += std::sin(static_cast<float>(k) * x[i]) / static_cast<float>(k);
        y[i] = s;
    }
}
