// Real compiles with nvcc and g++ through CompileCache and CompilePool: diagnostics mapped to
// the candidate's lines, ptxas resource usage, the cache (hits, keys, broken entries) and
// parallel compiles. CUDA cases skip where nvcc is missing; no GPU is needed.
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/compile.h"
#include "kf/process.h"
#include "kf/sha256.h"
#include "testsupport.h"

namespace fs = std::filesystem;

// Readable QCOMPARE failures for the engine's string and path values.
namespace QTest {
template <>
inline char* toString(const std::string& s) { return qstrdup(s.c_str()); }
template <>
inline char* toString(const fs::path& p) { return qstrdup(p.c_str()); }
}  // namespace QTest

namespace {

const char* kCudaHeader =
    "#pragma once\n#include <cuda_runtime.h>\n"
    "extern \"C\" void kf_solve(const float* x, float* y, int n, cudaStream_t stream);\n";
const char* kCudaGlue = "#include \"kf_task.h\"\n#include \"candidate.cu\"\n";
const char* kHostHeader = "#pragma once\nextern \"C\" void kf_solve(const float* x, float* y, int n);\n";
const char* kHostGlue = "#include \"kf_task.h\"\n#include \"candidate.cpp\"\n";

const char* kGoodKernel = R"(__global__ void scale_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

extern "C" void kf_solve(const float* x, float* y, int n, cudaStream_t stream) {
    scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
}
)";

kf::CompileRequest cuda_request(std::string source) {
    kf::CompileRequest r;
    r.backend = kf::Backend::Cuda;
    r.source = std::move(source);
    r.header = kCudaHeader;
    r.glue = kCudaGlue;
    return r;
}

kf::CompileRequest host_request(std::string source) {
    kf::CompileRequest r;
    r.backend = kf::Backend::Host;
    r.source = std::move(source);
    r.header = kHostHeader;
    r.glue = kHostGlue;
    return r;
}

bool have_compiler(kf::Backend b) {
    auto r = kf::run_process({kf::compiler_program(b), "--version"}, std::chrono::seconds(30));
    return !r.start_failed && r.exit_code == 0;
}

QString describe(const kf::CompileResult& r) {
    QString s = QString("ok=%1 key=%2\n").arg(r.ok).arg(QString::fromStdString(r.key));
    for (const auto& d : r.info.diagnostics)
        s += QString::fromStdString(d.tool + " " + d.file + ":" + std::to_string(d.line) + ":" +
                                    std::to_string(d.column) + " " + d.message + "\n");
    return s + QString::fromStdString(r.info.log);
}

const kf::Diagnostic* first_error(const kf::CompileResult& r) {
    for (const auto& d : r.info.diagnostics)
        if (d.severity == kf::Severity::Error) return &d;
    return nullptr;
}

}  // namespace

#define REQUIRE_NVCC() \
    if (!have_nvcc_) QSKIP("nvcc not found (set KF_NVCC or put nvcc on PATH)")

class TestCompile : public QObject {
    Q_OBJECT

    bool have_nvcc_ = false;
    fs::path cache_dir_;

private slots:
    void initTestCase() {
        have_nvcc_ = have_compiler(kf::Backend::Cuda);
        QVERIFY2(have_compiler(kf::Backend::Host), "the host compiler (g++ or $KF_CXX) is required");
        cache_dir_ = kftest::temp_dir("compile-cache");
    }

