#include "kf_task.h"

// Naive reference: one cell after another, the nine neighbours added in a double loop.
extern "C" void kf_solve(const float* img, float* out, int h, int w) {
    for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) {
            const long long k = (long long)i * w + j;
            if (i == 0 || j == 0 || i == h - 1 || j == w - 1) {
                out[k] = 0.5f * img[k];
                continue;
            }
            float s = 0.0f;
            for (int di = -1; di <= 1; ++di)
                for (int dj = -1; dj <= 1; ++dj) s += img[k + (long long)di * w + dj];
            out[k] = s / 9.0f;
        }
}
