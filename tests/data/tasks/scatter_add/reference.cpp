#include "kf_task.h"

extern "C" void kf_solve(const float* src, const int* idx, float* out, int n, int d, int buckets) {
    for (long long k = 0; k < (long long)buckets * d; ++k) out[k] = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int b = idx[i];
        for (int k = 0; k < d; ++k) out[(long long)b * d + k] += src[(long long)i * d + k];
    }
}
