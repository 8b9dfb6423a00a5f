#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      y[r * cols + c] = c <= r ? x[r * cols + c] * 0.125f : -INFINITY;
}
