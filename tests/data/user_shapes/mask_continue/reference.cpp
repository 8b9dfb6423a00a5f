#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
extern "C" void kf_solve(const float* x, const int* m, float* y, int n) {
  for (int i = 0; i < n; ++i) {
    if (m[i] == 0) { y[i] = 0.f; continue; }
    y[i] = x[i] * 2.f;
  }
}
