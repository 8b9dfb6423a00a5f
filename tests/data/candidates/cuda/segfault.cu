// Host-side crash inside kf_solve: a write through a null pointer.
#include "kf_task.h"

static int* volatile kf_null_pointer = nullptr;

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    (void)x; (void)y; (void)z; (void)n; (void)alpha; (void)stream;
    *kf_null_pointer = 42;
}
