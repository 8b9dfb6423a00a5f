// Correct, and starts a thread of its own through a C library timer (no thread-creation
// symbol in the candidate) that stays alive: the runner's thread count grows.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "kf_task.h"

static void linger(union sigval) {
    for (;;) pause();
}

__global__ void scale_add_threaded(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    static bool started = false;
    if (!started) {
        started = true;
        sigevent ev{};
        ev.sigev_notify = SIGEV_THREAD;
        ev.sigev_notify_function = linger;
        timer_t t;
        if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) {
            itimerspec when{};
            when.it_value.tv_nsec = 1;
            timer_settime(t, 0, &when, nullptr);
        }
    }
    if (n <= 0) return;
    int grid = (n + 255) / 256;
    if (grid > 4096) grid = 4096;
    scale_add_threaded<<<grid, 256, 0, stream>>>(x, y, z, n, alpha);
}
