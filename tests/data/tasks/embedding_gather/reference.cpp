#include "kf_task.h"

// One looked-up row after another.
extern "C" void kf_solve(const float* table, const int* idx, float* out, int n, int d, int vocab) {
    (void)vocab;
    for (int i = 0; i < n; ++i) {
        const int row = idx[i];
        for (int k = 0; k < d; ++k) out[(long long)i * d + k] = table[(long long)row * d + k];
    }
}
