// The host backend's device: candidates run on the CPU cores, memory is plain host memory.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#endif

#include "device.h"
#include "rng.h"
#include "shared_arena.h"

namespace kf::worker {

namespace {

int draw_kind(const std::string& dist) {
    if (dist == "normal") return kNormal;
    if (dist == "randint") return kRandInt;
    if (dist == "bernoulli") return kBernoulli;
    if (dist == "constant") return kConstant;
    return kUniform;
}

double load_as_double(const void* base, DType t, std::int64_t i) {
    switch (t) {
    case DType::F32: return static_cast<const float*>(base)[i];
    case DType::F64: return static_cast<const double*>(base)[i];
    case DType::F16: return half_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::BF16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::I32: return static_cast<const std::int32_t*>(base)[i];
    case DType::I64: return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case DType::U8: return static_cast<const std::uint8_t*>(base)[i];
    case DType::Bool: return static_cast<const std::uint8_t*>(base)[i] != 0 ? 1.0 : 0.0;
    }
    return 0;
}

void store_from_double(void* base, DType t, std::int64_t i, double v) {
    switch (t) {
    case DType::F32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case DType::F64: static_cast<double*>(base)[i] = v; break;
    case DType::F16: static_cast<std::uint16_t*>(base)[i] = float_to_half_bits(static_cast<float>(v)); break;
    case DType::BF16: static_cast<std::uint16_t*>(base)[i] = float_to_bf16_bits(static_cast<float>(v)); break;
    case DType::I32: static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(std::llround(v)); break;
    case DType::I64: static_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(std::llround(v)); break;
    case DType::U8: static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(std::llround(v)); break;
    case DType::Bool: static_cast<std::uint8_t*>(base)[i] = v != 0 ? 1 : 0; break;
    }
}

std::string cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(colon + 2);
        }
    return "CPU";
}

std::uint64_t last_level_cache_bytes() {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) return static_cast<std::uint64_t>(l3);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<std::uint64_t>(l2) : 32ull << 20;
}

#if defined(__x86_64__) && defined(__GNUC__)
/** 16 chains of 16-lane FMAs; returns a value that depends on every chain. */
__attribute__((target("avx512f"))) double fma_chains_avx512(long iters, double* flops) {
    __m512 acc[16];
    const __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
    for (int k = 0; k < 16; ++k) acc[k] = _mm512_set1_ps(1.0f + static_cast<float>(k));
    for (long i = 0; i < iters; ++i)
        for (int k = 0; k < 16; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
    __m512 t = acc[0];
    for (int k = 1; k < 16; ++k) t = _mm512_add_ps(t, acc[k]);
    float lanes[16];
    _mm512_storeu_ps(lanes, t);
    *flops = 2.0 * 16 * 16 * static_cast<double>(iters);
    return lanes[0] + lanes[15];
}

/** 16 chains of 8-lane FMAs. */
__attribute__((target("avx2,fma"))) double fma_chains_avx2(long iters, double* flops) {
    __m256 acc[16];
    const __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < 16; ++k) acc[k] = _mm256_set1_ps(1.0f + static_cast<float>(k));
    for (long i = 0; i < iters; ++i)
        for (int k = 0; k < 16; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
    __m256 t = acc[0];
    for (int k = 1; k < 16; ++k) t = _mm256_add_ps(t, acc[k]);
    float lanes[8];
    _mm256_storeu_ps(lanes, t);
    *flops = 2.0 * 16 * 8 * static_cast<double>(iters);
    return lanes[0] + lanes[7];
}
#endif

/** 32 scalar multiply-add chains (the compiler may vectorise them). */
double fma_chains_scalar(long iters, double* flops) {
    float acc[32];
    for (int k = 0; k < 32; ++k) acc[k] = 1.0f + static_cast<float>(k);
    for (long i = 0; i < iters; ++i)
        for (float& x : acc) x = x * 0.9999999f + 1e-7f;
    double s = 0;
    for (float x : acc) s += x;
    *flops = 2.0 * 32 * static_cast<double>(iters);
    return s;
}

const char* fma_kind() {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) return "AVX-512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2";
#endif
    return "scalar";
}

/** One thread's multiply-add chains in the CPU's widest vector FMA; the flops done in *flops. */
double fma_chains(long iters, double* flops) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) return fma_chains_avx512(iters, flops);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return fma_chains_avx2(iters, flops);
#endif
    return fma_chains_scalar(iters * 4, flops);
}

