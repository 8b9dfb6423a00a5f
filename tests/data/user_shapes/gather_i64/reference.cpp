#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void kf_solve(const float* table, const int64_t* idx, float* out, int n, int d, int V) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < d; ++k) out[i * d + k] = table[idx[i] * d + k];
}
