#include "kf_task.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
extern "C" void kf_solve(const float* a, const float* v, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    double acc = 0;
    for (int k = 0; k < cols; ++k) acc += (double)a[r * cols + k] * v[k];
    y[r] = (float)acc;
  }
}