/** The best time of `runs` copies of n bytes, split over every core or on one thread;
 *  `before` runs untimed before each. A best, since other processes on the machine only
 *  ever make a run slower. */
double best_copy_ms(std::size_t n, int runs, bool parallel, const std::function<void()>& before) {
    std::vector<char> a(n, 1), b(n, 0);
    double best_ms = 0;
    for (int r = 0; r < runs; ++r) {
        before();
        auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel if (parallel)
        {
            int threads = 1, id = 0;
#ifdef _OPENMP
            threads = omp_get_num_threads();
            id = omp_get_thread_num();
#endif
            std::size_t chunk = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
            std::size_t begin = std::min(n, chunk * static_cast<std::size_t>(id));
            std::memcpy(b.data() + begin, a.data() + begin, std::min(n - begin, chunk));
        }
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r == 0 || ms < best_ms) best_ms = ms;
        a[static_cast<std::size_t>(r)] = b[static_cast<std::size_t>(r) + 1];
    }
    return best_ms;
}

class HostDevice final : public Device {
public:
    // Twice the last-level cache, capped: virtual machines often report the whole socket's L3,
    // while a core only ever sees its own complex's share.
    HostDevice() : flush_(std::min<std::uint64_t>(2 * last_level_cache_bytes(), 64ull << 20)) {}

    DeviceInfo info() override {
        DeviceInfo d;
        d.backend = "host";
        d.name = cpu_name();
        d.arch = "native";
        d.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        d.memory_bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
        d.l2_bytes = last_level_cache_bytes();
        d.uuid = "host-" + std::to_string(std::hash<std::string>{}(d.name + std::to_string(d.sm_count)));
        return d;
    }

