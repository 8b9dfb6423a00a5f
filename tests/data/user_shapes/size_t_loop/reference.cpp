#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
extern "C" void kf_solve(const float* x, float* y, int n) {
  for (size_t i = 0; i < (size_t)n; ++i) y[i] = std::max(x[i], 0.f) * 2.f;
}
