// The AST recogniser of references (kf/recognise.h): kf_solve read through libclang, the
// computations it derives for the test tasks (their host template instances checked against
// the reference), its independence of formatting, its refusals, and the fallback to the
// token recogniser where libclang cannot be loaded.
#include <QtTest>

#include <cstdlib>

#include "kf/evaluator.h"
#include "kf/experts.h"
#include "kf/recognise.h"
#include "kf/templates.h"
#include "kf/tunables.h"
#include "testsupport.h"

using namespace kf;

namespace {

/** A test task (tests/data/tasks/<name>) or a bundled one (level<N>/<name>), its computation removed. */
Task task_without_computation(const std::string& name) {
    Task t =
        load_task(name.rfind("level", 0) == 0 ? kftest::source_dir() / "tasks" / name : kftest::data("tasks/" + name));
    t.computation.reset();
    return t;
}

/** `src` read as the task's reference: derived with the summary `derived`, or (empty) refused with a reason containing `why`. */
void expect_reading(const std::string& task, const std::string& src, const QString& derived, const QString& why) {
    Recognition r = recognise_source(task_without_computation(task), src, "ref.cpp", Recogniser::Libclang);
    if (!derived.isEmpty()) {
        QVERIFY2(r.computation, r.reason.c_str());
        QCOMPARE(QString::fromStdString(r.computation->summary()), derived);
        return;
    }
    QVERIFY2(!r.computation, r.computation ? r.computation->summary().c_str() : "");
    QVERIFY2(r.reason.find(why.toStdString()) != std::string::npos, r.reason.c_str());
}

/** Sets an environment variable for one scope. */
class EnvSetting {
public:
    EnvSetting(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        qputenv(name, QByteArray::fromStdString(value));
    }
    ~EnvSetting() {
        if (old_)
            qputenv(name_, QByteArray::fromStdString(*old_));
        else
            qunsetenv(name_);
    }
    EnvSetting(const EnvSetting&) = delete;
    EnvSetting& operator=(const EnvSetting&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

const char* kRowsHead =
    "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n";
const char* kGemmHead =
    "#include \"kf_task.h\"\n#include <cmath>\nextern \"C\" void kf_solve(const float* A, const float* B, const float* "
    "bias, float* C, int M, int N, int K) {\n";

}  // namespace

class TestRecognise : public QObject {
    Q_OBJECT

private:
    std::filesystem::path cache_;

    void need_libclang() {
        std::string why;
        if (libclang_available(&why)) return;
        // Under ctest, where the build found libclang's header, it must load.
        if (qEnvironmentVariableIsSet("KF_EXPECT_LIBCLANG")) QFAIL(("libclang does not load: " + why).c_str());
        QSKIP(why.c_str());
    }

private slots:
    void initTestCase() { cache_ = kftest::temp_dir("recognise-cache"); }

    void derives_the_test_tasks_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("shape");
        QTest::newRow("sigmoid") << "sigmoid"
                                 << "elementwise"
                                 << "an elementwise loop";
        QTest::newRow("row_max") << "row_max"
                                 << "row_reduce"
                                 << "a row reduction";
        QTest::newRow("rmsnorm") << "rmsnorm"
                                 << "row_normalize"
                                 << "reductions over each row";
        QTest::newRow("matvec") << "matvec"
                                << "row_reduce"
                                << "a row reduction";
        QTest::newRow("add_layernorm") << "add_layernorm"
                                       << "row_normalize"
                                       << "reductions over each row";
        QTest::newRow("col_std") << "col_std"
                                 << "col_reduce"
                                 << "a column reduction";
        QTest::newRow("scaled_transpose") << "scaled_transpose"
                                          << "transpose"
                                          << "a transpose";
        QTest::newRow("row_cummax") << "row_cummax"
                                    << "row_scan"
                                    << "a running combine along each row";
        QTest::newRow("col_cumsum") << "col_cumsum"
                                    << "col_scan"
                                    << "a running combine down each column";
        QTest::newRow("blur3x3") << "blur3x3"
                                 << "stencil"
                                 << "a stencil with an edge branch";
        QTest::newRow("dwconv1d (zero padding, weights per channel)") << "dwconv1d"
                                                                      << "stencil"
                                                                      << "a stencil with zero padding";
        QTest::newRow("smooth_clamp (clamped padding, a helper inlined)") << "smooth_clamp"
                                                                          << "stencil"
                                                                          << "a stencil with clamped padding";
        QTest::newRow("bucket_count (a histogram after a zeroing loop)") << "bucket_count"
                                                                         << "histogram"
                                                                         << "a histogram";
        QTest::newRow("scale_add") << "scale_add"
                                   << "elementwise"
                                   << "an elementwise loop";
        QTest::newRow("heavy_map (a sum over a constant-bound loop, unrolled)")
            << "heavy_map"
            << "elementwise"
            << "an elementwise loop, its inner loops unrolled";
        QTest::newRow("poly_eval (Horner's rule counting down, unrolled)")
            << "poly_eval"
            << "elementwise"
            << "an elementwise loop, its inner loops unrolled";
        QTest::newRow("linear_tanh (a matrix product with an epilogue)") << "linear_tanh"
                                                                         << "gemm"
                                                                         << "a matrix product";
        QTest::newRow("level1/matmul (i-k-j, a row of sums in a std::vector)") << "level1/matmul"
                                                                              << "gemm"
                                                                              << "a matrix product (a row of sums)";
        QTest::newRow("level2/gemm_bias_relu (the same, an epilogue of a scalar)") << "level2/gemm_bias_relu"
                                                                                 << "gemm"
                                                                                 << "a matrix product (a row of sums)";
        QTest::newRow("level1/gelu") << "level1/gelu"
                                     << "elementwise"
                                     << "an elementwise loop";
        QTest::newRow("level1/row_sum") << "level1/row_sum"
                                        << "row_reduce"
                                        << "a row reduction";
        QTest::newRow("level1/softmax (output as scratch)") << "level1/softmax"
                                                            << "row_normalize"
                                                            << "reductions over each row";
        QTest::newRow("level2/masked_softmax (a mask, a flag, an exit for the rows with no kept column)")
            << "level2/masked_softmax"
            << "row_normalize"
            << "reductions over each row, then every element of the row, with an exit for the rows where a flag stays false";
        QTest::newRow("level1/histogram (counts in a local array filled with 0, bytes in range)")
            << "level1/histogram"
            << "histogram"
            << "a histogram counted in a local array, then copied";
        QTest::newRow("level1/layernorm") << "level1/layernorm"
                                          << "row_normalize"
                                          << "reductions over each row";
        QTest::newRow("level1/scan") << "level1/scan"
                                     << "row_scan"
                                     << "a running combine along each row";
        QTest::newRow("level1/transpose") << "level1/transpose"
                                          << "transpose"
                                          << "a transpose";
        QTest::newRow("level1/stencil2d") << "level1/stencil2d"
                                          << "stencil"
                                          << "a stencil with an edge branch";
    }

