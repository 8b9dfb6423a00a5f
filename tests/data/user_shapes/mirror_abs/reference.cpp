#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
extern "C" void kf_solve(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[std::abs(n / 2 - i) % n] * 0.5f;
}
