#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <vector>
#include <cstdint>
extern "C" void kf_solve(const float* x, const int* perm, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      y[r * cols + c] = x[perm[r] * cols + c];
}