    /** Each derived computation's host template instances pass the reference's checks. */
    void derives_the_test_tasks() {
        need_libclang();
        QFETCH(QString, task);
        QFETCH(QString, op);
        QFETCH(QString, shape);
        Task t = task_without_computation(task.toStdString());
        Recognition r = recognise_reference(t, Backend::Host, Recogniser::Libclang);
        QVERIFY2(r.computation, r.reason.c_str());
        const Computation& c = *r.computation;
        QCOMPARE(c.op, op.toStdString());
        QVERIFY2(c.origin.rfind("derived from reference.cpp (libclang): " + shape.toStdString(), 0) == 0,
                 c.origin.c_str());
        qInfo("%s", c.summary().c_str());
        t.computation = c;
        std::string why;
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Host, &why);
        QVERIFY2(!ks.empty(), why.c_str());
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache_;
        Evaluator ev(cfg);
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        for (const auto& k : ks) {
            TunableSpace space = parse_tunables(k.source);
            Diagnosis d = ev.evaluate(t, {instantiate(k.source, space, space.defaults()), "tmpl"}, opt);
            QVERIFY2(d.status == Status::Ok, (k.name + ": " + d.message + "\n" + d.compile.log).c_str());
        }
    }

    /** The index forms, row pointers, loop orders and layouts of text that mean the same loops. */
    void independent_of_formatting_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("summary");
        const QString row_max = "row_reduce over rows x cols: m = max(x); y = m";
        QTest::newRow("row pointer, first element")
            << "row_max"
            << QString(kRowsHead) +
                   "  for (int r = 0; r < rows; ++r) {\n    const float* xr = x + (long long)r * cols;\n    float m = "
                   "xr[0];\n"
                   "    for (int c = 1; c < cols; c++) m = std::max(m, xr[c]);\n    y[r] = m;\n  }\n}\n"
            << row_max;
        QTest::newRow("index variable, column first")
            << "row_max"
            << QString(kRowsHead) +
                   "  if (rows <= 0 || cols <= 0) return;\n  for (long long r = 0; r < rows; r += 1) {\n"
                   "    const long long base = r * (long long)cols;  // the row\n    float m = -INFINITY;\n"
                   "    for (int c = 0;\n         c < cols;\n         ++c) { m = fmaxf(m, x[c + base]); }\n    y[r] = "
                   "m;\n  }\n}\n"
            << row_max;
        QTest::newRow("numeric_limits, std::fmax")
            << "row_max"
            << QString("#include <limits>\n") + kRowsHead +
                   "  for (int r = 0; r < rows; ++r) { float m = -std::numeric_limits<float>::infinity();\n"
                   "    for (int c = 0; c < cols; ++c) m = std::fmax(x[cols * r + c], m);\n    y[r] = "
                   "static_cast<float>(m); }\n}\n"
            << row_max;
        QTest::newRow("transpose, rows outside") << "scaled_transpose"
                                                 << "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* "
                                                    "x, float* y, int rows, int cols, float alpha) {\n"
                                                    "  for (int r = 0; r < rows; ++r)\n    for (int c = 0; c < cols; "
                                                    "++c) y[r + (long long)c * rows] = x[c + r * cols] * alpha;\n}\n"
                                                 << "transpose of rows x cols: y[c, r] = x * alpha";
        QTest::newRow("stencil, offsets written out")
            << "blur3x3"
            << "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* img, float* out, int h, int w) {\n"
               "  for (int i = 0; i < h; ++i)\n    for (int j = 0; j < w; ++j) {\n"
               "      if (i < 1 || i >= h - 1 || j <= 0 || j > w - 2) out[i * w + j] = img[i * w + j];\n"
               "      else out[i * w + j] = 0.25f * (img[(i - 1) * w + j] + img[(i + 1) * w + j] + img[i * w + j - 1] "
               "+ img[i * w + j + 1]);\n"
               "    }\n}\n"
            << "stencil over h x w (radius 1): out = 0.25 * (at(img, -1, 0) + at(img, 1, 0) + at(img, 0, -1) + at(img, "
               "0, 1)); "
               "within 1 of an edge out = img";
        QTest::newRow("unrolled loop: integer arithmetic folded as C does it, not past a conversion")
            << "sigmoid"
            << "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
               "  for (int i = 0; i < n; ++i) {\n    float s = 0;\n"
               "    for (int k = 2; k >= 1; k -= 1) s += (float)k / 2 + k / 2 + 1.0f / (k + 1);\n"
               "    y[i] = x[i] * s;\n  }\n}\n"
            << "elementwise over the output's elements: y = x * (2 / 2 + 1 + 1 / 3 + (1 / 2 + 0 + 1 / 2))";
        const QString linear_tanh = "gemm M x N over K: acc = sum(A * B); C = tanh(acc + bias)";
        QTest::newRow("gemm, columns outside, factors swapped, double accumulator")
            << "linear_tanh"
            << QString(kGemmHead) +
                   "  for (int n = 0; n < N; ++n)\n    for (int m = 0; m < M; ++m) {\n      double acc = 0.0;\n"
                   "      for (int k = 0; k < K; ++k) acc += (double)B[(long long)k * N + n] * A[m * K + k];\n"
                   "      C[n + m * N] = (float)std::tanh(acc + bias[n]);\n    }\n}\n"
            << linear_tanh;
        QTest::newRow("gemm, row pointers, the bias added after the sum")
            << "linear_tanh"
            << QString(kGemmHead) +
                   "  for (int m = 0; m < M; ++m) {\n    const float* a = A + (long long)m * K;\n"
                   "    float* c = C + m * N;\n"
                   "    for (int n = 0; n < N; ++n) {\n      float acc;\n      acc = 0;\n"
                   "      for (int k = 0; k < K; ++k) { const float b = B[k * N + n]; acc = acc + a[k] * b; }\n"
                   "      acc += bias[n];\n      const float v = tanhf(acc);\n      c[n] = v;\n    }\n  }\n}\n"
            << linear_tanh;
    }

    void independent_of_formatting() {
        need_libclang();
        QFETCH(QString, task);
        QFETCH(QString, source);
        QFETCH(QString, summary);
        Task t = task_without_computation(task.toStdString());
        Recognition r = recognise_source(t, source.toStdString(), "ref.cpp", Recogniser::Libclang);
        QVERIFY2(r.computation, r.reason.c_str());
        QCOMPARE(r.computation->summary(), summary.toStdString());
        QVERIFY(r.computation->origin.rfind("derived from ref.cpp (libclang): ", 0) == 0);
    }

    /** What it cannot read is refused with the construct and, where there is one, its line. */
    void refuses_with_the_reason_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("why");
        QTest::newRow("a call") << "row_max"
                                << "  std::memcpy(y, x, rows * sizeof(float));"
                                << "kf_solve has a call of memcpy (line 3), which the recogniser does not model";
        QTest::newRow("a shifted read") << "row_max"
                                        << "  for (int r = 0; r < rows; ++r) { float m = -INFINITY; for (int c = 0; c "
                                           "< cols; ++c) m = std::max(m, x[r * cols + c + 1]); y[r] = m; }"
                                        << "reads x[r * cols + c + 1], not x[r * cols + c], x[c] or x[r] (line 3)";
        // The loops are read, but into a computation whose language lacks log1p: the reason
        // names the derived computation's field, not the task's file, where none was written.
        QTest::newRow("a function the computation lacks")
            << "row_max"
            << "  for (int r = 0; r < rows; ++r) { float m = -INFINITY; for (int c = 0; c < cols; ++c) m = std::max(m, "
               "x[r * cols + c]); y[r] = std::log1p(m); }"
            << "but the derived computation.";
        QTest::newRow("not the identity") << "row_max"
                                          << "  for (int r = 0; r < rows; ++r) { float m = 0; for (int c = 0; c < "
                                             "cols; ++c) m = std::max(m, x[r * cols + c]); y[r] = m; }"
                                          << "m starts at 0, which is not the identity of max (line 3)";
        QTest::newRow("two nests")
            << "row_max"
            << "  for (int r = 0; r < rows; ++r) y[r] = 0;\n  for (int r = 0; r < rows; ++r) y[r] += x[r];"
            << "kf_solve has more than one loop nest (lines 3 and 4)";
        QTest::newRow("a parse error") << "row_max"
                                       << "  for (int r = 0; r < rows; ++r) y[r] = undefined_name;"
                                       << "it does not parse: line 3: use of undeclared identifier 'undefined_name'";
        QTest::newRow("a file it may not read") << "row_max"
                                                << "#include \"/etc/passwd\"\n"
                                                << "it names a file the recogniser may not read";
        QTest::newRow("a padded stencil")
            << "blur3x3"
            << "  for (int i = 1; i + 1 < h; ++i) for (int j = 0; j < w; ++j) out[i * w + j] = img[(i - 1) * w + j];"
            << "kf_solve has a for loop whose condition does not compare its variable (line 3)";
        QTest::newRow("neighbours without an edge branch")
            << "blur3x3"
            << "  for (int i = 0; i < h; ++i) for (int j = 0; j < w; ++j) out[i * w + j] = img[(i - 1) * w + j] + "
               "img[i * w + j];"
            << "reads neighbours at offsets up to 1 without a branch for the edge cells";
        QTest::newRow("an edge branch too narrow")
            << "blur3x3"
            << "  for (int i = 0; i < h; ++i) for (int j = 0; j < w; ++j) {\n"
               "    if (i == 0 || i == h - 1) { out[i * w + j] = 0; continue; }\n"
               "    out[i * w + j] = img[(i - 1) * w + j - 1]; }"
            << "the edge branch does not select exactly the cells within the reach of the neighbour reads (1 rows, 1 "
               "columns) (line 4)";
        QTest::newRow("a bounds check narrower than the read")
            << "blur3x3"
            << "  for (int i = 0; i < h; ++i) for (int j = 0; j < w; ++j) {\n"
               "    float s = img[i * w + j];\n    if (j >= 1) s += img[i * w + j + 1];\n    out[i * w + j] = s; }"
            << "the bounds check j >= 1 does not keep exactly the cells whose neighbour reads in img[i * w + j + 1] "
               "are inside the layout (line 5)";
        QTest::newRow("a clamp past the last column")
            << "blur3x3"
            << "  for (int i = 0; i < h; ++i) for (int j = 0; j < w; ++j)\n"
               "    out[i * w + j] = img[i * w + (j + 1 > w ? w : j + 1)];"
            << "not a neighbour whose row and column are each clamped to the layout (the clamp is not to [0, w - 1])";
        QTest::newRow("a product reading the row as a column")
            << "linear_tanh"
            << "  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) {\n    float acc = 0;\n"
               "    for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + m];\n    C[m * N + n] = acc; }"
            << "sums A[m * K + k] * B[k * N + m], not a rows x inner factor [r * K + k] times an inner x cols factor "
               "[k * cols + c] of the loops over m and n (line 6)";
        QTest::newRow("a product with a transposed factor")
            << "linear_tanh"
            << "  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) {\n    float acc = 0;\n"
               "    for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[n * K + k];\n    C[m * N + n] = acc; }"
            << "B[n * K + k] is a transposed factor, and a gemm reads its inner x cols factor at [k * cols + c] "
               "(line 6)";
        QTest::newRow("a sum not from 0")
            << "linear_tanh"
            << "  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) {\n    float acc = bias[n];\n"
               "    for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];\n    C[m * N + n] = acc; }"
            << "acc starts at bias[n]: a matrix product's sum starts at 0 (line 5)";
        QTest::newRow("a product written transposed")
            << "linear_tanh"
            << "  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) {\n    float acc = 0;\n"
               "    for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];\n    C[n * M + m] = acc; }"
            << "writes C[n * M + m], not C[m * N + n] of the product's rows and columns (line 7)";
        QTest::newRow("a sum of a scaled product")
            << "linear_tanh"
            << "  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) {\n    float acc = 0;\n"
               "    for (int k = 0; k < K; ++k) acc += 2 * A[m * K + k] * B[k * N + n];\n    C[m * N + n] = acc; }"
            << "sums 2 * A[m * K + k] * B[k * N + n], not a product of two tensor reads (line 6)";
        QTest::newRow("a loop inside an element to a size")
            << "blur3x3"
            << "  for (int i = 0; i < h; ++i) {\n    float s = 0;\n    for (int k = 1; k <= w; ++k) s += 1.0f / k;\n"
               "    out[i] = img[i] * s; }"
            << "the loop over k inside each element runs from 1 to w + 1, not between integer constants (only "
               "constant-bound loops inside an element are unrolled) (line 5)";
        QTest::newRow("a loop inside an element too long to unroll")
            << "blur3x3"
            << "  for (int i = 0; i < h; ++i) {\n    float s = 0;\n    for (int k = 1000; k > 0; --k) s += 1.0f / k;\n"
               "    out[i] = img[i] * s; }"
            << "the loop over k runs more than 256 times, too many to unroll (line 5)";
        QTest::newRow("counts without a bin check")
            << "blur3x3"
            << "  for (int b = 0; b < w; ++b) out[b] = 0;\n  for (int i = 0; i < h; ++i) out[(int)img[i]] += 1;"
            << "counts out[(int)img[i]] without checking that the bin is in [0, bins) (line 4)";
    }

    void refuses_with_the_reason() {
        need_libclang();
        QFETCH(QString, task);
        QFETCH(QString, body);
        QFETCH(QString, why);
        Task t = task_without_computation(task.toStdString());
        std::string head =
            "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* img, float* out, int h, int w) {\n";
        if (task == "row_max") head = kRowsHead;
        if (task == "linear_tanh") head = kGemmHead;
        if (body.startsWith("#include")) head = body.toStdString() + head, body.clear();
        Recognition r = recognise_source(t, head + body.toStdString() + "\n}\n", "ref.cpp", Recogniser::Libclang);
        QVERIFY2(!r.computation, r.computation ? r.computation->summary().c_str() : "");
        QVERIFY2(r.reason.rfind("cannot derive the computation from ref.cpp: ", 0) == 0, r.reason.c_str());
        QVERIFY2(r.reason.find(why.toStdString()) != std::string::npos, r.reason.c_str());
        QVERIFY2(r.reason.find("task.json") == std::string::npos, r.reason.c_str());
    }

    /**
     * Constructs users write, each read as what it means or refused naming it: lambdas without
     * captures and static or inline functions whose body is declarations of scalars then one
     * return, read in place; scalars initialised in braces; a flat loop taking each element's
     * column; a conversion of a floating-point value to an integer, which is not dropped.
     */
    void users_constructs_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("derived");  // the summary, or empty
        QTest::addColumn<QString>("why");
        const QString cols_head =
            "#include \"kf_task.h\"\n#include <algorithm>\nextern \"C\" void kf_solve(const float* x, const float* scale, "
            "const float* bias, float* y, int rows, int cols) {\n";
        const QString bias_relu = "elementwise over rows x cols: y = max(x * scale + bias, 0)";
        QTest::newRow("a lambda declared in kf_solve")
            << "bias_relu_cols"
            << cols_head + "  auto affine_relu = [](float v, float s, float b) { return std::max(v * s + b, 0.0f); };\n"
                           "  for (int r = 0; r < rows; ++r)\n    for (int c = 0; c < cols; ++c)\n"
                           "      y[(long long)r * cols + c] = affine_relu(x[(long long)r * cols + c], scale[c], bias[c]);\n}\n"
            << bias_relu << "";
        QTest::newRow("a lambda declared in the loop, with a declaration")
            << "bias_relu_cols"
            << cols_head + "  for (int r = 0; r < rows; ++r)\n    for (int c = 0; c < cols; ++c) {\n"
                           "      const auto f = [](float v, float s, float b) { const float t = v * s + b; return std::max(t, 0.0f); };\n"
                           "      y[r * cols + c] = f(x[r * cols + c], scale[c], bias[c]);\n    }\n}\n"
            << bias_relu << "";
        QTest::newRow("a flat loop taking each element's column, c = i % cols")
            << "bias_relu_cols"
            << cols_head + "  const long n = (long)rows * cols;\n  for (long i = 0; i < n; ++i) {\n    const int c = i % cols;\n"
                           "    y[i] = std::max(x[i] * scale[c] + bias[c], 0.0f);\n  }\n}\n"
            << bias_relu << "";
        QTest::newRow("a flat loop whose column count does not divide it")
            << "bias_relu_cols"
            << cols_head + "  const long n = (long)rows * cols;\n  for (long i = 0; i < n; ++i) {\n    const int c = i % 3;\n"
                           "    y[i] = std::max(x[i] * scale[c] + bias[c], 0.0f);\n  }\n}\n"
            << ""
            << "the loop over i runs to n, not a multiple of 3, the columns its element's position is taken in (line 5)";
        QTest::newRow("a lambda that captures")
            << "bias_relu_cols"
            << cols_head + "  for (int r = 0; r < rows; ++r)\n    for (int c = 0; c < cols; ++c) {\n"
                           "      auto f = [&](float v) { return std::max(v * scale[c] + bias[c], 0.0f); };\n"
                           "      y[r * cols + c] = f(x[r * cols + c]);\n    }\n}\n"
            << ""
            << "kf_solve has the lambda f, which captures names (only a lambda without captures, [], is inlined) (line 6)";
        QTest::newRow("a helper with declarations before its return")
            << "sigmoid"
            << "#include \"kf_task.h\"\n#include <cmath>\n"
               "static inline float sigmoid_of(float v) {\n  const float e = std::exp(-v);\n  const float d = 1.0f + e;\n"
               "  return 1.0f / d;\n}\n"
               "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
               "  for (int i = 0; i < n; ++i) y[i] = sigmoid_of(x[i]);\n}\n"
            << "elementwise over the output's elements: y = 1 / (1 + exp(-x))" << "";
        QTest::newRow("a helper with a branch")
            << "sigmoid"
            << "#include \"kf_task.h\"\n#include <cmath>\n"
               "static inline float clip(float v) {\n  if (v > 1.0f) return 1.0f;\n  return v;\n}\n"
               "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
               "  for (int i = 0; i < n; ++i) y[i] = clip(x[i]);\n}\n"
            << ""
            << "a call of clip, whose body is not declarations then one return: its body has more than declarations "
               "and one return (line 8)";
        QTest::newRow("an accumulator initialised in braces")
            << "row_max"
            << QString(kRowsHead) +
                   "  for (int r = 0; r < rows; ++r) {\n    float m{-INFINITY};\n"
                   "    for (int c = 0; c < cols; ++c) m = std::max(m, x[r * cols + c]);\n    y[r] = m;\n  }\n}\n"
            << "row_reduce over rows x cols: m = max(x); y = m" << "";
        QTest::newRow("a value truncated to an integer")
            << "sigmoid"
            << "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
               "  for (int i = 0; i < n; ++i) y[i] = (float)(int)(x[i] * 4.0f) / 4.0f;\n}\n"
            << ""
            << "converts x * 4 to int (truncating it), which the computation language does not model (line 3)";
        QTest::newRow("a value truncated where it is declared")
            << "sigmoid"
            << "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
               "  for (int i = 0; i < n; ++i) { const int q = x[i] * 4.0f; y[i] = q * 0.25f; }\n}\n"
            << ""
            << "the value of q (line 3) (int)(x[i] * 4) is not an integer expression";
    }

    void users_constructs() {
        need_libclang();
        QFETCH(QString, task);
        QFETCH(QString, source);
        QFETCH(QString, derived);
        QFETCH(QString, why);
        expect_reading(task.toStdString(), source.toStdString(), derived, why);
    }

    /** A histogram's bin converted from a floating-point value: the map, truncated as the histogram truncates it. */
    void truncated_bins_are_the_map() {
        need_libclang();
        auto dir = kftest::temp_dir("recognise-float-bins");
        kftest::write_file(dir / "task.json", R"({
  "format": 1, "name": "t", "op_class": "histogram", "sizes": ["n"],
  "tensors": [{"name": "x", "role": "input", "dtype": "f32", "shape": ["n"], "init": {"dist": "uniform", "low": 0, "high": 1}},
              {"name": "counts", "role": "output", "dtype": "i32", "shape": ["16"]}],
  "tolerance": {"atol": 0, "rtol": 0},
  "work": {"flops": "n", "bytes": "4 * n"},
  "cases": [{"name": "p", "primary": true, "sizes": {"n": 64}}, {"name": "v", "sizes": {"n": 7}}],
  "reference": {"host": "reference.cpp"}
})");
        const std::string src =
            "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, int32_t* counts, int n) {\n"
            "  for (int b = 0; b < 16; ++b) counts[b] = 0;\n"
            "  for (int i = 0; i < n; ++i) { const int b = x[i] * 16.0f; if (b >= 0 && b < 16) counts[b] += 1; }\n}\n";
        kftest::write_file(dir / "reference.cpp", src);
        Recognition r = recognise_source(load_task(dir), src, "ref.cpp", Recogniser::Libclang);
        QVERIFY2(r.computation, r.reason.c_str());
        QCOMPARE(r.computation->summary(), std::string("histogram of 16 bins: counts[x * 16] += 1"));
    }

    /** The i-k-j product into a row of sums (a std::vector): what it reads, and why it refuses the rest. */
    void row_of_sums_products_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("derived");  // the summary, or empty
        QTest::addColumn<QString>("why");
        const QString zero = "    for (int n = 0; n < N; ++n) acc[n] = 0;\n";
        QTest::newRow("per row, a vector filled with 0, a scalar epilogue")
            << "  for (int m = 0; m < M; ++m) {\n    std::vector<float> acc(N, 0.0f);\n"
               "    for (int k = 0; k < K; ++k) for (int n = 0; n < N; ++n) acc[n] += A[m * K + k] * B[k * N + n];\n"
               "    for (int n = 0; n < N; ++n) { const float v = acc[n] + bias[n]; C[m * N + n] = std::tanh(v); } }"
            << "gemm M x N over K: acc = sum(A * B); C = tanh(acc + bias)"
            << "";
        QTest::newRow("a vector read as something else")
            << "  std::vector<double> acc(N);\n  for (int i = 0; i < M * N; ++i) C[i] = A[i] * 2;"
            << ""
            << "declares the vector acc, which is read only as a matrix product's row of sums";
        QTest::newRow("a row of sums not zeroed first")
            << "  std::vector<double> acc(N);\n  for (int m = 0; m < M; ++m) {\n"
               "    for (int n = 0; n < N; ++n) acc[n] = bias[n];\n"
               "    for (int k = 0; k < K; ++k) for (int n = 0; n < N; ++n) acc[n] += A[m * K + k] * B[k * N + n];\n"
               "    for (int n = 0; n < N; ++n) C[m * N + n] = acc[n]; }"
            << ""
            << "the first loop of each row does not set the row of sums to 0 (acc[n] = 0) (line 7)";
        QTest::newRow("a transposed factor")
            << "  std::vector<double> acc(N);\n  for (int m = 0; m < M; ++m) {\n" + zero +
                   "    for (int k = 0; k < K; ++k) for (int n = 0; n < N; ++n) acc[n] += A[m * K + k] * B[n * K + k];\n"
                   "    for (int n = 0; n < N; ++n) C[m * N + n] = acc[n]; }"
            << ""
            << "sums A[m * K + k] * B[n * K + k], not a rows x inner factor [m * K + k] times an inner x cols factor [k * cols + n] (line 8)";
        QTest::newRow("the output's loop reads another column")
            << "  std::vector<double> acc(N);\n  for (int m = 0; m < M; ++m) {\n" + zero +
                   "    for (int k = 0; k < K; ++k) for (int n = 0; n < N; ++n) acc[n] += A[m * K + k] * B[k * N + n];\n"
                   "    for (int n = 0; n < N; ++n) C[m * N + n] = acc[N - 1 - n]; }"
            << ""
            << "reads acc[N - 1 - n], not acc[n] (line 9)";
        QTest::newRow("a sum over a shorter row")
            << "  std::vector<double> acc(N);\n  for (int m = 0; m < M; ++m) {\n" + zero +
                   "    for (int k = 0; k < K; ++k) for (int n = 0; n < K; ++n) acc[n] += A[m * K + k] * B[k * N + n];\n"
                   "    for (int n = 0; n < N; ++n) C[m * N + n] = acc[n]; }"
            << ""
            << "the loop summing into acc runs to K, not to the row's length (line 8)";
    }

    void row_of_sums_products() {
        need_libclang();
        QFETCH(QString, body);
        QFETCH(QString, derived);
        QFETCH(QString, why);
        expect_reading("linear_tanh",
                       "#include \"kf_task.h\"\n#include <cmath>\n#include <vector>\nextern \"C\" void kf_solve(const float* A, "
                       "const float* B, const float* bias, float* C, int M, int N, int K) {\n" +
                           body.toStdString() + "\n}\n",
                       derived, why);
    }

    /** Rows under a mask: conditional reductions and writes, a flag and the rows' exit where it stays false. */
    void masked_rows_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("derived");  // the summary, or empty
        QTest::addColumn<QString>("why");
        const QString row = "  for (int r = 0; r < rows; ++r) {\n    const float* a = x + r * cols;\n"
                            "    const bool* keep = mask + r * cols;\n    float* out = y + r * cols;\n";
        const QString flag_max = "    bool any = false;\n    float m = 0;\n"
                                 "    for (int c = 0; c < cols; ++c) {\n      if (!keep[c]) continue;\n"
                                 "      const float s = scale * a[c];\n      if (!any || s > m) m = s;\n      any = true;\n    }\n";
        const QString exit0 = "    if (!any) {\n      for (int c = 0; c < cols; ++c) out[c] = 0.0f;\n      continue;\n    }\n";
        const QString sum = "    double t = 0;\n    for (int c = 0; c < cols; ++c) {\n      if (keep[c]) {\n"
                            "        const float e = std::exp(scale * a[c] - m);\n        out[c] = e;\n        t += e;\n"
                            "      } else {\n        out[c] = 0.0f;\n      }\n    }\n";
        const QString norm = "    for (int j = 0; j < cols; ++j)\n      if (keep[j]) out[j] = out[j] / t;\n  }";
        // The last loop's variable is another: the element stored by the loop over c is read back at j.
        QTest::newRow("a flag, an exit, scratch written in both branches")
            << row + flag_max + exit0 + sum + norm
            << "row_normalize over rows x cols: m = max(select(mask, scale * x, -inf)); "
               "t = sum(select(mask, exp(scale * x - m), 0)); y = select(mask, exp(scale * x - m) / t, 0)"
            << "";
        QTest::newRow("a conditional max from -inf, a condition in the output's loop")
            << row + "    float m = -INFINITY;\n    for (int c = 0; c < cols; ++c)\n"
                     "      if (keep[c]) m = std::fmax(m, a[c]);\n"
                     "    float t = 0;\n    for (int c = 0; c < cols; ++c) if (keep[c]) t += a[c] - m;\n"
                     "    for (int c = 0; c < cols; ++c) out[c] = keep[c] ? (a[c] - m) / t : 0.0f;\n  }"
            << "row_normalize over rows x cols: m = max(select(mask, x, -inf)); t = sum(select(mask, x - m, 0)); "
               "y = select(mask, (x - m) / t, 0)"
            << "";
        QTest::newRow("if (v > m) m = v from the identity")
            << row + "    float m = -INFINITY;\n    for (int c = 0; c < cols; ++c) if (a[c] > m) m = a[c];\n"
                     "    for (int c = 0; c < cols; ++c) out[c] = a[c] - m;\n  }"
            << "row_normalize over rows x cols: m = max(x); y = x - m"
            << "";
        QTest::newRow("an exit writing what the formula does not give")
            << row + flag_max + "    if (!any) {\n      for (int c = 0; c < cols; ++c) out[c] = 1.0f;\n      continue;\n    }\n" +
                   sum + norm
            << ""
            << "the exit where any is false writes 1, but where mask fails each element is 0 (line 16)";
        QTest::newRow("a flag's maximum without an exit")
            << row + flag_max + sum + norm
            << ""
            << "m is the row's only where any is true, and no `if (!any) { ...; continue; }` writes the rows where it is false";
        QTest::newRow("an element written under a condition only")
            << row + flag_max + exit0 +
                   "    double t = 0;\n    for (int c = 0; c < cols; ++c) if (keep[c]) t += std::exp(scale * a[c] - m);\n"
                   "    for (int c = 0; c < cols; ++c) if (keep[c]) out[c] = std::exp(scale * a[c] - m) / t;\n  }"
            << ""
            << "writes y under a condition only, leaving its other elements unwritten (line 22)";
        QTest::newRow("a flag set under another condition than the maximum's")
            << row + "    bool any = false;\n    float m = 0;\n    for (int c = 0; c < cols; ++c) {\n"
                     "      if (keep[c] && (!any || a[c] > m)) m = a[c];\n      any = true;\n    }\n" +
                   exit0 + sum + norm
            << ""
            << "assigns m inside the loop over c other than as a reduction (line 11)";
        QTest::newRow("a flag read by a maximum under another condition")
            << row + "    bool any = false;\n    float m = 0;\n    for (int c = 0; c < cols; ++c) {\n"
                     "      if (!any || a[c] > m) m = a[c];\n      if (keep[c]) any = true;\n    }\n" +
                   exit0 + sum + norm
            << ""
            << "the update reading any runs always, and the loop over c does not set any under that condition (line 10)";
        QTest::newRow("a flag declared once for all rows")
            << "  bool any = false;\n" + row + flag_max.mid(flag_max.indexOf("    float m")) + exit0 + sum + norm
            << ""
            << "sets any, declared outside the loop over r: a flag is declared false in each row (line 14)";
        QTest::newRow("a later loop's variable that the stored value already names")
            << row + flag_max + exit0 + sum +
                   "    for (int scale = 0; scale < cols; ++scale)\n      if (keep[scale]) out[scale] = out[scale] / t;\n  }"
            << ""
            << "reads back y in a loop over scale, a name its stored value already has";
        QTest::newRow("a continue inside another condition")
            << row + "    float t = 0;\n    for (int c = 0; c < cols; ++c) {\n      if (keep[c]) { if (a[c] < 0) continue; }\n"
                     "      t += a[c];\n    }\n    for (int c = 0; c < cols; ++c) out[c] = a[c] / t;\n  }"
            << ""
            << "continues the loop over c from inside another condition (line 10)";
    }

    void masked_rows() {
        need_libclang();
        QFETCH(QString, body);
        QFETCH(QString, derived);
        QFETCH(QString, why);
        expect_reading("level2/masked_softmax",
                       "#include \"kf_task.h\"\n#include <cmath>\nextern \"C\" void kf_solve(const float* x, const bool* mask, "
                       "float* y, int rows, int cols, float scale) {\n" +
                           body.toStdString() + "\n}\n",
                       derived, why);
    }

    /** Counts into a local array, then copied: the array's fill, the copy and the bins' range checked. */
    void local_counts_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("why");  // empty: derived as level1/histogram's computation
        const QString count = "  for (int i = 0; i < n; ++i) ++local[x[i]];\n";
        const QString copy = "  for (int b = 0; b < 256; ++b) counts[b] = (int32_t)local[b];";
        QTest::newRow("= {0}, a 32-bit count") << "  int local[256] = {0};\n" + count + copy << "";
        QTest::newRow("with a check of its own")
            << "  long long local[256] = {};\n  for (int i = 0; i < n; ++i) { int v = x[i]; if (v >= 0 && v < 256) "
               "local[v] += 1; }\n" + copy
            << "";
        QTest::newRow("not filled") << "  long long local[256];\n" + count + copy
                                    << "the array local without `= {}`: its elements start undefined (line 3)";
        QTest::newRow("filled with ones") << "  long long local[256] = {1};\n" + count + copy
                                          << "the array local filled with something else than 0 (line 3)";
        QTest::newRow("fewer bins than byte values")
            << "  long long local[16] = {};\n" + count + "  for (int b = 0; b < 16; ++b) counts[b] = local[b];"
            << "counts local[x[i]] without checking that the bin is in [0, bins): its values reach 255, past 16 (line 4)";
        QTest::newRow("copied reversed")
            << "  long long local[256] = {};\n" + count + "  for (int b = 0; b < 256; ++b) counts[b] = local[255 - b];"
            << "the loop after the counts does not copy each of local's 256 elements, out[b] = local[b] (line 5)";
    }

    void local_counts() {
        need_libclang();
        QFETCH(QString, body);
        QFETCH(QString, why);
        expect_reading("level1/histogram",
                       "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const uint8_t* x, int32_t* counts, int n) {\n" +
                           body.toStdString() + "\n}\n",
                       why.isEmpty() ? QString("histogram of 256 bins: counts[x] += 1") : QString(), why);
    }

    /** Calls that fill the output with 0 before the counts read as the zeroing loop; other fills are refused. */
    void zeroing_calls_data() {
        QTest::addColumn<QString>("zero");
        QTest::addColumn<QString>("why");  // empty: derived as bucket_count's computation
        QTest::newRow("memset, count first") << "std::memset(counts, 0, nbins * sizeof(int64_t));" << "";
        QTest::newRow("memset, sizeof of an element first") << "memset(counts, 0, sizeof(counts[0]) * nbins);" << "";
        QTest::newRow("std::fill") << "std::fill(counts, counts + nbins, 0);" << "";
        QTest::newRow("std::fill_n") << "std::fill_n(counts, nbins, 0);" << "";
        QTest::newRow("memset of half the counts")
            << "std::memset(counts, 0, nbins * 4);"
            << "a memset of counts whose length is not a count times the size of its element (8 bytes) (line 5)";
        QTest::newRow("filled with ones") << "std::fill_n(counts, nbins, 1);"
                                          << "a call of fill_n filling counts with something else than 0 (line 5)";
        QTest::newRow("a copy") << "std::memcpy(counts, keys, 8);" << "a call of memcpy (line 5)";
    }

    void zeroing_calls() {
        need_libclang();
        QFETCH(QString, zero);
        QFETCH(QString, why);
        expect_reading("bucket_count",
                       "#include \"kf_task.h\"\n#include <algorithm>\n#include <cstring>\nextern \"C\" void kf_solve(const int32_t* "
                       "keys, int64_t* counts, int n, int nbins) {\n  " +
                           zero.toStdString() +
                           "\n  for (int i = 0; i < n; ++i)\n    if (keys[i] >= 0 && keys[i] < nbins) ++counts[keys[i]];\n}\n",
                       why.isEmpty() ? QString("histogram of nbins bins: counts[keys] += 1") : QString(), why);
    }

    /** The tasks it refuses, each with its reason. */
    void refuses_the_shapes_it_does_not_know() {
        need_libclang();
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"opaque_copy", "a call of memcpy"},
        };
        for (const auto& [name, why] : cases) {
            Recognition r = recognise_reference(task_without_computation(name), Backend::Host, Recogniser::Libclang);
            QVERIFY2(!r.computation, name.c_str());
            QVERIFY2(r.reason.find(why) != std::string::npos, (name + ": " + r.reason).c_str());
        }
    }

    /** By default the AST recogniser is asked first: the shapes only it knows are derived. */
    void the_ast_recogniser_comes_first() {
        need_libclang();
        Task t = task_without_computation("col_std");
        QVERIFY(!recognise_reference(t, Backend::Host, Recogniser::Tokens).computation);
        Recognition r = recognise_reference(t, Backend::Cuda);
        QVERIFY2(r.computation, r.reason.c_str());
        QCOMPARE(r.computation->op, std::string("col_reduce"));
        // Its refusal is the one reported.
        Recognition no = recognise_reference(task_without_computation("opaque_copy"), Backend::Cuda);
        QVERIFY2(no.reason.find("a call of memcpy") != std::string::npos, no.reason.c_str());
    }

    /** Without libclang the token recogniser answers alone, and says why. */
    void falls_back_to_tokens_without_libclang() {
        EnvSetting missing("KF_LIBCLANG", (cache_ / "no-such-libclang.so").string());
        std::string why;
        QVERIFY(!libclang_available(&why));
        QVERIFY2(why.find("libclang not found") == 0 && why.find("no-such-libclang.so") != std::string::npos,
                 why.c_str());
        Recognition r = recognise_reference(task_without_computation("sigmoid"), Backend::Host);
        QVERIFY2(r.computation, r.reason.c_str());
        QVERIFY2(
            r.computation->origin.rfind("derived from reference.cpp: an elementwise loop (libclang not found", 0) == 0,
            r.computation->origin.c_str());
        Recognition no = recognise_reference(task_without_computation("col_std"), Backend::Host);
        QVERIFY(!no.computation);
        QVERIFY2(no.reason.rfind("cannot derive the computation from reference.cpp: ", 0) == 0, no.reason.c_str());
        QVERIFY2(no.reason.find("(libclang not found") != std::string::npos, no.reason.c_str());
        Recognition only =
            recognise_reference(task_without_computation("sigmoid"), Backend::Host, Recogniser::Libclang);
        QVERIFY(!only.computation);
        QVERIFY2(only.reason.find("libclang not found") == 0, only.reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRecognise)
#include "test_recognise.moc"
