#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <vector>
#include <cstdint>
extern "C" void kf_solve(const float* x, float* y, int B, int L, int O) {
  const int K = 3, S = 2, P = 1;
  for (int b = 0; b < B; ++b)
    for (int o = 0; o < O; ++o) {
      float m = -INFINITY;
      for (int k = 0; k < K; ++k) {
        int p = o * S + k - P;
        if (p >= 0 && p < L) m = std::max(m, x[b * L + p]);
      }
      y[b * O + o] = m;
    }
}
