#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    float m = std::numeric_limits<float>::max();
    for (int c = 0; c < cols; ++c) m = std::min(m, x[r * cols + c]);
    y[r] = m;
  }
}
