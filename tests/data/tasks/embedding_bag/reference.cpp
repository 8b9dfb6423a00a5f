#include "kf_task.h"

#include <cstddef>

// Naive reference: one bag after another, its row of the output zeroed, then each looked-up row added.
extern "C" void kf_solve(const float* table, const int* idx, float* out, int B, int L, int d, int vocab) {
    (void)vocab;
    for (int b = 0; b < B; ++b) {
        float* o = out + (size_t)b * d;
        for (int k = 0; k < d; ++k) o[k] = 0.0f;
        for (int j = 0; j < L; ++j) {
            const float* row = table + (size_t)idx[b * L + j] * d;
            for (int k = 0; k < d; ++k) o[k] += row[k];
        }
    }
}
