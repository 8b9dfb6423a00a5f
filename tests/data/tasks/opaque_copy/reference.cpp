#include "kf_task.h"

extern "C" void kf_solve(const float* x, float* y, int n) { std::memcpy(y, x, sizeof(float) * static_cast<std::size_t>(n)); }
