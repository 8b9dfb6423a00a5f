#include "kf_task.h"

// Naive reference: walks the output in order, reading the input down its columns.
extern "C" void kf_solve(const float* x, float* y, int rows, int cols, float alpha) {
    for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) y[(long long)c * rows + r] = alpha * x[(long long)r * cols + c];
}
