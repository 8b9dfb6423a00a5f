// Hides the file name in a macro, split by a line continuation and a comment.
#define KF_SECRET "/etc/sha\
dow"
#/* a comment */include KF_SECRET

extern "C" void kf_solve(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i];
}