    Peaks measure_peaks() override {
        Peaks p;
        // Copy bandwidth: every core copies its share of a buffer well beyond the last-level
        // cache, bytes read + written; the best of several runs, since a peak is an upper
        // bound and other processes on the machine only ever make a run slower.
        std::size_t n = 256ull << 20;
        double best_ms = best_copy_ms(n, 7, true, [] {});
        p.bandwidth_gbps = 2.0 * static_cast<double>(n) / (best_ms * 1e6);
        // Multiply-add rate: 16 independent chains per thread on every core, in the widest
        // vector FMA the CPU has (candidates are built with -march=native, so they may use it).
        // The best of three runs: other processes only ever make a run slower.
        const long iters = 1'000'000;
        double best_s = 0, flops_per_thread = 0, sink = 0;
        int threads = 1;
        for (int run = 0; run < 3; ++run) {
            auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : sink)
            {
#ifdef _OPENMP
#pragma omp single
                threads = omp_get_num_threads();
#endif
                double flops = 0;
                sink += fma_chains(iters, &flops);
#pragma omp single
                flops_per_thread = flops;
            }
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (run == 0 || s < best_s) best_s = s;
        }
        volatile double keep = sink;
        (void)keep;
        p.fp32_gflops = flops_per_thread * threads / best_s / 1e9;
        p.method = std::string("memcpy of 256 MiB split over all cores (read + write), best of 7; 16 chains of ") + fma_kind() +
                   " float multiply-adds per core on all cores, best of 3";
        return p;
    }

    Buffer alloc(std::size_t bytes) override {
        void* p = nullptr;
        if (posix_memalign(&p, 64, bytes + kCanaryBytes) != 0 || !p)
            throw DeviceFault("out of host memory allocating " + std::to_string(bytes) + " bytes", false);
        std::memset(static_cast<char*>(p) + bytes, kCanaryByte, kCanaryBytes);
        return Buffer{p, bytes};
    }

    void release(Buffer& b) override {
        std::free(b.ptr);
        b = {};
    }

    std::unique_ptr<Arena> new_arena(std::size_t capacity) override { return std::make_unique<SharedArena>(capacity); }

    void fill_random(const Buffer& b, DType dtype, std::int64_t count, const InitSpec& init, std::uint64_t seed) override {
        int kind = draw_kind(init.dist);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < count; ++i)
            store_from_double(b.ptr, dtype, i, draw(kind, init.a, init.b, seed, static_cast<std::uint64_t>(i)));
    }

    void fill_bytes(const Buffer& b, std::size_t offset, std::size_t len, std::uint8_t byte) override {
        std::memset(static_cast<char*>(b.ptr) + offset, byte, len);
    }

    bool bytes_equal(const Buffer& b, std::size_t offset, std::size_t len, std::uint8_t byte) override {
        const auto* p = static_cast<const std::uint8_t*>(b.ptr) + offset;
        return std::all_of(p, p + len, [byte](std::uint8_t x) { return x == byte; });
    }

    std::uint64_t checksum(const Buffer& b) override {
        const auto* p = static_cast<const std::uint8_t*>(b.ptr);
        std::int64_t words = static_cast<std::int64_t>((b.bytes + 7) / 8);
        std::uint64_t sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
        for (std::int64_t i = 0; i < words; ++i) {
            std::uint64_t w = 0;
            std::size_t off = static_cast<std::size_t>(i) * 8;
            std::memcpy(&w, p + off, std::min<std::size_t>(8, b.bytes - off));
            sum += splitmix64(w ^ (static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull));
        }
        return sum;
    }

    CompareResult compare(const Buffer& actual, const Buffer& expected, DType dtype, std::int64_t count,
                          const Tolerance& tol, std::uint8_t poison) override {
        CompareResult r;
        const std::size_t es = size_of(dtype);
        const auto* ab = static_cast<const std::uint8_t*>(actual.ptr);
        const auto* eb = static_cast<const std::uint8_t*>(expected.ptr);
        auto all_poison = [&](const std::uint8_t* p) {
            for (std::size_t k = 0; k < es; ++k)
                if (p[k] != poison) return false;
            return true;
        };
        for (std::int64_t i = 0; i < count; ++i) {
            double a = load_as_double(actual.ptr, dtype, i), e = load_as_double(expected.ptr, dtype, i);
            bool bad = false;
            std::size_t off = static_cast<std::size_t>(i) * es;
            if (all_poison(ab + off) && !all_poison(eb + off)) {
                ++r.unwritten;
                bad = true;
            }
            if (std::isnan(a)) {
                ++r.nan_count;
                bad = true;
            } else if (std::isinf(a) && a != e) {
                ++r.inf_count;
                bad = true;
            } else if (std::isfinite(a) && std::isfinite(e)) {
                double diff = std::fabs(a - e);
                r.max_abs = std::max(r.max_abs, diff);
                r.max_rel = std::max(r.max_rel, diff / (std::fabs(e) + tol.atol + 1e-30));
                if (diff > tol.atol + tol.rtol * std::fabs(e)) bad = true;
            } else if (a != e) {
                bad = true;
            }
            if (bad) {
                if (r.mismatches == 0) {
                    r.first_index = i;
                    r.first_expected = e;
                    r.first_actual = a;
                }
                ++r.mismatches;
            }
        }
        return r;
    }

    void copy(const Buffer& dst, const Buffer& src, std::size_t bytes) override { std::memcpy(dst.ptr, src.ptr, bytes); }

    double copy_floor_ms(std::size_t bytes) override {
        std::size_t half = std::min<std::size_t>(bytes / 2, 1ull << 30);
        if (half < 4096) return 0;
        // The fastest copy this machine can do of that many bytes: warm caches (a candidate's
        // data may sit in a core's private cache, which a flush from this process does not
        // reach) and flushed, on every core and on one (a core taken by another process
        // stalls a parallel copy but not a single thread). Each measurement can only be too
        // slow, so the floor kept for a size is the least ever measured in this process.
        double best = std::min({best_copy_ms(half, 9, false, [] {}), best_copy_ms(half, 5, true, [] {}),
                                best_copy_ms(half, 5, true, [this] { flush_cache(); })});
        double ms = best * static_cast<double>(bytes / 2) / static_cast<double>(half);
        auto [it, fresh] = floors_.emplace(bytes, ms);
        if (!fresh) it->second = std::min(it->second, ms);
        return it->second;
    }

    void* stream() override { return nullptr; }
    void synchronize() override {}

    void flush_cache() override {
        // Writing a buffer twice the last-level cache evicts the previous repetition's data.
        std::memset(flush_.data(), static_cast<int>(++flush_round_), flush_.size());
    }

    CallTime timed_call(const std::function<void()>& fn) override {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return CallTime{ms, ms};
    }

    LaunchReport account_launches(const std::function<void()>& fn, int late_work_ms) override {
        (void)late_work_ms;
        fn();
        LaunchReport r;
        r.supported = false;
        r.note = "no kernel launches on the host backend";
        return r;
    }

private:
    std::vector<std::uint8_t> flush_;
    std::map<std::size_t, double> floors_;
    std::uint8_t flush_round_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_host_device() { return std::make_unique<HostDevice>(); }

}  // namespace kf::worker
