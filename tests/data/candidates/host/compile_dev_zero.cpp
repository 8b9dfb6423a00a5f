// Reads /dev/zero as a header: without limits the compiler grows until the machine runs out
// of memory. It must be refused before it is compiled.
#include "/dev/zero"

extern "C" void kf_solve(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i];
}
