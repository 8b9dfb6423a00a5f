// Times the steps of making a CUDA context in a fresh process, as a runner does, and how
// much such a context stalls another process's driver calls.
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
static long long mono_ns() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
__global__ void k1(float* p) { p[threadIdx.x] += 1; }
__global__ void k2(float* p, int n) { for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = p[i] * 2 + 1; }
__global__ void spin(long long cycles) { long long t = clock64(); while (clock64() - t < cycles) {} }
__global__ void inc(unsigned* p) { *p += 1; }
__global__ void bad(float* p) { p[threadIdx.x] = 1; }
// Maps a shareable allocation into the current context; returns its device address or 0.
static CUdeviceptr map_here(CUmemGenericAllocationHandle h, size_t size) {
    CUdeviceptr p = 0;
    if (cuMemAddressReserve(&p, size, 0, 0, 0) != CUDA_SUCCESS) return 0;
    if (cuMemMap(p, size, 0, h, 0) != CUDA_SUCCESS) return 0;
    CUmemAccessDesc a{};
    a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.location.id = 0;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return cuMemSetAccess(p, size, &a, 1) == CUDA_SUCCESS ? p : 0;
}
int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "probe";
    if (!strcmp(mode, "share")) {  // as the judge: memory made here, used by a child (an MPS client if argv[2] names a pipe folder)
        cudaFree(0);
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        size_t g = 0;
        cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        CUmemGenericAllocationHandle h;
        CUresult r = cuMemCreate(&h, g, &prop, 0);
        CUdeviceptr p = r == CUDA_SUCCESS ? map_here(h, g) : 0;
        int fd = -1;
        if (p) {
            cuMemsetD32(p, 41, 1);
            cuCtxSynchronize();
            r = cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        }
        if (!p || fd < 0) { printf("share value -1 child_rc -1 err cannot make or export (%d)\n", int(r)); return 0; }
        fcntl(fd, F_SETFD, 0);
        const pid_t pid = fork();
        if (pid == 0) {
            if (argc > 2 && *argv[2]) setenv("CUDA_MPS_PIPE_DIRECTORY", argv[2], 1);
            else unsetenv("CUDA_MPS_PIPE_DIRECTORY");
            const std::string f = std::to_string(fd), gs = std::to_string(g);
            execl("/proc/self/exe", argv[0], "import", f.c_str(), gs.c_str(), (char*)nullptr);
            _exit(127);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        unsigned v = 0;
        cuMemcpyDtoH(&v, p, 4);
        printf("share value %u child_rc %d err %s\n", v, WIFEXITED(st) ? WEXITSTATUS(st) : -1, cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    if (!strcmp(mode, "import")) {  // the child of "share": adds 1 to the shared word; exit status 0 when it could
        cudaFree(0);
        CUmemGenericAllocationHandle h;
        const int fd = atoi(argv[2]);
        const size_t g = strtoull(argv[3], nullptr, 10);
        CUresult r = cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        if (r != CUDA_SUCCESS) { fprintf(stderr, "import failed %d\n", int(r)); return 3; }
        CUdeviceptr p = map_here(h, g);
        if (!p) { fprintf(stderr, "map failed\n"); return 4; }
        inc<<<1, 1>>>(reinterpret_cast<unsigned*>(p));
        return cudaDeviceSynchronize() == cudaSuccess ? 0 : 5;
    }
    if (!strcmp(mode, "load")) {
        double secs = atof(argv[2]);
        cudaFree(0);
        auto t0 = clk::now();
        while (ms(t0, clk::now()) < secs * 1000) { spin<<<132, 128>>>(200000); cudaDeviceSynchronize(); }
        printf("load err %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    if (!strcmp(mode, "calls")) {  // judge-like: memset + kernel + sync, iteration wall times
        // The judge's synchronisations spin (the driver's automatic choice with a processor
        // to spare); "block" as a third argument makes them block, as a runner's do.
        double secs = atof(argv[2]);
        int n = 1 << 20;
        if (argc > 3 && !strcmp(argv[3], "block")) cudaInitDevice(0, cudaDeviceScheduleBlockingSync, cudaInitDeviceFlagsAreValid);
        cudaFree(0);
        float* d; cudaMalloc(&d, n * 4);
        cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        std::vector<double> v; v.reserve(1 << 20);
        for (int i = 0; i < 50; ++i) { cudaMemsetAsync(d, 0, n * 4, s); k2<<<264, 256, 0, s>>>(d, n); cudaStreamSynchronize(s); }
        auto t0 = clk::now();
        while (ms(t0, clk::now()) < secs * 1000) {
            auto a = clk::now();
            cudaMemsetAsync(d, 0, n * 4, s); k2<<<264, 256, 0, s>>>(d, n); cudaStreamSynchronize(s);
            v.push_back(ms(a, clk::now()));
        }
        std::vector<double> w = v; std::sort(w.begin(), w.end());
        size_t m = w.size(); double p50 = w[m / 2], excess = 0;
        for (double x : v) excess += std::max(0.0, x - p50);
        printf("calls n %zu p50 %.4f p90 %.4f p99 %.4f max %.2f excess_ms %.1f err %s\n", m, p50, w[m * 9 / 10], w[m * 99 / 100], w[m - 1], excess,
               cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    if (!strcmp(mode, "fault")) {
        cudaFree(0);
        bad<<<1, 32>>>(reinterpret_cast<float*>(0x10));
        cudaError_t e = cudaDeviceSynchronize();
        printf("fault err %s\n", cudaGetErrorString(e));
        return 0;
    }
    auto t0 = clk::now();
    cuInit(0);
    auto t1 = clk::now();
    CUcontext c = nullptr;
    if (!strcmp(mode, "drv")) {
        CUdevice dev; cuDeviceGet(&dev, 0);
        CUctxCreateParams prm{}; 
        cuCtxCreate(&c, &prm, CU_CTX_SCHED_BLOCKING_SYNC, dev);
    } else {
        cudaInitDevice(0, cudaDeviceScheduleBlockingSync, cudaInitDeviceFlagsAreValid);
        cudaSetDevice(0);
        cudaFree(0);
    }
    auto t2 = clk::now();
    float* p = nullptr;
    if (c) { CUdeviceptr q; cuMemAlloc(&q, 256); p = reinterpret_cast<float*>(q); cuCtxSynchronize(); }
    else { cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); cudaEvent_t e; cudaEventCreate(&e); cudaMalloc(&p, 256); cudaDeviceSynchronize(); }
    auto t3 = clk::now();
    if (!c) { k1<<<1, 32>>>(p); cudaDeviceSynchronize(); }
    auto t4 = clk::now();
    size_t fr = 0, tot = 0;
    if (c) cuMemGetInfo(&fr, &tot); else cudaMemGetInfo(&fr, &tot);
    printf("init %.1f ctx %.1f objs %.1f firstlaunch %.1f free_mib %.0f end_ns %lld err %s\n", ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4),
           fr / 1048576.0, mono_ns(), cudaGetErrorString(cudaGetLastError()));
    fflush(stdout);
    return 0;
}
