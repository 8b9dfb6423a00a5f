#include "kf_task.h"
extern "C" void kf_solve(const float* x, float* y, int B, int L, int O) {
    for (int b = 0; b < B; ++b)
        for (int o = 0; o < O; ++o) {
            float s = 0.f;
            int cnt = 0;
            for (int k = 0; k < 3; ++k) {
                int i = 2 * o + k;
                s += i < L ? x[b * L + i] : 0.f;
                cnt += i < L ? 1 : 0;
            }
            y[b * O + o] = s / cnt;
        }
}