    void sha256Vectors() {
        QCOMPARE(kf::sha256_hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(kf::sha256_hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        // 56 bytes: the length no longer fits in the first padded block.
        QCOMPARE(kf::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        QCOMPARE(kf::sha256_hex(std::string(1000000, 'a')),
                 std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    void commands() {
        auto cuda = cuda_request("x");
        cuda.libraries = {"cublas"};
        cuda.extra_flags = {"-maxrregcount=32"};
        auto cmd = kf::compiler_command(cuda, "/w");
        std::vector<std::string> tail(cmd.begin() + 1, cmd.end());
        QCOMPARE(tail, (std::vector<std::string>{"-std=c++17", "-O3", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC",
                                                 "-cudart", "shared", "-Xptxas", "-v", "-lineinfo", "-I/w",
                                                 "/w/kf_glue.cu", "-o", "/w/candidate.so", "-lcublas",
                                                 "-maxrregcount=32"}));
        auto host = kf::compiler_command(host_request("x"), "/w");
        QCOMPARE(std::vector<std::string>(host.begin() + 1, host.end()),
                 (std::vector<std::string>{"-std=c++17", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared",
                                           "-I/w", "/w/kf_glue.cpp", "-o", "/w/candidate.so"}));
        qputenv("KF_CXX", "/opt/my/clang++");
        QCOMPARE(kf::compiler_program(kf::Backend::Host), std::string("/opt/my/clang++"));
        qunsetenv("KF_CXX");
        QCOMPARE(kf::compiler_program(kf::Backend::Host), std::string("g++"));
    }

    void defaultDir() {
        QByteArray saved_cache = qgetenv("KF_CACHE_DIR"), saved_xdg = qgetenv("XDG_CACHE_HOME");
        qputenv("KF_CACHE_DIR", "/somewhere/kf");
        QCOMPARE(kf::CompileCache::default_dir(), fs::path("/somewhere/kf"));
        qunsetenv("KF_CACHE_DIR");
        qputenv("XDG_CACHE_HOME", "/xdg");
        QCOMPARE(kf::CompileCache::default_dir(), fs::path("/xdg/kernel-foundry/compile"));
        qunsetenv("XDG_CACHE_HOME");
        QCOMPARE(kf::CompileCache::default_dir().filename(), fs::path("compile"));
        if (!saved_cache.isEmpty()) qputenv("KF_CACHE_DIR", saved_cache);
        if (!saved_xdg.isEmpty()) qputenv("XDG_CACHE_HOME", saved_xdg);
    }

    void brokenCudaSource() {
        REQUIRE_NVCC();
        kf::CompileCache cache(cache_dir_);
        auto r = cache.compile(cuda_request("__global__ void k(float* y, int n) {\n"
                                            "    int i = threadIdx.x;\n"
                                            "    if (i < n) y[i] = missing_value * 2.0f;\n"
                                            "}\n"));
        QVERIFY2(!r.ok, qPrintable(describe(r)));
        QVERIFY(r.library.empty());
        const kf::Diagnostic* d = first_error(r);
        QVERIFY2(d, qPrintable(describe(r)));
        QCOMPARE(d->file, std::string("candidate.cu"));
        QCOMPARE(d->line, 3);
        QCOMPARE(d->column, 23);
        QCOMPARE(d->tool, std::string("nvcc"));
        QCOMPARE(d->message, std::string("identifier \"missing_value\" is undefined"));
        QVERIFY(!r.info.log.empty());
        QVERIFY(!r.info.compiler.empty());
        // A compile error is deterministic, so it is cached too.
        QVERIFY(fs::exists(cache_dir_ / r.key / "meta.json"));
        auto again = cache.compile(cuda_request("__global__ void k(float* y, int n) {\n"
                                                "    int i = threadIdx.x;\n"
                                                "    if (i < n) y[i] = missing_value * 2.0f;\n"
                                                "}\n"));
        QVERIFY(again.info.cached);
        QVERIFY(!again.ok);
        QCOMPARE(again.info.diagnostics.size(), r.info.diagnostics.size());
        QCOMPARE(first_error(again)->column, 23);
    }

    void brokenHostSource() {
        kf::CompileCache cache(cache_dir_);
        auto r = cache.compile(host_request("#include <cmath>\n\n"
                                            "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                            "    for (int i = 0; i < n; ++i)\n"
                                            "        y[i] = std::sqrt(x[i]) + undeclared;\n"
                                            "}\n"));
        QVERIFY2(!r.ok, qPrintable(describe(r)));
        const kf::Diagnostic* d = first_error(r);
        QVERIFY2(d, qPrintable(describe(r)));
        QCOMPARE(d->file, std::string("candidate.cpp"));
        QCOMPARE(d->line, 5);
        QCOMPARE(d->column, 34);
        QCOMPARE(d->tool, std::string("g++"));
        QVERIFY2(d->message.find("undeclared") != std::string::npos, d->message.c_str());
    }

    void goodHostSource() {
        kf::CompileCache cache(cache_dir_);
        auto r = cache.compile(host_request("extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                            "#pragma omp parallel for\n"
                                            "    for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n"
                                            "}\n"));
        QVERIFY2(r.ok, qPrintable(describe(r)));
        QVERIFY(fs::is_regular_file(r.library));
        QVERIFY(r.info.resources.empty());
        QVERIFY(r.info.seconds > 0);
    }

    void goodCudaKernelThenCacheHit() {
        REQUIRE_NVCC();
        kf::CompileCache cache(cache_dir_);
        auto t0 = std::chrono::steady_clock::now();
        auto r = cache.compile(cuda_request(kGoodKernel));
        double cold = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(r.ok, qPrintable(describe(r)));
        QVERIFY(!r.info.cached);
        QVERIFY(r.info.seconds > 0);
        QVERIFY(fs::is_regular_file(r.library));
        QCOMPARE(r.library, cache_dir_ / r.key / "candidate.so");
        QCOMPARE(r.info.resources.size(), std::size_t(1));
        QCOMPARE(r.info.resources[0].kernel, std::string("_Z12scale_kernelPKfPfi"));
        QVERIFY(r.info.resources[0].registers > 0);
        QCOMPARE(r.info.resources[0].spill_store_bytes, 0);
        // The entry keeps the sources it was built from and the metadata.
        QCOMPARE(kftest::read_file(cache_dir_ / r.key / "candidate.cu"), std::string(kGoodKernel));
        QVERIFY(fs::exists(cache_dir_ / r.key / "kf_task.h"));
        QVERIFY(fs::exists(cache_dir_ / r.key / "kf_glue.cu"));
        auto meta = nlohmann::json::parse(kftest::read_file(cache_dir_ / r.key / "meta.json"));
        QCOMPARE(meta.at("ok").get<bool>(), true);
        QVERIFY(meta.at("compile_seconds").get<double>() > 0);

        // A second identical compile, even through a new cache object, is a hit.
        kf::CompileCache cache2(cache_dir_);
        t0 = std::chrono::steady_clock::now();
        auto hit = cache2.compile(cuda_request(kGoodKernel));
        double warm = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(hit.ok, qPrintable(describe(hit)));
        QVERIFY(hit.info.cached);
        QCOMPARE(hit.info.seconds, 0.0);
        QCOMPARE(hit.key, r.key);
        QCOMPARE(hit.library, r.library);
        QCOMPARE(hit.info.resources.size(), std::size_t(1));
        QCOMPARE(hit.info.resources[0].registers, r.info.resources[0].registers);
        qInfo("small CUDA kernel: cold compile %.2f s (nvcc %.2f s), cached %.3f s", cold, r.info.seconds, warm);
    }

    void changedInputsChangeTheKey() {
        kf::CompileCache cache(cache_dir_);
        auto base = cuda_request(kGoodKernel);
        std::string key = cache.key_of(base);
        QCOMPARE(key.size(), std::size_t(64));
        QCOMPARE(cache.key_of(base), key);
        auto changed = base;
        changed.source += "\n// a comment\n";
        QVERIFY(cache.key_of(changed) != key);
        changed = base;
        changed.arch = "sm_80";
        QVERIFY(cache.key_of(changed) != key);
        changed = base;
        changed.extra_flags = {"-DX=1"};
        QVERIFY(cache.key_of(changed) != key);
        changed = base;
        changed.libraries = {"cublas"};
        QVERIFY(cache.key_of(changed) != key);
        changed = base;
        changed.header += "\n";
        QVERIFY(cache.key_of(changed) != key);
        changed = base;
        changed.source_name = "candidate.cu";  // the default, spelled out
        QCOMPARE(cache.key_of(changed), key);
        changed.source_name = "other.cu";
        QVERIFY(cache.key_of(changed) != key);
        // Field boundaries count: moving text from the source into the header is a new key.
        auto a = base, b = base;
        a.source = "ab";
        a.header = "c";
        b.source = "a";
        b.header = "bc";
        QVERIFY(cache.key_of(a) != cache.key_of(b));
    }

    void spillingKernel() {
        REQUIRE_NVCC();
        kf::CompileCache cache(cache_dir_);
        auto req = cuda_request(R"(__global__ void __launch_bounds__(1024, 2) pressure(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[64];
#pragma unroll
    for (int k = 0; k < 64; ++k) v[k] = x[(i + k * 131) % n];
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int k = 0; k < 64; ++k) acc += v[k] * v[(k + r) % 64];
    y[i] = acc;
}

extern "C" void kf_solve(const float* x, float* y, int n, cudaStream_t stream) {
    pressure<<<(n + 1023) / 1024, 1024, 0, stream>>>(x, y, n);
}
)");
        auto r = cache.compile(req);
        QVERIFY2(r.ok, qPrintable(describe(r)));
        QCOMPARE(r.info.resources.size(), std::size_t(1));
        const auto& u = r.info.resources[0];
        QCOMPARE(u.kernel, std::string("_Z8pressurePKfPfi"));
        QVERIFY2(u.spill_store_bytes > 0 && u.spill_load_bytes > 0 && u.stack_bytes > 0, qPrintable(describe(r)));
        QVERIFY(u.registers <= 32);
    }

    void extraFlagsAndWarnings() {
        REQUIRE_NVCC();
        kf::CompileCache cache(cache_dir_);
        auto req = cuda_request(R"(__global__ void tiled(const float* x, float* y, int n) {
    __shared__ float tile[256];
    int unused_here = 1;
    tile[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    y[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x] * SCALE;
}

extern "C" void kf_solve(const float* x, float* y, int n, cudaStream_t stream) {
    tiled<<<n / 256, 256, 0, stream>>>(x, y, n);
}
)");
        req.extra_flags = {"-DSCALE=3.0f"};
        auto r = cache.compile(req);
        QVERIFY2(r.ok, qPrintable(describe(r)));
        QCOMPARE(r.info.resources.size(), std::size_t(1));
        QCOMPARE(r.info.resources[0].shared_bytes, 1024);
        bool warned = false;
        for (const auto& d : r.info.diagnostics)
            warned = warned || (d.severity == kf::Severity::Warning && d.line == 3 && d.column == 9 &&
                                d.file == "candidate.cu" && d.message.find("unused_here") != std::string::npos);
        QVERIFY2(warned, qPrintable(describe(r)));
    }

    void parallelCompiles() {
        REQUIRE_NVCC();
        kf::CompileCache cache(cache_dir_);
        kf::CompilePool pool(cache, 2);
        QCOMPARE(pool.threads(), 2u);
        std::vector<std::future<kf::CompileResult>> futures;
        for (int v = 1; v <= 3; ++v) {
            std::string src = kGoodKernel;
            src.replace(src.find("2.0f"), 4, std::to_string(v + 10) + ".0f");
            futures.push_back(pool.submit(cuda_request(src)));
        }
        futures.push_back(pool.submit(host_request("extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                                   "    for (int i = 0; i < n; ++i) y[i] = x[i] + 7.0f;\n}\n")));
        // Two identical requests at once compile once; the second shares the result.
        futures.push_back(pool.submit(cuda_request(std::string(kGoodKernel) + "// twin\n")));
        futures.push_back(pool.submit(cuda_request(std::string(kGoodKernel) + "// twin\n")));
        std::vector<std::string> keys;
        for (auto& f : futures) {
            auto r = f.get();
            QVERIFY2(r.ok, qPrintable(describe(r)));
            QVERIFY(fs::is_regular_file(r.library));
            keys.push_back(r.key);
        }
        QCOMPARE(keys[4], keys[5]);
        std::sort(keys.begin(), keys.end());
        QCOMPARE(std::unique(keys.begin(), keys.end()) - keys.begin(), 5);
    }

    void poolContainsFailures() {
        // A cache folder that cannot be created: each compile fails with a diagnostic, and
        // neither the threads nor the destructor throw.
        fs::path blocker = kftest::temp_dir("compile-blocker") / "file";
        kftest::write_file(blocker, "not a folder");
        kf::CompileCache cache(blocker / "cache");
        std::future<kf::CompileResult> f;
        {
            kf::CompilePool pool(cache, 1);
            f = pool.submit(host_request("extern \"C\" void kf_solve(const float*, float*, int) {}\n"));
        }
        auto r = f.get();
        QVERIFY(!r.ok);
        QVERIFY(!r.info.diagnostics.empty());
        QCOMPARE(r.info.diagnostics[0].severity, kf::Severity::Error);
    }

    void brokenCacheEntries() {
        fs::path dir = kftest::temp_dir("compile-broken");
        kf::CompileCache cache(dir);
        auto req = host_request("extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                "    for (int i = 0; i < n; ++i) y[i] = x[i] * 0.5f;\n}\n");
        std::string key = cache.key_of(req);
        // Left behind by a crashed compile: a temporary folder and an entry without meta.json.
        kftest::write_file(dir / ("tmp-" + key + "-abc123") / "candidate.so", "garbage");
        kftest::write_file(dir / key / "candidate.so", "half written");
        auto r = cache.compile(req);
        QVERIFY2(r.ok, qPrintable(describe(r)));
        QVERIFY(!r.info.cached);
        QVERIFY(fs::exists(dir / key / "meta.json"));
        QVERIFY(kftest::read_file(r.library) != "half written");

        // Unreadable metadata, or a successful entry without its library: compile again.
        kftest::write_file(dir / key / "meta.json", "{ not json");
        r = cache.compile(req);
        QVERIFY2(r.ok && !r.info.cached, qPrintable(describe(r)));
        fs::remove(dir / key / "candidate.so");
        r = cache.compile(req);
        QVERIFY2(r.ok && !r.info.cached, qPrintable(describe(r)));
        r = cache.compile(req);
        QVERIFY(r.ok && r.info.cached);
    }

    void timeoutIsReportedAndNotCached() {
        REQUIRE_NVCC();
        kf::CompileCache cache(cache_dir_);
        auto req = cuda_request(std::string(kGoodKernel) + "// timeout\n");
        req.timeout_s = 0.05;
        auto r = cache.compile(req);
        QVERIFY(!r.ok);
        const kf::Diagnostic* d = first_error(r);
        QVERIFY2(d, qPrintable(describe(r)));
        QCOMPARE(d->message, std::string("compilation timed out after 0.05 s"));
        QVERIFY(!fs::exists(cache_dir_ / r.key));
        for (const auto& e : fs::directory_iterator(cache_dir_))
            QVERIFY2(e.path().filename().string().rfind("tmp-", 0) != 0, e.path().c_str());
    }

    void missingCompiler() {
        qputenv("KF_CXX", "/nonexistent/compiler-kf");
        kf::CompileCache cache(kftest::temp_dir("compile-missing"));
        auto r = cache.compile(host_request("int x;\n"));
        qunsetenv("KF_CXX");
        QVERIFY(!r.ok);
        const kf::Diagnostic* d = first_error(r);
        QVERIFY2(d, qPrintable(describe(r)));
        QVERIFY2(d->message.find("could not start /nonexistent/compiler-kf") == 0, d->message.c_str());
        QVERIFY(!fs::exists(cache.dir() / r.key));  // a start failure is not cached
    }
};

QTEST_GUILESS_MAIN(TestCompile)
#include "test_compile.moc"
