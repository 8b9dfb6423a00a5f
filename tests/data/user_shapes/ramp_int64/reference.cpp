#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
extern "C" void kf_solve(const float* x, float* y, int n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * (float)i / (float)n;
}
