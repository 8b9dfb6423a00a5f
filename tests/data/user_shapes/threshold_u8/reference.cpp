#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
extern "C" void kf_solve(const float* x, uint8_t* y, int n) {
  for (unsigned i = 0; i < (unsigned)n; ++i) y[i] = x[i] > 0.5f ? 1 : 0;
}
