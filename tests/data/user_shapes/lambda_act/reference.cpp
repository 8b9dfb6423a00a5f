#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void kf_solve(const float* x, float* y, int n) {
  auto act = [](float v) { return v > 0 ? v : 0.1f * v; };
  for (int i = 0; i < n; ++i) y[i] = act(x[i]) * std::tanh(x[i]);
}
