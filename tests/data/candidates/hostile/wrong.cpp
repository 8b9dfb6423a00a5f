// Honestly wrong: must stay incorrect whatever ran before it.
#include "kf_task.h"

extern "C" void kf_solve(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i];
}
