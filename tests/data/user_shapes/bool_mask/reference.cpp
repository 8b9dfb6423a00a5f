#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void kf_solve(const float* x, const bool* m, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = m[i] ? std::sqrt(std::fabs(x[i])) : x[i];
}
