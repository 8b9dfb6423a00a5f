// Correct only in a process no other library has been loaded into by this file before: its
// constructor marks the process (an environment variable) and computes wrong where it finds
// the mark. A runner that served two candidates would carry the mark from one to the next.
#include <cstdlib>

#include "kf_task.h"

static bool g_reused = false;

__attribute__((constructor)) static void mark_process() {
    g_reused = std::getenv("KF_TEST_STATEFUL_MARK") != nullptr;
    setenv("KF_TEST_STATEFUL_MARK", "1", 1);
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i] + (g_reused ? 1.0f : 0.0f);
}
