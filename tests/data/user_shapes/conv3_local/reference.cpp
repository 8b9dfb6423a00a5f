#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <vector>
#include <cstdint>
extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
  if (rows <= 0) return;
  const float w[3] = {0.25f, 0.5f, 0.25f};
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float acc = 0.f;
      for (int k = -1; k <= 1; ++k) {
        int cc = std::min(std::max(c + k, 0), cols - 1);
        acc += w[k + 1] * x[r * cols + cc];
      }
      y[r * cols + c] = acc;
    }
}
