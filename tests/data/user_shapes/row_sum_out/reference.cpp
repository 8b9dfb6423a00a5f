#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    y[r] = 0;
    for (int c = 0; c < cols; ++c) y[r] += std::fabs(x[r * cols + c]);
  }
}
