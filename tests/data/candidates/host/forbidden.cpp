// Loads a library at run time (dlopen), which candidates may not do.
#include "kf_task.h"

#include <dlfcn.h>

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    void* libm = dlopen("libm.so.6", RTLD_NOW);
    (void)libm;
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];
}
