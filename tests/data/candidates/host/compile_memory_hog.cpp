// Each macro doubles the one before: X30 expands to 2^30 tokens, which the preprocessor holds
// in memory (gigabytes) before the compiler sees a line. Only a memory limit stops it early.
#define X0 1 +
#define X1 X0 X0
#define X2 X1 X1
#define X3 X2 X2
#define X4 X3 X3
#define X5 X4 X4
#define X6 X5 X5
#define X7 X6 X6
#define X8 X7 X7
#define X9 X8 X8
#define X10 X9 X9
#define X11 X10 X10
#define X12 X11 X11
#define X13 X12 X12
#define X14 X13 X13
#define X15 X14 X14
#define X16 X15 X15
#define X17 X16 X16
#define X18 X17 X17
#define X19 X18 X18
#define X20 X19 X19
#define X21 X20 X20
#define X22 X21 X21
#define X23 X22 X22
#define X24 X23 X23
#define X25 X24 X24
#define X26 X25 X25
#define X27 X26 X26
#define X28 X27 X27
#define X29 X28 X28
#define X30 X29 X29

static const int kf_huge = X30 1;

extern "C" void kf_solve(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i] + static_cast<float>(kf_huge & 0);
}
