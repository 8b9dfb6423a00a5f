#include "kf_task.h"

extern "C" void kf_solve(const float* x, const float* edges, int* bucket, int n, int nedges) {
    for (int i = 0; i < n; ++i) {
        const float v = x[i];
        int lo = 0, hi = nedges;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (edges[mid] <= v)
                lo = mid + 1;
            else
                hi = mid;
        }
        bucket[i] = lo;
    }
}
