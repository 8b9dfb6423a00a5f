#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
extern "C" void kf_solve(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) {
    const float v = std::log(x[i]);
    y[i] = std::isnan(v) || std::isinf(v) ? 0.0f : v;
  }
}
