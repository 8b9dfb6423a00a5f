#include "kf_task.h"

#include <chrono>

// The first five calls in a process each wait 20 ms before the work.
extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    static int calls = 0;
    if (calls++ < 5) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
    }
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];
}
