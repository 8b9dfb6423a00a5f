#include "kf_task.h"
extern "C" void kf_solve(const float* x, const int* idx, const float* w, float* y, int rows, int cols, int k) {
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < k; j++)
            y[r * k + j] = x[r * cols + idx[j]] * w[r];
}
