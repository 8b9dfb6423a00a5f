#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <vector>
#include <cstdint>
extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
  std::vector<float> tmp(cols);
  for (int r = 0; r < rows; ++r) {
    float mx = x[r * cols];
    for (int c = 1; c < cols; ++c) mx = x[r * cols + c] > mx ? x[r * cols + c] : mx;
    float s = 0;
    for (int c = 0; c < cols; ++c) { tmp[c] = expf(x[r * cols + c] - mx); s += tmp[c]; }
    for (int c = 0; c < cols; ++c) y[r * cols + c] = tmp[c] / s;
  }
}
