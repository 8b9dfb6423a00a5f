// The generic expert (kf/generic.h): kernels written from the reference's own loops for tasks
// no op-class template knows (a gather, a strided window, a broadcast epilogue, a ternary with
// a per-row operand, a scatter-add, a row reduction with std::max, a while loop kept as
// written). Host instances are evaluated by the real host backend; CUDA instances compiled by
// nvcc; the legality checks refuse what may not run in parallel; a search from scratch ends
// with generic kernels evaluated and named in its summary.
#include <QtTest>

#include "kf/evaluator.h"
#include "kf/evolution.h"
#include "kf/experts.h"
#include "kf/generic.h"
#include "kf/process.h"
#include "kf/recognise.h"
#include "kf/run_summary.h"
#include "kf/store.h"
#include "kf/tunables.h"
#include "testsupport.h"

using namespace kf;

namespace {

const char* const kTasks[] = {"embedding_gather", "maxpool2d", "bias_relu_cols", "leaky_rows",
                              "scatter_add",      "absmax_scale", "bucketize"};

/** A one-output task of n elements over x with the given host reference, for the legality checks. */
Task flat_task(const std::string& tag, const std::string& reference) {
    auto dir = kftest::temp_dir("generic-" + tag);
    kftest::write_file(dir / "task.json", R"({
  "format": 1, "name": "t", "op_class": "x", "sizes": ["n"],
  "tensors": [{"name": "x", "role": "input", "dtype": "f32", "shape": ["n"]},
              {"name": "y", "role": "output", "dtype": "f32", "shape": ["n"]}],
  "tolerance": {"atol": 1e-5, "rtol": 1e-5},
  "work": {"flops": "n", "bytes": "8 * n"},
  "cases": [{"name": "p", "primary": true, "sizes": {"n": 64}}, {"name": "v", "sizes": {"n": 7}}],
  "reference": {"host": "reference.cpp"}
})");
    kftest::write_file(dir / "reference.cpp", "#include \"kf_task.h\"\n" + reference);
    return load_task(dir);
}

/** A task of rows x cols elements, y from x, with the given host reference. */
Task rows_task(const std::string& tag, const std::string& reference) {
    auto dir = kftest::temp_dir("generic-" + tag);
    kftest::write_file(dir / "task.json", R"({
  "format": 1, "name": "t", "op_class": "x", "sizes": ["rows", "cols"],
  "tensors": [{"name": "x", "role": "input", "dtype": "f32", "shape": ["rows", "cols"]},
              {"name": "y", "role": "output", "dtype": "f32", "shape": ["rows", "cols"]}],
  "tolerance": {"atol": 1e-5, "rtol": 1e-5},
  "work": {"flops": "rows * cols", "bytes": "8 * rows * cols"},
  "cases": [{"name": "p", "primary": true, "sizes": {"rows": 8, "cols": 40}}, {"name": "v", "sizes": {"rows": 3, "cols": 5}}],
  "reference": {"host": "reference.cpp"}
})");
    kftest::write_file(dir / "reference.cpp", "#include \"kf_task.h\"\n" + reference);
    return load_task(dir);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::unique_ptr<Evaluator> nvcc_evaluator(const std::filesystem::path& cache) {
    auto probe = run_process({compiler_program(Backend::Cuda), "--version"}, std::chrono::seconds(30));
    if (probe.start_failed || probe.exit_code != 0) return nullptr;
    EvaluatorConfig cfg;
    cfg.worker.backend = Backend::Cuda;
    cfg.arch = "sm_90";
    cfg.cache_dir = cache;
    return std::make_unique<Evaluator>(cfg);
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + "\n";
    return s;
}

}  // namespace

class TestGeneric : public QObject {
    Q_OBJECT

private:
    std::filesystem::path cache_;

    EvaluatorConfig host_config() const {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache_ / "compile";
        return cfg;
    }

