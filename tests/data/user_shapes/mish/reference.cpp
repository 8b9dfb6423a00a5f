#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
extern "C" void kf_solve(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[i] * std::tanh(std::log1p(std::exp(x[i])));
}
