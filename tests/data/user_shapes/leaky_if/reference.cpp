#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
extern "C" void kf_solve(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    if (v < 0) v = 0.01f * v;
    y[i] = v;
  }
}
