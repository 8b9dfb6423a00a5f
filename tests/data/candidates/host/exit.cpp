// Ends the whole process.
#include "kf_task.h"

#include <cstdlib>

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    (void)x; (void)y; (void)z; (void)n; (void)alpha;
    std::exit(3);
}
