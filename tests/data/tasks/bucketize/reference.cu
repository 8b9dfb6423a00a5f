#include "kf_task.h"

// Naive reference: one thread per block of 256 values, each searched in turn.
__global__ void bucketize_reference(const float* x, const float* edges, int* bucket, int n, int nedges) {
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 256;
    for (long long i = first; i < first + 256 && i < n; ++i) {
        const float v = x[i];
        int lo = 0, hi = nedges;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (edges[mid] <= v) lo = mid + 1;
            else hi = mid;
        }
        bucket[i] = lo;
    }
}

extern "C" void kf_solve(const float* x, const float* edges, int* bucket, int n, int nedges, cudaStream_t stream) {
    const long long threads = ((long long)n + 255) / 256;
    bucketize_reference<<<(unsigned)((threads + 127) / 128), 128, 0, stream>>>(x, edges, bucket, n, nedges);
}
