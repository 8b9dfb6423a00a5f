#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void kf_solve(const double* x, double* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = std::exp(-x[i] * x[i]) * 0.5;
}