    /** Every host instance of `t` passes the worker's checks at its defaults, and every CUDA
     *  instance compiles with nvcc where it is found; false after the first failure, reported. */
    bool instances_pass(const Task& t, const GenericKernels& host, const GenericKernels& cuda, const std::string& tag) {
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        for (const auto& k : host.kernels) {
            Diagnosis d = ev.evaluate(t, {k.source, "generic"}, opt);
            if (d.status != Status::Ok) {
                qWarning("%s: %s\n%s\n%s", k.name.c_str(), d.message.c_str(), d.compile.log.c_str(), k.source.c_str());
                return false;
            }
        }
        auto nvcc = nvcc_evaluator(cache_ / ("nvcc-" + tag));
        for (const auto& k : nvcc ? cuda.kernels : std::vector<TemplateKernel>{}) {
            CompileResult cr = nvcc->compile(t, {k.source, "generic"}, parse_tunables(k.source).defaults());
            if (!cr.ok) {
                qWarning("%s:\n%s\n%s", k.name.c_str(), cr.info.log.c_str(), k.source.c_str());
                return false;
            }
        }
        return true;
    }

private slots:
    void initTestCase() {
        cache_ = kftest::temp_dir("generic-cache");
        if (qgetenv("KF_NVCC").isEmpty() && std::filesystem::exists("/usr/local/cuda/bin/nvcc"))
            qputenv("KF_NVCC", "/usr/local/cuda/bin/nvcc");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((cache_ / "compile").string()));
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("generic-data").string()));
        std::string why;
        if (!libclang_available(&why)) {
            if (qEnvironmentVariableIsSet("KF_EXPECT_LIBCLANG")) QFAIL(("libclang does not load: " + why).c_str());
            QSKIP(("the generic expert reads references through libclang: " + why).c_str());
        }
    }

    /** Every task of the classes the templates do not name gets generic kernels on both backends. */
    void every_task_gets_generic_kernels() {
        for (const char* name : kTasks) {
            Task t = load_task(kftest::data(std::string("tasks/") + name));
            GenericKernels host = generic_kernels(t, Backend::Host), cuda = generic_kernels(t, Backend::Cuda);
            QVERIFY2(!host.kernels.empty(), (std::string(name) + ": " + host.reason).c_str());
            QVERIFY2(!cuda.kernels.empty(), (std::string(name) + ": " + cuda.reason).c_str());
            QCOMPARE(cuda.kernels.front().family, std::string("generic/threads"));
            for (const auto& k : cuda.kernels) QVERIFY2(!parse_tunables(k.source).empty(), k.name.c_str());
            for (const auto& n : cuda.nests) QVERIFY2(n.find("parallel") != std::string::npos, (name + (": " + n)).c_str());
        }
    }

    /** What each nest was found to allow, as the run's log says it. */
    void nests_are_planned_as_expected() {
        auto plan = [](const char* name) {
            return generic_kernels(load_task(kftest::data(std::string("tasks/") + name)), Backend::Cuda);
        };
        // Contiguous along the innermost loop: 16-byte loads and stores (VEC), a per-column operand too.
        GenericKernels cols = plan("bias_relu_cols");
        const std::string& threads = cols.kernels.front().source;
        QVERIFY(threads.find("#define VEC 4      // @kf tunable values(1, 2, 4)") != std::string::npos);
        QVERIFY2(threads.find("kf_vload<VEC>(&scale[(static_cast<long long>(1) * kf_ub)], kf_l1);") != std::string::npos,
                 threads.c_str());
        QVERIFY(threads.find("kf_vstore<VEC>(&y[") != std::string::npos);
        GenericKernels pool = plan("maxpool2d");
        QVERIFY2(pool.kernels.front().source.find("VEC") == std::string::npos, "a window's reads are not contiguous");
        QCOMPARE(pool.nests.size(), std::size_t(1));
        QVERIFY2(pool.nests[0].find("parallel with i, j") != std::string::npos, pool.nests[0].c_str());
        GenericKernels scatter = plan("scatter_add");
        QCOMPARE(scatter.nests.size(), std::size_t(2));
        QVERIFY2(scatter.nests[1].find("adding atomically to out") != std::string::npos, joined(scatter.nests).c_str());
        QVERIFY(scatter.kernels.front().source.find("kf_atomic_add(&out[") != std::string::npos);
        GenericKernels absmax = plan("absmax_scale");
        QCOMPARE(absmax.kernels.size(), std::size_t(3));  // threads, warp-rows, block-rows
        QCOMPARE(absmax.kernels[1].name, std::string("generic/warp-rows"));
        QVERIFY2(absmax.kernels[1].source.find("kf_group_reduce<KF_GROUP>(kf_p_m, Kfmax())") != std::string::npos,
                 absmax.kernels[1].source.c_str());
        // The while loop is kept as written, and the log names it with its line.
        GenericKernels bucket = plan("bucketize");
        QVERIFY2(bucket.reason.find("WhileStmt (line 7)") != std::string::npos, bucket.reason.c_str());
        QVERIFY2(generic_summary(bucket).find("kept as written") != std::string::npos, generic_summary(bucket).c_str());
        QVERIFY(bucket.kernels.front().source.find("while (lo < hi)") != std::string::npos);
    }

    /** Every host instance, at its defaults and at both ends of its space, passes the worker's checks. */
    void host_instances_are_correct() {
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        int evaluated = 0;
        for (const char* name : kTasks) {
            Task t = load_task(kftest::data(std::string("tasks/") + name));
            for (const auto& k : generic_kernels(t, Backend::Host).kernels) {
                TunableSpace space = parse_tunables(k.source);
                std::vector<Assignment> points = space.enumerate(1000);
                for (const Assignment& a : {space.defaults(), points.front(), points.back()}) {
                    Diagnosis d = ev.evaluate(t, {instantiate(k.source, space, a), "generic"}, opt);
                    QVERIFY2(d.status == Status::Ok,
                             (std::string(name) + " " + k.name + " " + to_string(a) + ": " + d.message + "\n" + d.compile.log)
                                 .c_str());
                    ++evaluated;
                }
            }
        }
        QVERIFY(evaluated >= 21);
    }

    /** Every CUDA instance compiles with nvcc for sm_90, at its defaults and at both ends of its space. */
    void cuda_instances_compile() {
        auto nvcc = nvcc_evaluator(cache_ / "nvcc");
        if (!nvcc) QSKIP("nvcc not found (set KF_NVCC)");
        for (const char* name : kTasks) {
            Task t = load_task(kftest::data(std::string("tasks/") + name));
            for (const auto& k : generic_kernels(t, Backend::Cuda).kernels) {
                TunableSpace space = parse_tunables(k.source);
                std::vector<Assignment> points = space.enumerate(1000);
                for (const Assignment& a : {space.defaults(), points.front(), points.back()}) {
                    CompileResult cr = nvcc->compile(t, {k.source, "generic"}, a);
                    QVERIFY2(cr.ok, (std::string(name) + " " + k.name + " " + to_string(a) + ":\n" + cr.info.log + "\n" +
                                     k.source)
                                        .c_str());
                }
            }
        }
    }

    /** Loops whose iterations depend on each other are not spread; the reason names what and where. */
    void dependent_iterations_are_not_spread() {
        // A running sum through the output: y[i] reads y[i - 1].
        GenericKernels scan = generic_kernels(
            flat_task("scan", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                              "    y[0] = x[0];\n"
                              "    for (int i = 1; i < n; ++i) y[i] = y[i - 1] + x[i];\n}\n"),
            Backend::Cuda);
        QVERIFY(scan.kernels.empty());
        QVERIFY2(scan.reason.find("outside its loops") != std::string::npos, scan.reason.c_str());
        GenericKernels carried = generic_kernels(
            flat_task("carried", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                 "    for (int i = 1; i < n; ++i) y[i] = x[i];\n"
                                 "    for (int i = 1; i < n; ++i) y[i] = y[i - 1] + x[i];\n}\n"),
            Backend::Cuda);
        QCOMPARE(carried.nests.size(), std::size_t(2));
        QVERIFY2(carried.nests[1].find("one thread, since two iterations of the loop over i may access one element of y (line 4)") !=
                     std::string::npos,
                 carried.nests[1].c_str());
        // A scalar of kf_solve accumulated across the iterations.
        GenericKernels acc = generic_kernels(
            flat_task("acc", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                             "    float s = 0.0f;\n"
                             "    for (int i = 0; i < n; ++i) { s += x[i]; y[i] = s; }\n}\n"),
            Backend::Cuda);
        QVERIFY(acc.kernels.empty());
        QVERIFY2(acc.reason.find("assigns s, declared outside the loop over i") != std::string::npos, acc.reason.c_str());
        // A statement kept as written that writes the output cannot be checked.
        GenericKernels opaque = generic_kernels(
            flat_task("opaque", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                "    for (int i = 0; i < n; ++i) { int k = 0; while (k < 1) { y[i] = x[i]; ++k; } }\n}\n"),
            Backend::Cuda);
        QVERIFY(opaque.kernels.empty());
        QVERIFY2(opaque.reason.find("it keeps the statement kind WhileStmt (line 3) as written, and that assigns y") != std::string::npos,
                 opaque.reason.c_str());
        // One that only reads an output another statement writes cannot be checked either.
        GenericKernels reads = generic_kernels(
            flat_task("opaque-read", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                     "    for (int i = 0; i < n; ++i) { y[i] = x[i]; float s = 0; int k = 0;\n"
                                     "        while (k < 1) { s += y[n - 1 - i]; ++k; } }\n}\n"),
            Backend::Cuda);
        QVERIFY(reads.kernels.empty());
        QVERIFY2(reads.reason.find("its accesses of y cannot be checked") != std::string::npos, reads.reason.c_str());
    }

    /** Accesses through pointers declared around a loop (at kf_solve's top, in the row) are checked like any other. */
    void pointers_declared_around_the_loop_are_checked() {
        // A running sum through a pointer declared at kf_solve's top.
        GenericKernels top = generic_kernels(
            flat_task("top-alias", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                   "    float* out = y;\n"
                                   "    for (int i = 0; i < n; ++i) out[i] = (i > 0 ? out[i - 1] : 0.0f) + x[i];\n}\n"),
            Backend::Host);
        QVERIFY2(top.kernels.empty(), generic_summary(top).c_str());
        QVERIFY2(has(top.reason, "two iterations of the loop over i may access one element of y (line 4)"), top.reason.c_str());
        // A running sum along each row through the row's pointers: the rows run in parallel, the
        // elements of a row do not.
        GenericKernels scan = generic_kernels(
            rows_task("row-alias", "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                                   "    for (int r = 0; r < rows; ++r) {\n"
                                   "        const float* xr = x + (long long)r * cols;\n"
                                   "        float* yr = y + (long long)r * cols;\n"
                                   "        yr[0] = xr[0];\n"
                                   "        for (int c = 1; c < cols; ++c) yr[c] = yr[c - 1] + xr[c];\n    }\n}\n"),
            Backend::Cuda);
        QCOMPARE(scan.kernels.size(), std::size_t(1));
        QVERIFY2(has(scan.nests[0], "parallel; no rows (two iterations of the loop over c may access one element of y (line 7))"),
                 scan.nests[0].c_str());
        // A local array of the row: each thread of a group would hold its own copy.
        GenericKernels local = generic_kernels(
            rows_task("row-array", "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                                   "    for (int r = 0; r < rows; ++r) {\n"
                                   "        float first[1] = {};\n"
                                   "        first[0] = x[r * cols];\n"
                                   "        for (int c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] - first[0];\n    }\n}\n"),
            Backend::Cuda);
        QCOMPARE(local.kernels.size(), std::size_t(1));
        QVERIFY2(has(local.nests[0], "no rows (it declares the local array first at the row's level"), local.nests[0].c_str());
        // A pointer it cannot follow is not taken for a local array.
        GenericKernels chosen = generic_kernels(
            flat_task("select-alias", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                      "    const float* src = n > 8 ? x : y;\n"
                                      "    for (int i = 0; i < n; ++i) y[i] = src[n - 1 - i];\n}\n"),
            Backend::Host);
        QVERIFY2(chosen.kernels.empty(), generic_summary(chosen).c_str());
        QVERIFY2(has(chosen.reason, "it reads through src, a pointer it cannot follow (line 4)"), chosen.reason.c_str());
    }

    /**
     * Sums into the row's pointer by a loop spread over a group are added atomically there (not
     * in the kernel spreading the rows over threads); an index widened by the reference stays 64-bit.
     */
    void row_sums_through_a_pointer_are_atomic() {
        GenericKernels bag = generic_kernels(load_task(kftest::data("tasks/embedding_bag")), Backend::Cuda);
        QCOMPARE(bag.kernels.size(), std::size_t(3));
        QVERIFY2(has(bag.nests[0], "rows spread over groups of threads, adding atomically to out"), bag.nests[0].c_str());
        QVERIFY2(!has(bag.kernels[0].source, "kf_atomic_add("), bag.kernels[0].source.c_str());
        for (std::size_t i = 1; i < 3; ++i)
            QVERIFY2(has(bag.kernels[i].source, "kf_atomic_add(&o[k], (row[k]));"), bag.kernels[i].source.c_str());
        for (const auto& k : bag.kernels)
            QVERIFY2(has(k.source, "(table + (static_cast<unsigned long>(idx[") && has(k.source, "* static_cast<unsigned long>(d)))"),
                     k.source.c_str());
        // On the host, the bags run in parallel and each adds into its own row.
        Task t = load_task(kftest::data("tasks/embedding_bag"));
        GenericKernels host = generic_kernels(t, Backend::Host);
        QVERIFY2(!host.kernels.empty() && !has(host.kernels[0].source, "omp atomic"), host.reason.c_str());
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        Diagnosis d = ev.evaluate(t, {host.kernels[0].source, "generic"}, opt);
        QVERIFY2(d.status == Status::Ok, (d.message + "\n" + d.compile.log).c_str());
    }

    /** A floating-point value converted to an integer is truncated in the generic kernels, as in the reference. */
    void conversions_to_integers_are_kept() {
        Task t = flat_task("quantize", "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                       "    for (int i = 0; i < n; i++) y[i] = (float)(int)(x[i] * 4.0f) / 4.0f;\n}\n");
        GenericKernels g = generic_kernels(t, Backend::Host);
        QVERIFY2(!g.kernels.empty(), g.reason.c_str());
        QVERIFY2(has(g.kernels[0].source, "y[i] = (static_cast<float>(static_cast<int>((x[i] * 4.0f))) / 4.0f);"),
                 g.kernels[0].source.c_str());
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        Diagnosis d = ev.evaluate(t, {g.kernels[0].source, "generic"}, opt);
        QVERIFY2(d.status == Status::Ok, (d.message + "\n" + d.compile.log).c_str());
    }

    /** A declaration kept as written (a call the model does not know) declares names of the iteration. */
    void kept_declarations_are_the_iterations() {
        Task t = flat_task("opaque-decl", "#include <cmath>\nextern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                          "    for (int i = 0; i < n; ++i) {\n"
                                          "        float s = std::nextafter(x[i], 2.0f);\n"
                                          "        s += 1.0f;\n        y[i] = s;\n    }\n}\n");
        GenericKernels g = generic_kernels(t, Backend::Host);
        QVERIFY2(!g.kernels.empty(), g.reason.c_str());
        QVERIFY2(has(g.nests[0], "the loop over i (line 4): parallel"), g.nests[0].c_str());
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        Diagnosis d = ev.evaluate(t, {g.kernels[0].source, "generic"}, opt);
        QVERIFY2(d.status == Status::Ok, (d.message + "\n" + d.compile.log).c_str());
    }

    /** A statement kept as written that calls a function of the reference gets a copy of it, and of those it calls. */
    void kept_statements_keep_what_they_need() {
        const std::string clip =
            "#include <cmath>\n"
            "static float knee(float v) { return 0.5f + 0.1f * std::tanh(v - 0.5f); }\n"
            "static float soft_clip(float v) {\n    if (v > 0.5f) return knee(v);\n    return v;\n}\n"
            "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
            "    for (int i = 0; i < n; ++i) {\n        const float g = soft_clip(x[i]);\n        y[i] = g;\n    }\n}\n";
        Task t = flat_task("helper", clip);
        GenericKernels host = generic_kernels(t, Backend::Host), cuda = generic_kernels(t, Backend::Cuda);
        QVERIFY2(!host.kernels.empty() && !cuda.kernels.empty(), host.reason.c_str());
        const std::string& hs = host.kernels[0].source;
        QVERIFY2(has(hs, "static float knee(float v) {") && hs.find("static float knee") < hs.find("static float soft_clip(float v) {"),
                 hs.c_str());
        QVERIFY2(has(cuda.kernels[0].source, "__device__ static float soft_clip(float v) {"), cuda.kernels[0].source.c_str());
        QVERIFY2(has(cuda.kernels[0].source, "__device__ static float knee(float v) {"), cuda.kernels[0].source.c_str());
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        Diagnosis d = ev.evaluate(t, {host.kernels[0].source, "generic"}, opt);
        QVERIFY2(d.status == Status::Ok, (d.message + "\n" + d.compile.log).c_str());
        if (auto nvcc = nvcc_evaluator(cache_ / "nvcc-helpers")) {
            CompileResult cr = nvcc->compile(t, {cuda.kernels[0].source, "generic"}, parse_tunables(cuda.kernels[0].source).defaults());
            QVERIFY2(cr.ok, (cr.info.log + "\n" + cuda.kernels[0].source).c_str());
        }
        // A function that reads a variable of the file is not copied: the reference is refused, saying why.
        GenericKernels global = generic_kernels(
            flat_task("helper-global", "static const float kKnee = 0.5f;\n"
                                       "static float soft_clip(float v) {\n    if (v > kKnee) return kKnee;\n    return v;\n}\n"
                                       "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                       "    for (int i = 0; i < n; ++i) { const float g = soft_clip(x[i]); y[i] = g; }\n}\n"),
            Backend::Host);
        QVERIFY(global.kernels.empty());
        QVERIFY2(has(global.reason, "a call of soft_clip, which reads kKnee, a variable of the file"), global.reason.c_str());
    }

    /** The host kernels give each thread one contiguous share of a nest's iterations unless CHUNK is set. */
    void host_kernels_schedule_statically() {
        GenericKernels g = generic_kernels(load_task(kftest::data("tasks/bias_relu_cols")), Backend::Host);
        QCOMPARE(g.kernels.size(), std::size_t(2));  // omp, omp-collapse
        for (const auto& k : g.kernels) {
            QVERIFY2(has(k.source, "#define CHUNK 0  // @kf tunable values(0, 1, 16, 64, 256, 4096)"), k.source.c_str());
            QVERIFY2(has(k.source, "#if CHUNK > 0\n#pragma omp parallel for schedule(static, CHUNK)"), k.source.c_str());
            QVERIFY2(has(k.source, "#else\n#pragma omp parallel for schedule(static)"), k.source.c_str());
        }
    }

    /** Of three perfectly nested loops (an NCHW bias add), the collapsed host instance
     *  collapses the outer two: the innermost stays a loop the compiler vectorises. */
    void collapse_keeps_the_innermost_loop() {
        auto dir = kftest::temp_dir("generic-nchw");
        kftest::write_file(dir / "task.json", R"({
  "format": 1, "name": "t", "op_class": "x", "sizes": ["N", "C", "HW"],
  "tensors": [{"name": "x", "role": "input", "dtype": "f32", "shape": ["N", "C", "HW"]},
              {"name": "bias", "role": "input", "dtype": "f32", "shape": ["C"]},
              {"name": "y", "role": "output", "dtype": "f32", "shape": ["N", "C", "HW"]}],
  "tolerance": {"atol": 1e-5, "rtol": 1e-5},
  "work": {"flops": "N * C * HW", "bytes": "8 * N * C * HW"},
  "cases": [{"name": "p", "primary": true, "sizes": {"N": 2, "C": 3, "HW": 40}}, {"name": "v", "sizes": {"N": 1, "C": 5, "HW": 7}}],
  "reference": {"host": "reference.cpp"}
})");
        kftest::write_file(dir / "reference.cpp",
                           "#include \"kf_task.h\"\n#include <algorithm>\n"
                           "extern \"C\" void kf_solve(const float* x, const float* bias, float* y, int N, int C, int HW) {\n"
                           "    for (int n = 0; n < N; ++n)\n        for (int c = 0; c < C; ++c)\n"
                           "            for (int p = 0; p < HW; ++p) {\n                const int i = (n * C + c) * HW + p;\n"
                           "                y[i] = std::max(x[i] + bias[c], 0.0f);\n            }\n}\n");
        Task t = load_task(dir);
        GenericKernels host = generic_kernels(t, Backend::Host);
        QCOMPARE(host.kernels.size(), std::size_t(2));
        const std::string& collapsed = host.kernels[1].source;
        QCOMPARE(host.kernels[1].family, std::string("generic/omp-collapse"));
        QVERIFY2(has(collapsed, "schedule(static) collapse(2)") && !has(collapsed, "collapse(3)"), collapsed.c_str());
        QVERIFY(instances_pass(t, host, {}, "nchw"));
    }

    /** The shapes users write: std::max, std::clamp, a ternary, fmaxf, memcpy of a row. */
    void user_shapes_are_read() {
        GenericKernels g = generic_kernels(
            flat_task("shapes", "#include <algorithm>\n#include <cmath>\n#include <cstring>\n"
                                "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                "    for (int i = 0; i < n; ++i) {\n"
                                "        const float v = std::clamp(x[i], -0.5f, 0.5f);\n"
                                "        y[i] = v > 0.0f ? std::max(v, 0.25f) : fmaxf(v, -0.25f);\n"
                                "    }\n"
                                "    for (int r = 0; r < 1; ++r) std::memcpy(y + r * 3, x + r * 3, 3 * sizeof(float));\n}\n"),
            Backend::Host);
        QVERIFY2(!g.kernels.empty(), g.reason.c_str());
        QCOMPARE(g.nests.size(), std::size_t(2));
        Evaluator ev(host_config());
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        Task t = flat_task("shapes-eval", "#include <algorithm>\n#include <cmath>\n#include <cstring>\n"
                                          "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                          "    for (int i = 0; i < n; ++i) {\n"
                                          "        const float v = std::clamp(x[i], -0.5f, 0.5f);\n"
                                          "        y[i] = v > 0.0f ? std::max(v, 0.25f) : fmaxf(v, -0.25f);\n"
                                          "    }\n"
                                          "    for (int r = 0; r < 1; ++r) std::memcpy(y + r * 3, x + r * 3, 3 * sizeof(float));\n}\n");
        for (const auto& k : generic_kernels(t, Backend::Host).kernels) {
            Diagnosis d = ev.evaluate(t, {k.source, "generic"}, opt);
            QVERIFY2(d.status == Status::Ok, (k.name + ": " + d.message + "\n" + d.compile.log + "\n" + k.source).c_str());
        }
    }

    /**
     * The <cmath> functions users call (softplus through log1p, floorf, std::fmod, std::abs of
     * an integer index) are pure: the loop still runs in parallel, and the kernels compile and
     * are correct on the host, and compile with nvcc.
     */
    void math_calls_are_read() {
        Task t = flat_task("math", "#include <cmath>\n#include <cstdlib>\n"
                                   "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                   "    for (int i = 0; i < n; ++i) {\n"
                                   "        const float v = x[std::abs(n / 2 - i) % n];\n"
                                   "        y[i] = std::log1p(std::exp(v)) + floorf(v) - std::fmod(v, 0.25f) + expm1f(v);\n"
                                   "    }\n}\n");
        GenericKernels host = generic_kernels(t, Backend::Host), cuda = generic_kernels(t, Backend::Cuda);
        QVERIFY2(!host.kernels.empty() && !cuda.kernels.empty(), host.reason.c_str());
        QVERIFY2(has(host.nests[0], "the loop over i (line 5): parallel"), host.nests[0].c_str());
        QVERIFY2(has(host.kernels[0].source, "std::abs("), host.kernels[0].source.c_str());
        QVERIFY(instances_pass(t, host, cuda, "math"));
    }

    /**
     * A filter's taps in a constant array at kf_solve's top (`const float w[3] = {...}`): each
     * loop that reads it gets its own copy with the same values, and the kernels are correct
     * on the host and compile with nvcc. An array at the top that the loop writes stays refused.
     */
    void constant_arrays_are_copied_into_the_loops() {
        const std::string taps = "#include <algorithm>\nextern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                                 "    const float w[3] = {0.25f, 0.5f, 0.25f};\n"
                                 "    for (int r = 0; r < rows; ++r)\n"
                                 "        for (int c = 0; c < cols; ++c) {\n"
                                 "            float acc = 0.f;\n"
                                 "            for (int k = -1; k <= 1; ++k) acc += w[k + 1] * x[r * cols + std::min(std::max(c + k, 0), cols - 1)];\n"
                                 "            y[r * cols + c] = acc;\n"
                                 "        }\n}\n";
        Task t = rows_task("taps", taps);
        GenericKernels host = generic_kernels(t, Backend::Host), cuda = generic_kernels(t, Backend::Cuda);
        QVERIFY2(!host.kernels.empty() && !cuda.kernels.empty(), host.reason.c_str());
        QVERIFY2(has(host.nests[0], "parallel"), host.nests[0].c_str());
        QVERIFY2(has(host.kernels[0].source, "w[3] = {0.25"), host.kernels[0].source.c_str());
        QVERIFY(instances_pass(t, host, cuda, "taps"));
        // Written in the loop, the array carries values from one row to the next.
        GenericKernels carried = generic_kernels(
            rows_task("taps-written", "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                                      "    float w[2] = {1.0f, 0.0f};\n"
                                      "    for (int r = 0; r < rows; ++r) {\n"
                                      "        for (int c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * w[0] + w[1];\n"
                                      "        w[1] = w[1] + 1.0f;\n    }\n}\n"),
            Backend::Host);
        QVERIFY(carried.kernels.empty());
        QVERIFY2(has(carried.reason, "kf_solve declares the local array w outside its loops (line 3)"), carried.reason.c_str());
    }

    /**
     * A std::vector declared in a row (its length known at run time): the host kernels keep
     * it, each thread its own; the CUDA kernels, where a thread can allocate none, are
     * refused, saying so, rather than written and failing to compile.
     */
    void run_time_vectors_stay_on_the_host() {
        Task t = rows_task("vecrow", "#include <vector>\n#include <cmath>\nextern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
            "    for (int r = 0; r < rows; ++r) {\n        std::vector<float> tmp(cols);\n"
            "        float s = 0;\n        for (int c = 0; c < cols; ++c) { tmp[c] = expf(x[r * cols + c]); s += tmp[c]; }\n"
            "        for (int c = 0; c < cols; ++c) y[r * cols + c] = tmp[c] / s;\n    }\n}\n");
        GenericKernels host = generic_kernels(t, Backend::Host), cuda = generic_kernels(t, Backend::Cuda);
        QVERIFY2(!host.kernels.empty(), host.reason.c_str());
        QVERIFY(instances_pass(t, host, {}, "vecrow"));
        QVERIFY2(cuda.kernels.empty(), cuda.kernels.empty() ? "" : cuda.kernels[0].source.c_str());
        QVERIFY2(has(cuda.reason, "kf_solve declares the vector tmp (line 6), whose length is known at run time"), cuda.reason.c_str());
    }

    /**
     * Scratch declared once at kf_solve's top for all rows (`std::vector<float> tmp(cols);`),
     * each row filling all of it before reading it: every row gets its own, and the rows run in
     * parallel. Scratch a row reads before filling it, or fills only in part, carries values
     * from one row to the next, and stays refused.
     */
    void scratch_filled_in_each_row_is_the_rows() {
        const auto softmax = [](const std::string& fill) {
            return "#include <vector>\n#include <cmath>\nextern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                   "    std::vector<float> tmp(cols);\n"
                   "    for (int r = 0; r < rows; ++r) {\n"
                   "        float s = 0.0f;\n" +
                   fill +
                   "        for (int c = 0; c < cols; ++c) s += tmp[c];\n"
                   "        for (int c = 0; c < cols; ++c) y[r * cols + c] = tmp[c] / s;\n    }\n}\n";
        };
        Task t = rows_task("scratch", softmax("        for (int c = 0; c < cols; ++c) { const float v = x[r * cols + c]; tmp[c] = expf(v); }\n"));
        GenericKernels host = generic_kernels(t, Backend::Host);
        QVERIFY2(!host.kernels.empty(), host.reason.c_str());
        QVERIFY2(has(host.nests[0], "the loop over r (line 6): parallel"), host.nests[0].c_str());
        QVERIFY(instances_pass(t, host, {}, "scratch"));
        // A C array of constant length filled the same way: the CUDA threads hold their own.
        Task fixed = rows_task("scratch-c", "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                                            "    float buf[64] = {};\n"
                                            "    for (int r = 0; r < rows; ++r) {\n"
                                            "        for (int c = 0; c < 64; ++c) buf[c] = c < cols ? x[r * cols + c] : 0.0f;\n"
                                            "        for (int c = 0; c < cols; ++c) y[r * cols + c] = buf[c] + buf[cols - 1 - c];\n    }\n}\n");
        GenericKernels fh = generic_kernels(fixed, Backend::Host), fc = generic_kernels(fixed, Backend::Cuda);
        QVERIFY2(!fh.kernels.empty() && !fc.kernels.empty(), (fh.reason + " | " + fc.reason).c_str());
        QVERIFY2(has(fc.nests[0], "the loop over r (line 4): parallel"), fc.nests[0].c_str());
        QVERIFY(instances_pass(fixed, fh, fc, "scratch-c"));
        const std::vector<std::pair<const char*, std::string>> carried = {
            {"read before filled", "        for (int c = 0; c < cols; ++c) y[r * cols + c] = tmp[c];\n"
                                   "        for (int c = 0; c < cols; ++c) tmp[c] = expf(x[r * cols + c]);\n"},
            {"filled in part", "        for (int c = 1; c < cols; ++c) tmp[c] = expf(x[r * cols + c]);\n"},
            {"filled then left", "        for (int c = 0; c < cols; ++c) { tmp[c] = expf(x[r * cols + c]); if (tmp[c] > 2.0f) break; }\n"},
            {"filled from itself", "        for (int c = 0; c < cols; ++c) tmp[c] = tmp[c] * 0.5f + expf(x[r * cols + c]);\n"}};
        for (const auto& [what, fill] : carried) {
            GenericKernels g = generic_kernels(rows_task("scratch-carried", softmax(fill)), Backend::Host);
            QVERIFY2(g.kernels.empty(), what);
            QVERIFY2(has(g.reason, "kf_solve declares the local array tmp outside its loops (line 5)"), (what + (": " + g.reason)).c_str());
        }
    }

    /**
     * References written the way users write them (tests/data/user_shapes: std::max and
     * std::min, ternaries, if and continue, index tensors of i32 and i64, per-row and
     * per-column operands, row pointers, strided and padded windows, <cmath> calls, a lambda,
     * scratch arrays, an argmax, two outputs): each gets generic kernels on both backends, the
     * host ones correct and the CUDA ones compiled by nvcc, or a reason where a backend gets none.
     */
    void user_shapes_get_kernels_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("no_cuda");  // the reason there is no CUDA kernel, where there is none
        for (const auto& e : std::filesystem::directory_iterator(kftest::data("user_shapes"))) {
            const std::string n = e.path().filename().string();
            QTest::newRow(n.c_str()) << QString::fromStdString(n)
                                     << (n == "softmax_vec" ? QString("whose length is known at run time") : QString());
        }
    }

    void user_shapes_get_kernels() {
        QFETCH(QString, name);
        QFETCH(QString, no_cuda);
        Task t = load_task(kftest::data("user_shapes/" + name.toStdString()));
        GenericKernels host = generic_kernels(t, Backend::Host), cuda = generic_kernels(t, Backend::Cuda);
        QVERIFY2(!host.kernels.empty(), host.reason.c_str());
        if (!no_cuda.isEmpty()) {
            QVERIFY(cuda.kernels.empty());
            QVERIFY2(has(cuda.reason, no_cuda.toStdString()), cuda.reason.c_str());
        } else {
            QVERIFY2(!cuda.kernels.empty(), cuda.reason.c_str());
        }
        QVERIFY(instances_pass(t, host, cuda, "user-" + name.toStdString()));
    }

    /**
     * A loop down the columns, y[r * cols + c] over c < cols: its iterations' elements are a
     * pitch (cols) apart in every row, so they are spread. Refused where they are not: a
     * neighbour's element written too, or c running past a row's width.
     */
    void column_loops_are_spread() {
        GenericKernels cols = generic_kernels(
            rows_task("col-scale", "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n"
                                   "    for (int c = 0; c < cols; ++c) {\n        float s = 0.0f;\n"
                                   "        for (int r = 0; r < rows; ++r) s += x[r * cols + c];\n"
                                   "        for (int r = 0; r < rows; ++r) y[r * cols + c] = x[r * cols + c] / (s + 100.0f);\n    }\n}\n"),
            Backend::Host);
        QVERIFY2(!cols.kernels.empty(), cols.reason.c_str());
        QVERIFY2(has(cols.nests[0], "the loop over c (line 3): parallel"), cols.nests[0].c_str());
        const std::vector<std::pair<const char*, std::string>> overlapping = {
            {"a neighbour written", "    for (int c = 0; c < cols - 1; ++c)\n"
                                    "        for (int r = 0; r < rows; ++r) { y[r * cols + c] = x[r * cols + c]; y[r * cols + c + 1] = 0.0f; }\n"},
            {"past a row's width", "    for (int c = 0; c < 2 * cols; ++c)\n"
                                   "        for (int r = 0; r < rows - 1; ++r) y[r * cols + c] = x[r * cols + c] * 2.0f;\n"}};
        for (const auto& [what, body] : overlapping) {
            GenericKernels g = generic_kernels(
                rows_task("col-overlap", "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n" + body + "}\n"),
                Backend::Host);
            const std::string all = g.reason + "\n" + joined(g.nests);
            QVERIFY2(has(all, "two iterations of the loop over c may access one element of y"), (what + (": " + all)).c_str());
            QVERIFY2(!has(all, "the loop over c (line 3): parallel"), (what + (": " + all)).c_str());
        }
    }

    /** A search from scratch of a task no template knows ends with generic kernels evaluated and named. */
    void search_from_scratch_tries_generic_kernels_data() {
        QTest::addColumn<QString>("task");
        QTest::newRow("embedding_gather") << "embedding_gather";
        QTest::newRow("bucketize") << "bucketize";
    }

    void search_from_scratch_tries_generic_kernels() {
        QFETCH(QString, task);
        Task t = load_task(kftest::data("tasks/" + task.toStdString()));
        std::string why;
        QVERIFY2(templates_for_task(t, Backend::Host, &why).empty(), "a template knows this task");
        Evaluator ev(host_config());
        ProjectStore store = ProjectStore::create(kftest::temp_dir("generic-evolve"), "p");
        EvolveOptions o;
        o.search.budget = 6;
        o.search.islands.islands = 2;
        o.search.seed = 3;
        o.eval.min_time_ms = 20;
        o.eval.min_reps = 3;
        o.eval.warmup = 1;
        o.eval.trials = 2;
        o.confirm_rounds = 0;
        o.seed_library = kftest::source_dir() / "resources" / "library" / "seed.json";
        EvolveOutcome out = evolve(t, ev, store, o);
        RunSummary s = summarize_run(store, out.run_id);
        qInfo("%s: %s", t.name.c_str(), s.line().c_str());
        QVERIFY2(!s.generic.empty(), s.line().c_str());
        int correct = 0;
        for (const auto& g : s.generic) correct += g.correct;
        QVERIFY2(correct > 0, s.line().c_str());
        QVERIFY2(s.line().find("generic kernels tried: generic/omp") != std::string::npos, s.line().c_str());
        QVERIFY(s.to_json().contains("generic"));
        bool logged = false;
        for (const auto& e : store.events(out.run_id))
            if (e.kind == EventKind::Generic) logged = e.payload.value("message", std::string()).find("generic kernels from the reference's loops") == 0;
        QVERIFY(logged);
    }
};

QTEST_GUILESS_MAIN(TestGeneric)
#include "test_generic.moc"
