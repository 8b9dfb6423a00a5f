// Ends the whole process.
#include "kf_task.h"

#include <cstdlib>

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    (void)x; (void)y; (void)z; (void)n; (void)alpha; (void)stream;
    std::exit(3);
}
