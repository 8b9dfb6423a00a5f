// Allocates and touches 256 MiB on every call and never frees it.
#include <cstdlib>
#include <cstring>

#include "kf_task.h"

extern "C" void kf_solve(const float*, float* y, int n) {
    auto* p = static_cast<char*>(std::malloc(256u << 20));
    std::memset(p, 1, 256u << 20);
    for (int i = 0; i < n; ++i) y[i] = p[i];
}
