// The template expert's pieces: the manifest's computation (parsed, checked with field-named
// errors), the op-class templates instantiated for tasks they were not written for (host
// instances compiled and evaluated by the real host backend, CUDA instances compiled by
// nvcc), the recogniser that derives a computation from a reference, and the expert itself.
#include <QtTest>

#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/evaluator.h"
#include "kf/experts.h"
#include "kf/process.h"
#include "kf/recognise.h"
#include "kf/templates.h"
#include "kf/transforms.h"
#include "kf/tunables.h"
#include "testsupport.h"

using namespace kf;
using nlohmann::json;

namespace {

/** A rows x cols task (x input, w per column, y output) with the given computation. */
std::filesystem::path rows_task(const std::string& tag, const json& computation, const json& y_shape = {"rows", "cols"}) {
    auto dir = kftest::temp_dir("tmpl-" + tag);
    json m = {{"format", 1},
              {"name", "t"},
              {"op_class", "norm"},
              {"sizes", {"rows", "cols"}},
              {"tensors",
               {{{"name", "x"}, {"role", "input"}, {"dtype", "f32"}, {"shape", {"rows", "cols"}}},
                {{"name", "w"}, {"role", "input"}, {"dtype", "f32"}, {"shape", {"cols"}}},
                {{"name", "y"}, {"role", "output"}, {"dtype", "f32"}, {"shape", y_shape}}}},
              {"params", {{{"name", "eps"}, {"dtype", "f32"}, {"value", 1e-5}}}},
              {"tolerance", {{"atol", 1e-5}, {"rtol", 1e-5}}},
              {"work", {{"flops", "rows * cols"}, {"bytes", "8 * rows * cols"}}},
              {"cases",
               {{{"name", "p"}, {"primary", true}, {"sizes", {{"rows", 8}, {"cols", 16}}}},
                {{"name", "v"}, {"sizes", {{"rows", 3}, {"cols", 5}}}}}},
              {"reference", {{"host", "reference.cpp"}}}};
    if (!computation.is_null()) m["computation"] = computation;
    kftest::write_file(dir / "task.json", m.dump(2));
    kftest::write_file(dir / "reference.cpp", "#include \"kf_task.h\"\n");
    return dir;
}

/** A test task (tests/data/tasks/<name>) or, for "level<N>/<name>", a bundled one. */
std::filesystem::path task_dir(const std::string& name) {
    if (name.rfind("level", 0) == 0) return kftest::source_dir() / "tasks" / name;
    return kftest::data("tasks/" + name);
}

std::string field_of_error(const json& computation, const json& y_shape = {"rows", "cols"}) {
    try {
        load_task(rows_task("bad", computation, y_shape));
    } catch (const TaskError& e) {
        return e.field() + " | " + e.reason();
    }
    return "(accepted)";
}

const json kNorm = {{"op", "row_normalize"},
                    {"layout", {{"rows", "rows"}, {"cols", "cols"}}},
                    {"stats", {{{"name", "ss"}, {"combine", "sum"}, {"map", "x * x"}}}},
                    {"map", "x * rsqrt(ss / cols + eps) * w"}};

EvaluatorConfig host_config(const std::filesystem::path& cache) {
    EvaluatorConfig cfg;
    cfg.worker.backend = Backend::Host;
    cfg.worker.worker = kftest::worker_path();
    cfg.cache_dir = cache;
    return cfg;
}

/** The named rewrite (kf/transforms.h). */
const CodeTransform& rewrite_named(const std::string& name) {
    for (const auto& tr : code_transforms())
        if (tr.name == name) return tr;
    throw std::runtime_error("no rewrite " + name);
}

/** An evaluator that compiles CUDA for sm_90, or none where nvcc is missing. */
std::unique_ptr<Evaluator> nvcc_evaluator(const std::filesystem::path& cache) {
    auto probe = run_process({compiler_program(Backend::Cuda), "--version"}, std::chrono::seconds(30));
    if (probe.start_failed || probe.exit_code != 0) return nullptr;
    EvaluatorConfig cfg;
    cfg.worker.backend = Backend::Cuda;
    cfg.arch = "sm_90";
    cfg.cache_dir = cache;
    return std::make_unique<Evaluator>(cfg);
}

}  // namespace

class TestTemplateExpert : public QObject {
    Q_OBJECT

private:
    std::filesystem::path cache_;

private slots:
    void initTestCase() {
        cache_ = kftest::temp_dir("tmpl-cache");
        if (qgetenv("KF_NVCC").isEmpty() && std::filesystem::exists("/usr/local/cuda/bin/nvcc"))
            qputenv("KF_NVCC", "/usr/local/cuda/bin/nvcc");
    }

    /** Every declared computation, written as its manifest field, reads back as the same computation. */
    void computations_read_back_as_themselves() {
        int n = 0;
        for (const auto& root : {kftest::source_dir() / "tasks", kftest::data("tasks")})
            for (const auto& dir : find_task_dirs(root)) {
                Task t = load_task(dir);
                if (!t.computation) continue;
                const nlohmann::ordered_json j = computation_to_json(*t.computation);
                Computation back = computation_from_json(json::parse(j.dump()), t);
                QCOMPARE(back.summary(), t.computation->summary());
                QCOMPARE(computation_to_json(back).dump(), j.dump());
                ++n;
            }
        QVERIFY2(n >= 15, std::to_string(n).c_str());
    }

    void computation_is_read_from_the_manifest() {
        Task t = load_task(rows_task("ok", kNorm));
        QVERIFY(t.computation);
        const Computation& c = *t.computation;
        QCOMPARE(c.op, std::string("row_normalize"));
        QCOMPARE(c.output, std::string("y"));
        QCOMPARE(c.stats.size(), std::size_t(1));
        QCOMPARE(c.stats[0].combine, std::string("sum"));
        QVERIFY(c.inputs.at("x") == Indexing::Full);
        QVERIFY(c.inputs.at("w") == Indexing::PerColumn);
        QCOMPARE(c.origin, std::string("manifest"));
        // Without the object the task has none (the recogniser may derive one).
        QVERIFY(!load_task(rows_task("none", nullptr)).computation);
    }

    void computation_errors_name_the_field_data() {
        QTest::addColumn<QString>("computation");
        QTest::addColumn<QString>("y_shape");
        QTest::addColumn<QString>("expected");
        auto row = [](const char* name, json c, json shape, const char* expected) {
            QTest::newRow(name) << QString::fromStdString(c.dump()) << QString::fromStdString(shape.dump()) << expected;
        };
        json rc = {"rows", "cols"};
        json r = {"rows"};
        json c = kNorm;
        c["op"] = "fft";
        row("unknown op", c, rc, "computation.op | unknown op 'fft'");
        c = kNorm;
        c["map"] = "x * q";
        row("unknown name", c, rc, "computation.map | unknown name 'q'");
        c = kNorm;
        c["map"] = "x * sinh(x)";
        row("unknown function", c, rc, "computation.map | column 5: unknown function 'sinh'");
        c = kNorm;
        c["stats"][0]["combine"] = "mean";
        row("unknown combine", c, rc, "computation.stats[0].combine | unknown combine 'mean'");
        c = kNorm;
        c.erase("layout");
        row("no layout", c, rc, "computation.layout | required for row_normalize");
        c = kNorm;
        c["stats"][0]["name"] = "x";
        row("stat shadows tensor", c, rc, "computation.stats[0].name | 'x' is already declared");
        c = kNorm;
        c["map"] = "y + x";
        row("reads the output", c, rc, "computation.map | 'y' is an output");
        json red = {{"op", "row_reduce"},
                    {"layout", {{"rows", "rows"}, {"cols", "cols"}}},
                    {"stats", {{{"name", "m"}, {"combine", "max"}, {"map", "x"}}}},
                    {"epilogue", "m * w"}};
        row("epilogue reads a per-column tensor", red, r, "computation.epilogue | 'w' has an element per column");
        red["epilogue"] = "m";
        row("output size does not fit", red, rc, "computation.layout | 'y' has 128 elements in case 'p'");
        red.erase("epilogue");
        red["map"] = "m";
        row("row_reduce with a map", red, r, "computation.map | row_reduce writes one value per row");
        json ew = {{"op", "elementwise"}, {"map", "x * w"}};
        row("elementwise of other sizes", ew, rc, "computation (tensor 'w') | an elementwise map without a layout reads tensors of the output's size");
        ew["stats"] = json::array({{{"name", "s"}, {"combine", "sum"}, {"map", "x"}}});
        row("elementwise with stats", ew, rc, "computation.stats | an elementwise map has no reductions");
        json tr = {{"op", "transpose"}, {"layout", {{"rows", "rows"}, {"cols", "cols"}}}, {"map", "x"}};
        tr["stats"] = json::array({{{"name", "s"}, {"combine", "sum"}, {"map", "x"}}});
        row("transpose with stats", tr, rc, "computation.stats | a transpose has no reductions");
        tr.erase("stats");
        tr["map"] = "x * w";
        row("transpose of a per-column tensor", tr, rc, "computation (tensor 'w') | a transpose reads inputs of rows x cols elements");
        json gm = {{"op", "gemm"},
                   {"layout", {{"rows", "rows"}, {"cols", "cols"}, {"inner", "cols"}}},
                   {"stats", {{{"name", "acc"}, {"combine", "max"}, {"map", "x * x"}}}},
                   {"map", "acc"}};
        row("gemm stat not a sum", gm, rc, "computation.stats[0].combine | a gemm's stat is a sum");
        gm["stats"][0]["combine"] = "sum";
        gm["map"] = "acc + x";
        row("gemm epilogue reads a factor", gm, rc, "computation.map | 'x' is a factor of the product");
        gm["map"] = "acc";
        gm["layout"].erase("inner");
        row("gemm without inner", gm, rc, "computation.layout.inner | required field is missing");
        json sc = {{"op", "row_scan"}, {"layout", {{"rows", "rows"}, {"cols", "cols"}}}, {"map", "x"}};
        row("row_scan without its stat", sc, rc, "computation.stats | row_scan needs at least one reduction");
        json st = {{"op", "stencil"}, {"layout", {{"rows", "rows"}, {"cols", "cols"}}}, {"map", "x + at(x, 0, 1)"}};
        row("stencil without a border", st, rc, "computation.border | a stencil's edge cells need a \"border\" expression or a \"pad\"");
        st["pad"] = "reflect";
        row("unknown pad", st, rc, "computation.pad | unknown pad 'reflect' (zero, clamp)");
        st["pad"] = "zero";
        st["border"] = "x";
        row("pad and border", st, rc, "computation.pad | a stencil has a border or a pad, not both");
        st.erase("border");
        st["map"] = "at(x, 0, 1) * w[x]";
        row("index reads a tensor", st, rc, "computation.map | 'x' in an index: an index reads sizes, integers and row(), col()");
        st["map"] = "at(x, 0, 1) * w[col() / 2.5]";
        row("index not an integer", st, rc, "computation.map | w[...]: an index uses integer constants only");
        st["map"] = "at(x, 0, 1) * w[(row() < 2)]";
        row("index compares", st, rc, "computation.map | w[...]: an index uses + - * / % only, not '<'");
        st["map"] = "at(x, 0, 1) * row()";
        row("position outside an index", st, rc, "computation.map | row() is the cell's position, read in an index");
        st["map"] = "at(x, 0, 1) + x % 2";
        row("remainder outside an index", st, rc, "computation.map | '%' is an integer remainder, used in an index only");
        st["map"] = "at(x, 0, 1) * q[col()]";
        row("index of an unknown tensor", st, rc, "computation.map | q[...]: not an input tensor");
        // With a pad, the map computes the edge cells too: its indices are checked at the layout's corners (8 x 16).
        st["map"] = "at(x, 0, 1) * w[col() + 1]";
        row("index past the end", st, rc, "computation.map | w[...] reads element 16 of 'w' (16 elements) at row 0, column 15 in case 'p'");
        st["map"] = "at(x, 0, 1) * w[col() - 1]";
        row("index before the start", st, rc, "computation.map | w[...] reads element -1 of 'w' (16 elements) at row 0, column 0 in case 'p'");
        st.erase("pad");
        st["border"] = "w[col() * 2]";
        st["map"] = "at(x, 0, 1) * w[col()]";
        row("border index past the end", st, rc, "computation.border | w[...] reads element 30 of 'w' (16 elements) at row 0, column 15");
        json ew3 = {{"op", "elementwise"}, {"map", "x * w[0]"}};
        row("index outside a stencil", ew3, rc, "computation.map | reads at an index (w[i]) and the position (row(), col()) are for a stencil");
        json pad_elsewhere = kNorm;
        pad_elsewhere["pad"] = "zero";
        row("pad outside a stencil", pad_elsewhere, rc, "computation.pad | only a stencil has a pad");
        st = {{"op", "stencil"}, {"layout", {{"rows", "rows"}, {"cols", "cols"}}}, {"map", "x + at(x, 0, 1)"}};
        st["border"] = "at(x, 1, 0)";
        row("border reads a neighbour", st, rc, "computation.border | the border cells read their own element only");
        st["border"] = "x";
        st["map"] = "x + at(w, 0, 1)";
        row("neighbour of a per-column tensor", st, rc, "computation.map | at(w, ...): a stencil's neighbours are read from rows x cols");
        st["map"] = "x * 2";
        row("stencil without neighbours", st, rc, "computation.map | a stencil reads neighbours");
        st["map"] = "at(x, 0, q)";
        row("offset not a constant", st, rc, "computation.map | column 12: at(x, di, dj): the offsets are integer constants");
        json ew2 = {{"op", "elementwise"}, {"map", "at(x, 1, 0)"}};
        row("at outside a stencil", ew2, rc, "computation.map | at() reads neighbours in a stencil's map only");
        json hi = {{"op", "histogram"}, {"bins", "16"}, {"map", "x"}};
        row("histogram of float counts", hi, json{"16"}, "computation.output | a histogram writes i32 or i64 counts");
        json border_elsewhere = kNorm;
        border_elsewhere["border"] = "x";
        row("border outside a stencil", border_elsewhere, rc, "computation.border | only a stencil has a border");
        json chained = kNorm;
        chained["map"] = "select(0 < x < 1, x, 0)";
        row("chained comparison", chained, rc, "computation.map | column 14: chained comparison");
        json col = {{"op", "col_reduce"},
                    {"layout", {{"rows", "rows"}, {"cols", "cols"}}},
                    {"stats", {{{"name", "s"}, {"combine", "sum"}, {"map", "x * w"}}}},
                    {"epilogue", "s + x"}};
        row("col epilogue reads a full tensor", col, json{"cols"}, "computation.epilogue | 'x' is not a per-column tensor");
        col["epilogue"] = "s * w";
        row("col output of rows", col, json{"rows"}, "computation.layout | 'y' has 8 elements in case 'p', the layout gives 16 (one per column)");
    }

    void computation_errors_name_the_field() {
        QFETCH(QString, computation);
        QFETCH(QString, y_shape);
        QFETCH(QString, expected);
        std::string got = field_of_error(json::parse(computation.toStdString()), json::parse(y_shape.toStdString()));
        QVERIFY2(got.rfind(expected.toStdString(), 0) == 0, ("got: " + got).c_str());
    }

    void expressions_emit_c_for_either_precision() {
        ComputeExpr e = ComputeExpr::parse("sigmoid(x) * max(a, 2) - rsqrt(b)");
        QCOMPARE(e.names(), (std::set<std::string>{"x", "a", "b"}));
        auto id = [](const std::string& n) { return n; };
        std::string f = e.to_c(id, true, true);
        QVERIFY2(f.find("expf(-(x))") != std::string::npos && f.find("fmaxf((a), 2.0f)") != std::string::npos &&
                     f.find("rsqrtf((b))") != std::string::npos,
                 f.c_str());
        std::string d = e.to_c(id, false, false);
        QVERIFY2(d.find("exp(-(x))") != std::string::npos && d.find("(1.0 / sqrt((b)))") != std::string::npos, d.c_str());
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("x +"));
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("max(x)"));
    }

    /** Comparisons, logic, select and inf; neighbour reads resolved as name@di,dj. */
    void expressions_select_compare_and_read_neighbours() {
        auto id = [](const std::string& n) { return n; };
        ComputeExpr e = ComputeExpr::parse("select(m && !(x >= 0.5 || x != y), x, -inf)");
        QCOMPARE(e.names(), (std::set<std::string>{"m", "x", "y"}));
        QCOMPARE(e.to_c(id, true, true), std::string("(((m) && (!(((x) >= 0.5f) || ((x) != (y))))) ? (x) : (-INFINITY))"));
        QCOMPARE(ComputeExpr::parse("-inf").to_c(id, false, false), std::string("(-((double)INFINITY))"));
        ComputeExpr s = ComputeExpr::parse("0.25 * (at(x, -1, 0) + at(x, 1, 0)) + at(x, 1, 0) + x");
        QCOMPARE(s.neighbours(), (std::set<ComputeExpr::Neighbour>{{"x", -1, 0}, {"x", 1, 0}}));
        QCOMPARE(s.names(), (std::set<std::string>{"x"}));
        QVERIFY(s.to_c(id, true, false).find("(x@-1,0)") != std::string::npos);
        QVERIFY(ComputeExpr::parse("x").is_name());
        QVERIFY(!ComputeExpr::parse("x + 1").is_name());
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("at(x + 1, 0, 1)"));
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("at(x, 0.5, 1)"));
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("a < b < c"));
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("select(a, b)"));
    }

    /**
     * An expression's form is the same for the same tree, whatever its spacing and brackets;
     * its sub-expressions come longest first; a part is found and replaced by a name; a
     * division by a listed name becomes a product by its reciprocal, others stay.
     */
    void expressions_find_and_replace_their_parts() {
        const ComputeExpr e = ComputeExpr::parse("select(mask, exp(scale*x - m) / s, 0)");
        QCOMPARE(e.form(), std::string("select(mask, (exp(((scale * x) - m)) / s), 0)"));
        QCOMPARE(ComputeExpr::parse("select( mask , exp((scale * x) - m) / (s), 0.0)").form(), e.form());
        QCOMPARE(ComputeExpr::parse("-inf + a[row() % 3] + at(y, -1, 0)").form(), std::string("(((-inf) + a[(row() % 3)]) + at(y, (-1), 0))"));
        const std::vector<ComputeExpr> parts = e.subexpressions();
        QCOMPARE(parts.front().form(), e.form());
        for (std::size_t k = 1; k < parts.size(); ++k) QVERIFY(parts[k - 1].form().size() >= parts[k].form().size());
        QCOMPARE(parts.size(), std::size_t(11));  // the whole, the quotient, exp, the difference, the product, mask, scale, x, m, s, 0
        const ComputeExpr term = ComputeExpr::parse("exp(x * scale - m)");
        QVERIFY(!e.contains(term));  // another tree: x * scale, not scale * x
        QVERIFY(e.contains(ComputeExpr::parse("exp(scale * x - m)")));
        QCOMPARE(e.replaced(ComputeExpr::parse("exp(scale * x - m)"), "t").form(), std::string("select(mask, (t / s), 0)"));
        QCOMPARE(e.replaced(term, "t").form(), e.form());
        QCOMPARE(e.with_reciprocals({"s"}, "r_").form(), std::string("select(mask, (exp(((scale * x) - m)) * r_s), 0)"));
        QCOMPARE(ComputeExpr::parse("x / (s + 1) + y / n").with_reciprocals({"s"}, "r_").form(), std::string("((x / (s + 1)) + (y / n))"));
        QCOMPARE(ComputeExpr::parse("x / s / s").with_reciprocals({"s"}, "r_").form(), std::string("((x * r_s) * r_s)"));
    }

    /**
     * On a cached row, a softmax's exp(scale * x - m) is computed once, in the sum's pass, kept
     * in registers and read back by the map's pass; the map's division by the row's sum is a
     * product by its reciprocal; fp32 exp goes through kf_exp (FAST_EXP, on by default). A
     * task without exp gets no FAST_EXP and a row reduction nothing kept. It compiles with
     * ONLINE and FAST_EXP either way.
     */
    void rows_compute_a_shared_part_once() {
        Task t = load_task(kftest::source_dir() / "tasks/level2/masked_softmax");
        const std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(3));
        for (const auto& k : ks) {
            const std::string& src = k.source;
            QVERIFY2(src.find("#define FAST_EXP 1   // @kf tunable values(0, 1)") != std::string::npos, src.c_str());
            QVERIFY(k.description.find("FAST_EXP") != std::string::npos);
            QVERIFY(src.find("    return __expf(v);\n#else\n    return expf(v);\n") != std::string::npos);
            // The helper's own two calls are the only ones.
            std::size_t calls = 0;
            for (auto at = src.find("expf("); at != std::string::npos; at = src.find("expf(", at + 1)) ++calls;
            QCOMPARE(calls, std::size_t(2));
            const std::string kept = "kf_e[kf_j].v[kf_k] = kf_exp((((static_cast<float>(scale)) * (kf_v_x.v[kf_k])) - (kf_s_m)));\n"
                                     "                        const float kf_x = ((kf_v_mask.v[kf_k]) ? (kf_e[kf_j].v[kf_k]) : 0.0f);";
            QVERIFY2(src.find(kept) != std::string::npos, src.c_str());
            QVERIFY(src.find("        const float kf_rcp_s = static_cast<float>(1) / kf_s_s;\n") != std::string::npos);
            QVERIFY(src.find("kf_o.v[kf_k] = static_cast<float>(((kf_v_mask.v[kf_k]) ? ((kf_e[kf_j].v[kf_k]) * (static_cast<float>(kf_rcp_s))) : 0.0f));") !=
                    std::string::npos);
            QVERIFY(src.find("/ (kf_s_s)") == std::string::npos);
            // With ONLINE, the map's pass computes its exp: the sum's terms were at a running max.
            const auto online = src.find("#if ONLINE\n        if (kf_active) {");
            QVERIFY(online != std::string::npos);
            QVERIFY(src.find("kf_exp((((static_cast<float>(scale)) * (kf_v_x.v[kf_k])) - (kf_s_m))) * (static_cast<float>(kf_rcp_s))", online) !=
                    std::string::npos);
        }
        Task rm = load_task(kftest::data("tasks/row_max"));
        for (const auto& k : templates_for_task(rm, Backend::Cuda)) {
            QVERIFY(k.source.find("FAST_EXP") == std::string::npos);
            QVERIFY(k.source.find("kf_e[") == std::string::npos);
        }
        Task sm = load_task(kftest::source_dir() / "tasks/level1/softmax");
        QVERIFY(templates_for_task(sm, Backend::Cuda).back().source.find("kf_e[kf_j].v[kf_k] = kf_exp(") != std::string::npos);
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        for (const Assignment& point : {Assignment{{"BLOCK", 512}, {"TPR", 512}, {"VEC", 4}, {"CACHE", 4}, {"ONLINE", 0}, {"FAST_EXP", 0}},
                                        Assignment{{"BLOCK", 256}, {"TPR", 32}, {"VEC", 2}, {"CACHE", 2}, {"ONLINE", 1}, {"FAST_EXP", 1}}}) {
            CompileResult cr = nvcc->compile(t, {ks[2].source, "tmpl"}, point);
            QVERIFY2(cr.ok, (to_string(point) + ":\n" + cr.info.log).c_str());
        }
    }

    /** Reads at an index: the tensor, the names in the index, C with row() and col() resolved. */
    void expressions_read_at_an_index() {
        ComputeExpr e = ComputeExpr::parse("w[row() % C * 5 + 1] * at(x, 0, -2) + bias[row() % C]");
        QCOMPARE(e.indexed(), (std::set<std::string>{"w", "bias"}));
        QCOMPARE(e.index_names(), (std::set<std::string>{"C"}));
        QCOMPARE(e.names(), (std::set<std::string>{"C", "x"}));
        QVERIFY(e.uses_position());
        QVERIFY(e.index_misuse().empty());
        auto id = [](const std::string& n) { return n == "row()" ? std::string("kf_r") : n; };
        const std::string c = e.to_c(id, true, false);
        QVERIFY2(c.find("(w[((((kf_r) % ((long long)C)) * 5LL) + 1LL)])") != std::string::npos, c.c_str());
        QVERIFY2(c.find("(bias[((kf_r) % ((long long)C))])") != std::string::npos, c.c_str());
        // On CUDA the index's / and % go through the 32-bit fast path.
        const std::string cu = e.to_c(id, true, true);
        QVERIFY2(cu.find("(bias[kf_imod((kf_r), ((long long)C))])") != std::string::npos, cu.c_str());
        QVERIFY2(std::string(ComputeExpr::cuda_index_helpers()).find("kf_imod(long long a, long long b)") != std::string::npos, "helpers");
        // Evaluated as C does, at a row and column.
        auto at = e.index_values({{"C", 7}}, 23, 0);
        QCOMPARE(at.size(), std::size_t(2));
        QCOMPARE(at[0], (std::pair<std::string, long long>{"w", (23 % 7) * 5 + 1}));
        QCOMPARE(at[1], (std::pair<std::string, long long>{"bias", 23 % 7}));
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("w[1"));
        QVERIFY_THROWS_EXCEPTION(ExprError, ComputeExpr::parse("row(1)"));
        QVERIFY(!ComputeExpr::parse("w[w[0]]").index_misuse().empty());
    }

    /** The test tasks with a padded stencil and indexed weights read as they should. */
    void padded_stencils_read_from_manifests() {
        Task dw = load_task(kftest::data("tasks/dwconv1d"));
        QVERIFY(dw.computation);
        const Computation& c = *dw.computation;
        QCOMPARE(c.pad, std::string("zero"));
        QCOMPARE(c.radius_rows, 0);
        QCOMPARE(c.radius_cols, 2);
        QVERIFY(c.inputs.at("x") == Indexing::Full);
        QVERIFY(c.inputs.at("w") == Indexing::Indexed);
        QVERIFY(c.inputs.at("bias") == Indexing::Indexed);
        QVERIFY2(c.summary().find("neighbours outside read as 0") != std::string::npos, c.summary().c_str());
        Task sm = load_task(kftest::data("tasks/smooth_clamp"));
        QVERIFY(sm.computation);
        QCOMPARE(sm.computation->pad, std::string("clamp"));
        QCOMPARE(sm.computation->radius_rows, 1);
        // A stencil along rows only gets the row-vector CUDA variant too; a 2-D one does not.
        std::vector<TemplateKernel> dk = templates_for_task(dw, Backend::Cuda);
        QCOMPARE(dk.size(), std::size_t(3));
        QCOMPARE(dk[1].name, std::string("stencil-rows"));
        QCOMPARE(dk[2].name, std::string("stencil-window"));
        // Rows of one row: no halo rows, the weights read at their index.
        QVERIFY2(dk[2].source.find("float kf_w_x[ITEMS + 0][8];") != std::string::npos, dk[2].source.c_str());
        QVERIFY(dk[1].source.find("kf_load<4>(x + kf_base + kf_c0 - 4 + 4 * kf_j)") != std::string::npos);
        // A 2-D one of small radii gets the window of rows instead.
        std::vector<TemplateKernel> sk = templates_for_task(sm, Backend::Cuda);
        QCOMPARE(sk.size(), std::size_t(2));
        QCOMPARE(sk[1].name, std::string("stencil-window"));
    }

    /**
     * Rows read in more than one pass (a softmax: max, sum, map) also get a block per row with
     * the row in registers; a row reduction in one pass does not. The block per row of a
     * three-pass computation starts at RESIDENT 4. It compiles at the ends of CACHE.
     */
    void multi_pass_rows_get_the_cached_instance() {
        Task t = load_task(kftest::source_dir() / "tasks/level2/masked_softmax");
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(3));
        QCOMPARE(ks[2].name, std::string("rows-group/cached"));
        const std::string& src = ks[2].source;
        QVERIFY(src.find("#define BLOCK 512 ") != std::string::npos);
        QVERIFY(src.find("#define TPR 512 ") != std::string::npos);
        QVERIFY(src.find("#define CACHE 4 ") != std::string::npos);
        // Both tensors the passes read are loaded once into registers, and the passes read them there.
        QVERIFY2(src.find("kf_reg_x[kf_j] = kf_load<V>(x + kf_base + kf_c);") != std::string::npos, src.c_str());
        QVERIFY2(src.find("kf_reg_mask[kf_j] = kf_load<V>(mask + kf_base + kf_c);") != std::string::npos, src.c_str());
        QVERIFY(src.find("const KfVec<V>& kf_v_x = kf_reg_x[kf_j];") != std::string::npos);
        QVERIFY(src.find("const bool kf_cached = CACHE > 0 && kf_cols <= static_cast<long long>(TPR) * (kf_vec ? VEC : 1) * CACHE;") !=
                std::string::npos);
        // The other two instances do not cache by default.
        QVERIFY(ks[0].source.find("#define CACHE 0 ") != std::string::npos);
        // A block per row read in three passes keeps 4 blocks a multiprocessor; the others are not limited.
        QVERIFY(ks[1].source.find("#define RESIDENT 4   // @kf tunable values(0, 2, 4, 6, 8)") != std::string::npos);
        QVERIFY(ks[0].source.find("#define RESIDENT 0 ") != std::string::npos);
        QVERIFY(src.find("#define RESIDENT 0 ") != std::string::npos);
        QVERIFY(ks[1].source.find("if (RESIDENT > 0 && kf_grid > static_cast<long long>(kf_sm_count()) * RESIDENT)\n"
                                  "        kf_grid = static_cast<long long>(kf_sm_count()) * RESIDENT;\n") != std::string::npos);
        Task rm = load_task(kftest::data("tasks/row_max"));
        QCOMPARE(templates_for_task(rm, Backend::Cuda).size(), std::size_t(2));
        QVERIFY(templates_for_task(rm, Backend::Cuda)[1].source.find("#define RESIDENT 0 ") != std::string::npos);
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        for (const Assignment& point : {Assignment{{"BLOCK", 1024}, {"TPR", 1024}, {"VEC", 4}, {"CACHE", 8}},
                                        Assignment{{"BLOCK", 64}, {"TPR", 8}, {"VEC", 1}, {"CACHE", 1}}}) {
            CompileResult cr = nvcc->compile(t, {src, "tmpl"}, point);
            QVERIFY2(cr.ok, (to_string(point) + ":\n" + cr.info.log).c_str());
        }
    }

    /**
     * On a cached row, the registers hold the row's own tensors alone: a LayerNorm's gamma and
     * beta (one value per column, the same for every row) are read in the pass that uses them.
     */
    void cached_rows_hold_the_row_alone() {
        Task t = load_task(kftest::source_dir() / "tasks/level1/layernorm");
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(3));
        QCOMPARE(ks[2].name, std::string("rows-group/cached"));
        const std::string& src = ks[2].source;
        QVERIFY2(src.find("kf_reg_x[kf_j] = kf_load<V>(x + kf_base + kf_c);") != std::string::npos, src.c_str());
        QVERIFY2(src.find("kf_reg_gamma") == std::string::npos, src.c_str());
        QVERIFY2(src.find("kf_reg_beta") == std::string::npos, src.c_str());
        // The map's pass on a cached row: x from the registers, gamma and beta from memory.
        const std::string cached_map = "                    const KfVec<V> kf_v_beta = kf_load<V>(beta + kf_c);\n"
                                       "                    const KfVec<V> kf_v_gamma = kf_load<V>(gamma + kf_c);\n"
                                       "                    const KfVec<V>& kf_v_x = kf_reg_x[kf_j];\n";
        QVERIFY2(src.find(cached_map) != std::string::npos, src.c_str());
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        CompileResult cr = nvcc->compile(t, {src, "tmpl"}, Assignment{});
        QVERIFY2(cr.ok, cr.info.log.c_str());
    }

    /**
     * A max m and a sum of exp(e - m) over the same row (a softmax's, masked or not) get the
     * one-pass instance (ONLINE: the running sum rescaled when the max grows); a sum of
     * another term, or stats in another order, do not.
     */
    void softmax_stats_get_the_online_pass() {
        for (const char* name : {"level2/masked_softmax", "level1/softmax"}) {
            Task t = load_task(kftest::source_dir() / "tasks" / name);
            for (const auto& k : templates_for_task(t, Backend::Cuda)) {
                // On by default where a warp takes a row (measured faster there), off for wider groups.
                const std::string def = k.name == "rows-group/warp" ? "#define ONLINE 1 " : "#define ONLINE 0 ";
                QVERIFY2(k.source.find(def + "  // @kf tunable values(0, 1)") != std::string::npos, (name + (" " + k.name)).c_str());
                QVERIFY(k.source.find("kf_group_reduce_online(kf_s_m, kf_s_s, kf_smem, kf_smem2);") != std::string::npos);
                QVERIFY(k.description.find("ONLINE") != std::string::npos);
            }
        }
        Task t = load_task(kftest::source_dir() / "tasks/level2/masked_softmax");
        const std::string src = templates_for_task(t, Backend::Cuda).front().source;
        // The running sum is rescaled before the vector's terms are added at the new max.
        const auto rescale = src.find("kf_a_s = kf_a_m == kf_mn ? kf_a_s : kf_a_s * kf_exp(kf_a_m - kf_mn);");
        QVERIFY2(rescale != std::string::npos, src.c_str());
        QVERIFY(src.find("kf_a_s = kf_a_s + ((kf_v_mask.v[kf_k]) ? kf_exp((((static_cast<float>(scale)) * (kf_v_x.v[kf_k])) - (kf_a_m))) : 0.0f);",
                         rescale) != std::string::npos);
        for (const char* other : {"select(mask, exp(scale * x - m) * 2, 0)", "select(mask, exp(x - m), 0)", "exp(scale * x - m)",
                                  "select(mask, exp(scale * x + m), 0)"}) {
            Task u = t;
            u.computation->stats[1].map = ComputeExpr::parse(other);
            for (const auto& k : templates_for_task(u, Backend::Cuda))
                QVERIFY2(k.source.find("ONLINE") == std::string::npos, other);
        }
        // Spelled differently, the same terms.
        Task v = t;
        v.computation->stats[0].map = ComputeExpr::parse("select(mask, x * scale, -inf)");
        v.computation->stats[1].map = ComputeExpr::parse("select(mask, exp((x * scale) - m), 0.0)");
        QVERIFY(templates_for_task(v, Backend::Cuda).front().source.find("#define ONLINE 1") != std::string::npos);  // the warp's
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        for (const Assignment& point : {Assignment{{"BLOCK", 1024}, {"TPR", 1024}, {"VEC", 4}, {"CACHE", 8}, {"ONLINE", 1}},
                                        Assignment{{"BLOCK", 64}, {"TPR", 8}, {"VEC", 1}, {"CACHE", 0}, {"ONLINE", 1}}}) {
            CompileResult cr = nvcc->compile(t, {src, "tmpl"}, point);
            QVERIFY2(cr.ok, (to_string(point) + ":\n" + cr.info.log).c_str());
        }
    }

    /** A column scan reads from its manifest and gets the column templates on both backends. */
    void column_scans_get_their_templates() {
        Task t = load_task(kftest::data("tasks/col_cumsum"));
        QVERIFY(t.computation);
        QVERIFY2(t.computation->summary().rfind("col_scan over rows x cols: s = inclusive sum of (x) down the column; y = s", 0) == 0,
                 t.computation->summary().c_str());
        std::vector<TemplateKernel> h = templates_for_task(t, Backend::Host);
        QCOMPARE(h.size(), std::size_t(1));
        QCOMPARE(h[0].name, std::string("col-scan-omp"));
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(2));
        // By chunks of rows: each thread scans its rows in registers, the column's threads exchange totals in shared memory.
        const std::string& blk = ks[0].source;
        QCOMPARE(ks[0].name, std::string("col-scan-block"));
        QVERIFY2(blk.find("__shared__ float kf_tot[2][BY][BX * V];") != std::string::npos, blk.c_str());
        QVERIFY(blk.find("kf_x[kf_u][kf_k] = (kf_x[kf_u - 1][kf_k] + kf_x[kf_u][kf_k]);") != std::string::npos);
        QVERIFY(blk.find("if (kf_y < kf_ty) kf_pre[kf_k] = (kf_pre[kf_k] + kf_t);") != std::string::npos);
        QVERIFY(blk.find("const float kf_s_s = (kf_pre[kf_k] + kf_x[kf_u][kf_k]);") != std::string::npos);
        QVERIFY(blk.find("// @kf constraint BX * BY * ITEMS * VEC <= 16384") != std::string::npos);
        QCOMPARE(ks[1].name, std::string("col-scan"));
        QVERIFY2(ks[1].source.find("const KfVec<V> kf_v_x = kf_load<V>(x + kf_r * kf_cols + kf_c);") != std::string::npos, ks[1].source.c_str());
        QVERIFY(ks[1].source.find("kf_store<V>(y + kf_r * kf_cols + kf_c, kf_o);") != std::string::npos);
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        for (const Assignment& point : {Assignment{{"BX", 32}, {"VEC", 1}, {"UNROLL", 4}}, Assignment{{"BX", 256}, {"VEC", 4}, {"UNROLL", 32}}}) {
            CompileResult cr = nvcc->compile(t, {ks[1].source, "tmpl"}, point);
            QVERIFY2(cr.ok, (to_string(point) + ":\n" + cr.info.log).c_str());
        }
        for (const Assignment& point : {Assignment{{"BX", 32}, {"BY", 4}, {"ITEMS", 2}, {"VEC", 1}},
                                        Assignment{{"BX", 128}, {"BY", 8}, {"ITEMS", 4}, {"VEC", 4}}}) {
            CompileResult cr = nvcc->compile(t, {blk, "tmpl"}, point);
            QVERIFY2(cr.ok, (to_string(point) + ":\n" + cr.info.log).c_str());
        }
    }

    /** scan-warp loads CHUNKS chunks before scanning them and stores each lane's VEC outputs in one vector store; it compiles at the ends of its space. */
    void scans_load_chunks_ahead_and_store_vectors() {
        Task t = load_task(kftest::data("tasks/row_cummax"));
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(1));
        const std::string& src = ks[0].source;
        QCOMPARE(ks[0].name, std::string("scan-warp"));
        QVERIFY(src.find("#define CHUNKS 2   // @kf tunable values(1, 2, 4)") != std::string::npos);
        QVERIFY2(src.find("float kf_xs[CHUNKS][V];") != std::string::npos, src.c_str());
        QVERIFY2(src.find("kf_store<V>(y + kf_base + kf_c, kf_o);") != std::string::npos, src.c_str());
        QVERIFY(src.find("bool kf_vec = kf_cols % VEC == 0 && kf_aligned(y, VEC * sizeof(float));") != std::string::npos);
        QCOMPARE(parse_tunables(src).params.size(), std::size_t(3));
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        Task sc = load_task(kftest::source_dir() / "tasks/level1/scan");
        for (Task* task : {&t, &sc}) {
            const TemplateKernel k = templates_for_task(*task, Backend::Cuda).front();
            for (const Assignment& point : {Assignment{{"BLOCK", 64}, {"VEC", 1}, {"CHUNKS", 1}}, Assignment{{"BLOCK", 1024}, {"VEC", 4}, {"CHUNKS", 4}}}) {
                CompileResult cr = nvcc->compile(*task, {k.source, "tmpl"}, point);
                QVERIFY2(cr.ok, (task->name + " " + to_string(point) + ":\n" + cr.info.log).c_str());
            }
        }
    }

    /** A transpose also gets transpose-vec: 4 elements per vector load and store; it compiles at the ends of its space. */
    void transposes_get_vector_accesses() {
        Task t = load_task(kftest::data("tasks/scaled_transpose"));
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(2));
        QCOMPARE(ks[0].name, std::string("transpose-tiled"));
        QCOMPARE(ks[1].name, std::string("transpose-vec"));
        const std::string& src = ks[1].source;
        QVERIFY2(src.find("const KfVec<4> kf_v_x = kf_load<4>(x + kf_r * kf_cols + kf_c);") != std::string::npos, src.c_str());
        QVERIFY2(src.find("kf_tile[kf_j][4 * threadIdx.x + 3] = static_cast<float>(((static_cast<float>(alpha)) * (kf_v_x.v[3])));") !=
                     std::string::npos,
                 src.c_str());
        QVERIFY(src.find("kf_store<4>(y + kf_c * kf_rows + kf_r, kf_out);") != std::string::npos);
        // The element-by-element path reads at the element's own column.
        QVERIFY2(src.find("(x[kf_r * kf_cols + kf_cc])") != std::string::npos, src.c_str());
        QCOMPARE(parse_tunables(src).params.size(), std::size_t(2));
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        for (const Assignment& point : {Assignment{{"TILE", 64}, {"BY", 4}}, Assignment{{"TILE", 32}, {"BY", 32}}}) {
            CompileResult cr = nvcc->compile(t, {src, "tmpl"}, point);
            QVERIFY2(cr.ok, (to_string(point) + ":\n" + cr.info.log).c_str());
        }
    }

    /**
     * histogram-shared's copies are interleaved (bin b of copy k at b * copies + k), 32 by
     * default, halved until they fit in 48 KiB; with a constant number of bins (256), the
     * bins and the copies are compile-time constants in the kernel, with bins named by a size
     * they are the kernel's arguments; a count is a shift and the atomic; it compiles at both
     * ends of COPIES.
     */
    void histogram_copies_are_interleaved() {
        Task h = load_task(kftest::source_dir() / "tasks/level1/histogram");
        std::vector<TemplateKernel> ks = templates_for_task(h, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(1));
        const std::string& src = ks[0].source;
        QVERIFY(src.find("#define COPIES 32         // @kf tunable values(1, 2, 4, 8, 16, 32)") != std::string::npos);
        QVERIFY2(src.find("unsigned int* kf_mine = kf_h + (threadIdx.x & (kf_copies - 1));") != std::string::npos, src.c_str());
        QVERIFY(src.find("atomicAdd(kf_mine + (static_cast<unsigned>(kf_bin) << kf_shift), 1u);") != std::string::npos);
        QVERIFY(src.find("while (shift > 0 && (bins << shift) * static_cast<long long>(sizeof(unsigned int)) > 48 * 1024) --shift;") !=
                std::string::npos);
        QVERIFY(src.find("    constexpr long long kf_bins = 256;\n    constexpr unsigned kf_shift = kf_copy_shift(kf_bins);\n") !=
                std::string::npos);
        Task b = load_task(kftest::data("tasks/bucket_count"));
        const std::string bsrc = templates_for_task(b, Backend::Cuda).front().source;
        QVERIFY(bsrc.find("constexpr long long kf_bins") == std::string::npos);
        QVERIFY(bsrc.find("    const long long kf_bins = kf_bins_arg;\n    const unsigned kf_shift = kf_shift_arg;\n") != std::string::npos);
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        for (Task* t : {&h, &b}) {
            const TemplateKernel k = templates_for_task(*t, Backend::Cuda).front();
            for (const Assignment& point : {Assignment{{"COPIES", 1}, {"VEC", 1}}, Assignment{{"COPIES", 32}, {"VEC", 16}}}) {
                CompileResult cr = nvcc->compile(*t, {k.source, "tmpl"}, point);
                QVERIFY2(cr.ok, (t->name + " " + to_string(point) + ":\n" + cr.info.log).c_str());
            }
        }
    }

    /**
     * stencil-window on the 2-D stencil tasks: a vector load per row of the window, the column
     * halo from the neighbouring lanes, the cells read from the window at their offsets; it
     * compiles at the ends of its space. Radii over 4 do not get it.
     */
    void two_d_stencils_get_the_window_of_rows() {
        Task b = load_task(kftest::data("tasks/blur3x3"));
        std::vector<TemplateKernel> ks = templates_for_task(b, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(2));
        QCOMPARE(ks[1].name, std::string("stencil-window"));
        const std::string& src = ks[1].source;
        QVERIFY2(src.find("float kf_w_img[ITEMS + 2][6];") != std::string::npos, src.c_str());
        QVERIFY(src.find("const KfVec<4> kf_v = kf_load<4>(kf_p);") != std::string::npos);
        QVERIFY(src.find("__shfl_up_sync(0xffffffffu, kf_v.v[4 - kf_h], 1)") != std::string::npos);
        QVERIFY(src.find("if (kf_lane == 31) kf_right = static_cast<float>(kf_p[3 + kf_h]);") != std::string::npos);
        // Cell 0 of a row: at(img, -1, -1) is the window's row above, one column to the left of the cell.
        QVERIFY2(src.find("kf_w_img[kf_it + 0][0]") != std::string::npos, src.c_str());
        // Cell 3: at(img, 1, 1) is the row below, the right halo.
        QVERIFY2(src.find("kf_w_img[kf_it + 2][5]") != std::string::npos, src.c_str());
        QVERIFY(src.find("kf_store<4>(out + kf_r * kf_cols + kf_c0, kf_out);") != std::string::npos);
        // The edge cells take the border.
        QVERIFY2(src.find("(0.5f * (img[kf_i]))") != std::string::npos, src.c_str());
        TunableSpace space = parse_tunables(src);
        QCOMPARE(space.params.size(), std::size_t(2));
        // A column radius of 0 (a vertical stencil): no shuffles.
        Task v = b;
        v.computation->map = ComputeExpr::parse("at(img, -1, 0) + img + at(img, 1, 0)");
        v.computation->radius_cols = 0;
        std::vector<TemplateKernel> vs = templates_for_task(v, Backend::Cuda);
        QCOMPARE(vs.back().name, std::string("stencil-window"));
        QVERIFY(vs.back().source.find("__shfl") == std::string::npos);
        QVERIFY2(vs.back().source.find("float kf_w_img[ITEMS + 2][4];") != std::string::npos, vs.back().source.c_str());
        // A radius of 5 rows does not.
        Task far = b;
        far.computation->map = ComputeExpr::parse("at(img, -5, 0) + img");
        far.computation->radius_rows = 5;
        QCOMPARE(templates_for_task(far, Backend::Cuda).size(), std::size_t(1));
        // With a border, the fast path is for warps and row groups whose halo is inside.
        QVERIFY(src.find("const bool kf_warp_inner = kf_vec && kf_w0 >= 1 && kf_w0 + 128 + 1 <= kf_cols;") != std::string::npos);
        QVERIFY(src.find("if (kf_warp_inner && kf_r0 >= 1 && kf_r0 + ITEMS + 1 <= kf_rows) {") != std::string::npos);
        // Padded, the window takes the pad where it reaches outside: every whole warp of whole row groups is fast.
        Task sm = load_task(kftest::data("tasks/smooth_clamp"));
        const std::string cl = templates_for_task(sm, Backend::Cuda).back().source;
        QVERIFY2(cl.find("const bool kf_warp_inner = kf_vec && kf_w0 + 128 <= kf_cols;") != std::string::npos, cl.c_str());
        QVERIFY(cl.find("if (kf_warp_inner && kf_r0 + ITEMS <= kf_rows) {") != std::string::npos);
        QVERIFY(cl.find("const auto* kf_p = img + kf_clamp(kf_r0 - 1 + kf_j, kf_rows) * kf_cols + kf_c0;") != std::string::npos);
        QVERIFY(cl.find("kf_left = static_cast<float>(kf_p[kf_c0 >= kf_h ? -kf_h : -kf_c0]);") != std::string::npos);
        QVERIFY(cl.find("kf_right = static_cast<float>(kf_p[kf_c0 + 3 + kf_h < kf_cols ? 3 + kf_h : kf_cols - 1 - kf_c0]);") !=
                std::string::npos);
        Task dw = load_task(kftest::data("tasks/dwconv1d"));
        const std::string zp = templates_for_task(dw, Backend::Cuda).back().source;
        QVERIFY2(zp.find("if (kf_rin) kf_v = kf_load<4>(kf_p);") != std::string::npos, zp.c_str());
        QVERIFY(zp.find("kf_left = kf_rin && kf_c0 >= kf_h ? static_cast<float>(kf_p[-kf_h]) : static_cast<float>(0);") != std::string::npos);
        QVERIFY(zp.find("kf_right = kf_rin && kf_c0 + 3 + kf_h < kf_cols ? static_cast<float>(kf_p[3 + kf_h]) : static_cast<float>(0);") !=
                std::string::npos);
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) return;
        Task st = load_task(kftest::source_dir() / "tasks/level1/stencil2d");
        for (Task* t : {&b, &sm, &st, &v, &dw}) {
            const TemplateKernel k = templates_for_task(*t, Backend::Cuda).back();
            QCOMPARE(k.name, std::string("stencil-window"));
            for (const Assignment& point : {Assignment{{"BLOCK", 32}, {"ITEMS", 1}}, Assignment{{"BLOCK", 512}, {"ITEMS", 16}}}) {
                CompileResult cr = nvcc->compile(*t, {k.source, "tmpl"}, point);
                QVERIFY2(cr.ok, (t->name + " " + to_string(point) + ":\n" + cr.info.log).c_str());
            }
        }
    }

    /**
     * A column's sum and its centred second moment (col_std's mean and variance) also get the
     * one-pass CUDA instance; another second stat, or a mean over another count, does not.
     */
    void centred_moments_get_the_one_pass_instance() {
        Task t = load_task(kftest::data("tasks/col_std"));
        QVERIFY(t.computation);
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
        QCOMPARE(ks.size(), std::size_t(2));
        QCOMPARE(ks[0].name, std::string("cols-moments"));
        QCOMPARE(ks[1].name, std::string("cols-split"));
        QVERIFY2(ks[0].source.find("kf_d2 - kf_d1 * kf_d1 / kf_n") != std::string::npos, ks[0].source.c_str());
        QVERIFY(ks[0].source.find("@kf tunable values(1, 2, 4, 8)") != std::string::npos);
        // x is read as it is: VEC columns per thread in vector loads.
        QVERIFY(ks[0].source.find("#define VEC 2     // @kf tunable values(1, 2, 4)") != std::string::npos);
        QVERIFY(ks[0].source.find("kf_load_pack<V>(x + kf_r * kf_cols + kf_c0, o);") != std::string::npos);
        // Both keep the default pool's freed memory (its release threshold set once), so that a call
        // after a synchronisation does not map its scratch memory again.
        for (const auto& k : ks) {
            QVERIFY2(k.source.find("static const bool kf_pool_kept = [] {") != std::string::npos, k.name.c_str());
            QVERIFY(k.source.find("cudaMemPoolSetAttribute(kf_pool, cudaMemPoolAttrReleaseThreshold, &kf_keep)") != std::string::npos);
            QVERIFY(k.source.find("cudaMallocAsync(") > k.source.find("kf_pool_kept"));
        }
        if (auto nvcc = nvcc_evaluator(cache_)) {
            for (const Assignment& point :
                 {Assignment{{"VEC", 1}, {"BX", 256}, {"BY", 4}, {"UNROLL", 8}, {"SPLIT", 1}},
                  Assignment{{"VEC", 2}, {"BX", 32}, {"BY", 32}, {"UNROLL", 1}, {"SPLIT", 256}}}) {
                CompileResult cr = nvcc->compile(t, {ks[0].source, "tmpl"}, point);
                QVERIFY2(cr.ok, cr.info.log.c_str());
            }
        }
        // e an expression: one column per thread, e computed per element.
        Task w = t;
        w.computation->stats[0].map = ComputeExpr::parse("x * 2");
        w.computation->stats[1].map = ComputeExpr::parse("(x * 2 - s / rows) * (x * 2 - s / rows)");
        std::vector<TemplateKernel> ws = templates_for_task(w, Backend::Cuda);
        QCOMPARE(ws.front().name, std::string("cols-moments"));
        QVERIFY(ws.front().source.find("#define VEC 1\n") != std::string::npos);
        QVERIFY(ws.front().source.find("kf_load_pack") == std::string::npos);
        if (auto nvcc = nvcc_evaluator(cache_)) {
            CompileResult cr = nvcc->compile(w, {ws.front().source, "tmpl"});
            QVERIFY2(cr.ok, cr.info.log.c_str());
        }
        for (const char* other : {"(x - s / cols) * (x - s / cols)", "(x - s / rows) * (x - s / rows) + 1", "x * x",
                                  "(x - s / rows) * (x + s / rows)"}) {
            Task u = t;
            u.computation->stats[1].map = ComputeExpr::parse(other);
            std::vector<TemplateKernel> us = templates_for_task(u, Backend::Cuda);
            QVERIFY2(us.size() == 1 && us[0].name == "cols-split", other);
        }
        Task r = t;
        r.computation->stats[1].map = ComputeExpr::parse("(s / rows - x) * (s / rows - x)");
        QCOMPARE(templates_for_task(r, Backend::Cuda).front().name, std::string("cols-moments"));
    }

    /** The bundled tasks that declare stencils, histograms and masked rows read as they should. */
    void new_op_classes_are_read_from_bundled_manifests() {
        Task st = load_task(kftest::source_dir() / "tasks/level1/stencil2d");
        QVERIFY(st.computation);
        QCOMPARE(st.computation->op, std::string("stencil"));
        QCOMPARE(st.computation->radius(), 1);
        Task hi = load_task(kftest::source_dir() / "tasks/level1/histogram");
        QVERIFY(hi.computation);
        QCOMPARE(hi.computation->bins, std::string("256"));
        Task ms = load_task(kftest::source_dir() / "tasks/level2/masked_softmax");
        QVERIFY(ms.computation);
        QVERIFY(ms.computation->inputs.count("mask"));
        QVERIFY2(ms.computation->summary().find("select(mask") != std::string::npos, ms.computation->summary().c_str());
    }

    void host_instances_are_correct_on_tasks_they_never_saw_data() {
        QTest::addColumn<QString>("task");
        for (const char* t : {"sigmoid", "row_max", "rmsnorm", "matvec", "scaled_transpose", "linear_tanh", "row_cummax", "blur3x3",
                              "bucket_count", "col_std", "dwconv1d", "add_layernorm", "smooth_clamp", "col_cumsum", "level1/stencil2d", "level1/histogram", "level2/masked_softmax",
                              "bias_relu_cols", "leaky_rows"})
            QTest::newRow(t) << t;
    }

    /** Every host instance, at its defaults and at another point of its space, passes the worker's checks. */
    void host_instances_are_correct_on_tasks_they_never_saw() {
        QFETCH(QString, task);
        Task t = load_task(task_dir(task.toStdString()));
        std::string why;
        std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Host, &why);
        QVERIFY2(!ks.empty(), why.c_str());
        Evaluator ev(host_config(cache_));
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        for (const auto& k : ks) {
            TunableSpace space = parse_tunables(k.source);
            QVERIFY2(!space.empty(), "an instance carries tunables");
            std::vector<Assignment> points = space.enumerate(1000);
            for (const Assignment& a : {space.defaults(), points.front(), points.back()}) {
                Diagnosis d = ev.evaluate(t, {instantiate(k.source, space, a), "tmpl"}, opt);
                QVERIFY2(d.status == Status::Ok, (k.name + " " + to_string(a) + ": " + d.message + "\n" + d.compile.log).c_str());
            }
        }
    }

    void cuda_instances_compile_with_nvcc() {
        auto nvcc = nvcc_evaluator(cache_);
        if (!nvcc) QSKIP("nvcc not found (set KF_NVCC)");
        Evaluator& ev = *nvcc;
        int compiled = 0;
        for (const char* name : {"sigmoid", "row_max", "rmsnorm", "matvec", "scaled_transpose", "linear_tanh", "row_cummax", "blur3x3",
                                 "bucket_count", "col_std", "dwconv1d", "add_layernorm", "smooth_clamp", "col_cumsum", "level1/stencil2d", "level1/histogram", "level2/masked_softmax",
                              "bias_relu_cols", "leaky_rows"}) {
            Task t = load_task(task_dir(name));
            std::vector<TemplateKernel> ks = templates_for_task(t, Backend::Cuda);
            QVERIFY2(!ks.empty(), name);
            for (const auto& k : ks) {
                CompileResult r = ev.compile(t, {k.source, "tmpl"});
                QVERIFY2(r.ok, (std::string(name) + " " + k.name + ":\n" + r.info.log).c_str());
                ++compiled;
            }
        }
        // A rows instance at the far end of its space (block-wide groups, scalar loads).
        Task t = load_task(kftest::data("tasks/rmsnorm"));
        TemplateKernel k = templates_for_task(t, Backend::Cuda).front();
        TunableSpace space = parse_tunables(k.source);
        CompileResult r = ev.compile(t, {k.source, "tmpl"}, {{"BLOCK", 1024}, {"TPR", 1024}, {"VEC", 1}});
        QVERIFY2(r.ok, r.info.log.c_str());
        QVERIFY(compiled >= 18);
    }

    /** The token recogniser (the fallback where libclang is absent; the AST one is tested in test_recognise.cpp). */
    void recogniser_derives_simple_loops_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("summary");
        QTest::newRow("elementwise") << "sigmoid" << "elementwise over the output's elements: y = 1.0 / ( 1.0 + exp ( - x ) )";
        QTest::newRow("row max from the first element") << "row_max" << "row_reduce over rows x cols: m = max(x); y = m";
        QTest::newRow("two loops per row") << "rmsnorm" << "row_normalize over rows x cols: ss = sum(x * x);";
        QTest::newRow("dot per row") << "matvec" << "row_reduce over rows x cols: acc = sum(A * x); y = acc";
    }

    void recogniser_derives_simple_loops() {
        QFETCH(QString, task);
        QFETCH(QString, summary);
        Task t = load_task(kftest::data("tasks/" + task.toStdString()));
        t.computation.reset();
        Recognition r = recognise_reference(t, Backend::Cuda, Recogniser::Tokens);
        QVERIFY2(r.computation, r.reason.c_str());
        QVERIFY2(r.computation->summary().rfind(summary.toStdString(), 0) == 0, r.computation->summary().c_str());
        QVERIFY(r.computation->origin.rfind("derived from reference.cpp", 0) == 0);
    }

    void recogniser_says_plainly_when_it_cannot() {
        Task t = load_task(kftest::data("tasks/row_max"));
        t.computation.reset();
        auto no = [&](const std::string& body, const std::string& why) {
            Recognition r = recognise_source(t, "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols) {\n" +
                                                    body + "\n}\n", "ref.cpp", Recogniser::Tokens);
            QVERIFY2(!r.computation, body.c_str());
            QVERIFY2(r.reason.find("cannot derive the computation from ref.cpp") == 0, r.reason.c_str());
            QVERIFY2(r.reason.find(why) != std::string::npos, r.reason.c_str());
        };
        no("std::memcpy(y, x, rows * sizeof(float));", "neither one elementwise loop nor a loop over rows");
        no("for (int r = 0; r < rows; ++r) { float m = 0; for (int c = 0; c < cols; ++c) m = std::max(m, x[c * rows + r]); y[r] = m; }",
           "reads x[c * rows + r ]");
        no("for (int r = 0; r < rows; ++r) { float m = 0; for (int c = 0; c < cols; ++c) m = std::max(m, x[r * cols + c]); y[r] = m; }",
           "which is not the identity of max");
        no("for (int r = 0; r < rows; ++r) { y[r] = x[r] * x[r + 1]; }", "the elementwise loop reads something else than x[r]");
        // A task without a host reference.
        Task cuda_only = t;
        cuda_only.references.erase(Backend::Host);
        QVERIFY(recognise_reference(cuda_only, Backend::Cuda).reason.find("host C++ references") != std::string::npos);
    }

    void expert_proposes_untried_instances_then_refuses() {
        Task t = load_task(kftest::data("tasks/row_max"));
        auto expert = make_template_expert();
        std::set<std::string> tried;
        SearchRng rng(1);
        Member parent;
        parent.id = 1;
        parent.status = Status::Incorrect;
        parent.family = "reference";
        ProposalContext ctx;
        ctx.task = &t;
        ctx.backend = Backend::Cuda;
        ctx.parent = &parent;
        ctx.tried = &tried;
        ctx.rng = &rng;
        std::set<std::string> families;
        for (int i = 0; i < 10; ++i) {
            auto p = expert->propose(ctx);
            if (!p) break;
            QCOMPARE(p->expert, std::string("template"));
            QCOMPARE(p->parents, std::vector<std::int64_t>{1});
            QVERIFY(p->rationale.find("(the parent is incorrect)") != std::string::npos);
            tried.insert(proposal_key(p->source, p->tunables));
            families.insert(p->family);
        }
        QCOMPARE(tried.size(), std::size_t(2));  // warp- and block-wide row groups
        QCOMPARE(expert->refusal(), std::string("every op-class template instance for this task has been tried"));
        // A task whose reference the recogniser cannot read: the refusal says why.
        Task opaque = load_task(kftest::data("tasks/opaque_copy"));
        auto e2 = make_template_expert();
        ctx.task = &opaque;
        QVERIFY(!e2->propose(ctx));
        QVERIFY2(e2->refusal().find("cannot derive the computation") != std::string::npos, e2->refusal().c_str());
    }

    /** The named rewrites apply in turn to a naive CUDA kernel, compile, and then refuse. */
    void rewrites_apply_then_refuse_cleanly() {
        Task t = load_task(kftest::data("tasks/sigmoid"));
        std::string src = kftest::read_file(t.references.at(Backend::Cuda));
        std::vector<std::string> applied;
        for (const auto& tr : code_transforms()) {
            // warp-rows is for thread-per-row kernels; vector-loads is another child of the same parent (below);
            // smem-tile is for kernels reading neighbours.
            if (tr.name == "warp-rows" || tr.name == "vector-loads" || tr.name == "smem-tile") continue;
            TransformResult r = tr.apply(src);
            QVERIFY2(r.source, (tr.name + ": " + r.refusal).c_str());
            QVERIFY(r.refusal.empty());
            src = *r.source;
        }
        TunableSpace space = parse_tunables(src);
        QCOMPARE(space.params.size(), std::size_t(2));  // KF_ITEMS, KF_BLOCK
        QVERIFY(src.find("__launch_bounds__(KF_BLOCK)") != std::string::npos);
        QVERIFY(src.find("i += static_cast<long long>(gridDim.x) * blockDim.x") != std::string::npos);
        QVERIFY2(src.find("<<<(n + KF_BLOCK * KF_ITEMS - 1) / (KF_BLOCK * KF_ITEMS), KF_BLOCK, 0, stream>>>") != std::string::npos,
                 src.c_str());
        // Applied once, each refuses the second time and leaves the source alone.
        for (const auto& tr : code_transforms()) {
            TransformResult r = tr.apply(src);
            QVERIFY2(!r.source && !r.refusal.empty(), tr.name.c_str());
        }
        if (auto ev = nvcc_evaluator(cache_)) {
            CompileResult r = ev->compile(t, {src, "rewritten"}, {{"KF_BLOCK", 512}, {"KF_ITEMS", 8}});
            QVERIFY2(r.ok, r.info.log.c_str());
        }
    }

    /** warp-rows on naive thread-per-row references: a warp per row, shuffles after each reduction; it compiles. */
    void warp_rows_rewrites_row_kernels_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QStringList>("reductions");
        QTest::newRow("row_max") << "row_max" << QStringList{"m = kf_warp_max(m);"};
        QTest::newRow("matvec") << "matvec" << QStringList{"acc = kf_warp_sum(acc);"};
        QTest::newRow("rmsnorm") << "rmsnorm" << QStringList{"ss = kf_warp_sum(ss);"};
        QTest::newRow("add_layernorm") << "add_layernorm" << QStringList{"sum = kf_warp_sum(sum);", "var = kf_warp_sum(var);"};
    }

    void warp_rows_rewrites_row_kernels() {
        QFETCH(QString, task);
        QFETCH(QStringList, reductions);
        Task t = load_task(kftest::data("tasks/" + task.toStdString()));
        const std::string ref = kftest::read_file(t.references.at(Backend::Cuda));
        const CodeTransform* warp = &rewrite_named("warp-rows");
        TransformResult r = warp->apply(ref);
        QVERIFY2(r.source, r.refusal.c_str());
        const std::string& src = *r.source;
        QVERIFY2(src.find("const int kf_lane = threadIdx.x & 31;") != std::string::npos, src.c_str());
        QVERIFY2(src.find(">> 5)") != std::string::npos, src.c_str());
        QVERIFY2(src.find("+ kf_lane; c < cols; c += 32)") != std::string::npos, src.c_str());
        for (const auto& red : reductions) QVERIFY2(src.find(red.toStdString()) != std::string::npos, src.c_str());
        QVERIFY2(src.find("* 32 + 128 - 1) / 128), 128") != std::string::npos, src.c_str());
        // Once is enough: it refuses the second time.
        QVERIFY(!warp->apply(src).source);
        // After block-size-tunable it still applies, with the tunable block size.
        TransformResult tb = code_transforms().front().apply(ref);
        QVERIFY(tb.source);
        TransformResult r2 = warp->apply(*tb.source);
        QVERIFY2(r2.source, r2.refusal.c_str());
        QVERIFY2(r2.source->find("* 32 + KF_BLOCK - 1) / KF_BLOCK), KF_BLOCK") != std::string::npos, r2.source->c_str());
        auto ev = nvcc_evaluator(cache_);
        if (!ev) return;
        CompileResult c = ev->compile(t, {src, "warp-rows"});
        QVERIFY2(c.ok, (c.info.log + "\n" + src).c_str());
        CompileResult c2 = ev->compile(t, {*r2.source, "warp-rows"}, {{"KF_BLOCK", 1024}});
        QVERIFY2(c2.ok, (c2.info.log + "\n" + *r2.source).c_str());
    }

    /** vector-loads on naive one-element-per-thread kernels of both shapes: float4 where full, scalar tails; it compiles. */
    void vector_loads_rewrite_element_kernels_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("grid");
        QTest::newRow("sigmoid (if (i < n) statement)") << "tests/data/tasks/sigmoid" << "<<<(n + 511) / 512, 128";
        QTest::newRow("gelu (early return, a body)") << "tasks/level1/gelu" << "(count + 4 * block - 1) / (4 * block)";
    }

    void vector_loads_rewrite_element_kernels() {
        QFETCH(QString, task);
        QFETCH(QString, grid);
        Task t = load_task(kftest::source_dir() / task.toStdString());
        const std::string ref = kftest::read_file(t.references.at(Backend::Cuda));
        const CodeTransform* vec = &rewrite_named("vector-loads");
        TransformResult r = vec->apply(ref);
        QVERIFY2(r.source, r.refusal.c_str());
        const std::string& src = *r.source;
        QVERIFY2(src.find("const float4 kf_v_x = kf_full ? *reinterpret_cast<const float4*>(x + kf_base)") != std::string::npos, src.c_str());
        QVERIFY2(src.find("if (kf_full) *reinterpret_cast<float4*>(y + kf_base) = make_float4(") != std::string::npos, src.c_str());
        QVERIFY2(src.find("(kf_full ? kf_in_x[kf_k] : x[i])") != std::string::npos, src.c_str());
        QVERIFY2(src.find(grid.toStdString()) != std::string::npos, src.c_str());
        QVERIFY(!vec->apply(src).source);  // once
        auto ev = nvcc_evaluator(cache_);
        if (!ev) return;
        CompileResult c = ev->compile(t, {src, "vector-loads"});
        QVERIFY2(c.ok, (c.info.log + "\n" + src).c_str());
    }

    /**
     * smem-tile on the 2-D stencil: x's neighbours along the row come from a shared tile loaded
     * before the guard, its rows above and below from global memory; it compiles, also after
     * block-size-tunable. blur3x3's offsets are computed in a loop: it refuses.
     */
    void smem_tile_stages_a_stencils_row_neighbours() {
        Task t = load_task(task_dir("level1/stencil2d"));
        const std::string ref = kftest::read_file(t.references.at(Backend::Cuda));
        const CodeTransform& tile = rewrite_named("smem-tile");
        TransformResult r = tile.apply(ref);
        QVERIFY2(r.source, r.refusal.c_str());
        QVERIFY(r.refusal.empty());
        const std::string& src = *r.source;
        constexpr auto npos = std::string::npos;
        auto at = [&](const std::string& s) { return src.find(s); };
        QVERIFY2(at("extern __shared__ __align__(16) unsigned char kf_tile_smem[];") != npos, src.c_str());
        QVERIFY(at("const long long kf_tile_n = static_cast<long long>(total);") != npos);
        QVERIFY(at("const long long kf_b0 = static_cast<long long>(blockIdx.x) * blockDim.x;") != npos);
        QVERIFY(at("float* kf_tile_x = reinterpret_cast<float*>(kf_tile_smem);") != npos);
        QVERIFY(at("for (unsigned kf_t = threadIdx.x; kf_t < blockDim.x + 2; kf_t += blockDim.x) {") != npos);
        QVERIFY(at("const long long kf_g = kf_b0 + kf_t - 1;") != npos);
        QVERIFY(at("if (kf_g >= 0 && kf_g < kf_tile_n) kf_tile_x[kf_t] = x[kf_g];") != npos);
        // The barrier: after the declaration of the bound, before the guard, once.
        QVERIFY(at("const size_t total = static_cast<size_t>(H) * W;") < at("kf_tile_smem[];"));
        QVERIFY(at("__syncthreads();") < at("if (idx >= total) return;"));
        QVERIFY(src.find("__syncthreads();", at("__syncthreads();") + 1) == npos);
        // x[idx] and x[idx -+ 1] from the tile where it was loaded, x[idx -+ W] from global memory.
        QVERIFY2(at("y[idx] = kf_tile_x[threadIdx.x + 1];") != npos, src.c_str());
        QVERIFY(at("const float sum = kf_tile_x[threadIdx.x + 1] + x[idx - W] + x[idx + W] + ") != npos);
        QVERIFY(at("(static_cast<long long>(idx) >= 1 ? kf_tile_x[threadIdx.x] : x[idx - 1])") != npos);
        QVERIFY(at("(static_cast<long long>(idx) + 1 < kf_tile_n ? kf_tile_x[threadIdx.x + 2] : x[idx + 1])") != npos);
        QVERIFY(at("<<<grid, block, (block + 2) * sizeof(float), stream>>>") != npos);
        // Once is enough: it refuses the second time.
        TransformResult again = tile.apply(src);
        QVERIFY(!again.source);
        QVERIFY2(again.refusal.find("already tiled") != npos, again.refusal.c_str());
        // After block-size-tunable the launch's block is still `block`, now KF_BLOCK.
        TransformResult tb = rewrite_named("block-size-tunable").apply(ref);
        QVERIFY2(tb.source, tb.refusal.c_str());
        TransformResult r2 = tile.apply(*tb.source);
        QVERIFY2(r2.source, r2.refusal.c_str());
        QVERIFY(r2.source->find("const int block = KF_BLOCK;") != npos);
        QVERIFY(r2.source->find("<<<grid, block, (block + 2) * sizeof(float), stream>>>") != npos);
        // blur3x3 reads its neighbours at offsets computed in a loop.
        Task b = load_task(task_dir("blur3x3"));
        TransformResult rb = tile.apply(kftest::read_file(b.references.at(Backend::Cuda)));
        QVERIFY(!rb.source);
        QVERIFY2(rb.refusal.find("no const input read at a constant nonzero offset of k") != npos, rb.refusal.c_str());
        QVERIFY2(rb.refusal.find("img[k + (long long)di * w + dj] is not a constant offset") != npos, rb.refusal.c_str());
        auto ev = nvcc_evaluator(cache_);
        if (!ev) return;
        CompileResult c = ev->compile(t, {src, "smem-tile"});
        QVERIFY2(c.ok, (c.info.log + "\n" + src).c_str());
        for (std::int64_t block : {64, 1024}) {
            CompileResult c2 = ev->compile(t, {*r2.source, "smem-tile"}, {{"KF_BLOCK", block}});
            QVERIFY2(c2.ok, (c2.info.log + "\n" + *r2.source).c_str());
        }
    }

    /**
     * smem-tile on 1-D kernels written here: a three-point stencil (`if (i < n) statement`, after
     * block-size-tunable too) and two inputs of different types laid one after the other in the
     * shared memory; they compile.
     */
    void smem_tile_rewrites_one_dimensional_kernels() {
        Task t = load_task(task_dir("sigmoid"));  // kf_solve(const float* x, float* y, int n, cudaStream_t)
        const std::string three_point =
            "#include \"kf_task.h\"\n\n"
            "__global__ void smooth(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
            "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n) y[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1];\n"
            "}\n\n"
            "extern \"C\" void kf_solve(const float* x, float* y, int n, cudaStream_t stream) {\n"
            "    smooth<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);\n"
            "}\n";
        const CodeTransform& tile = rewrite_named("smem-tile");
        constexpr auto npos = std::string::npos;
        TransformResult r = tile.apply(three_point);
        QVERIFY2(r.source, r.refusal.c_str());
        const std::string& src = *r.source;
        QVERIFY2(src.find("const long long kf_tile_n = static_cast<long long>(n);") != npos, src.c_str());
        QVERIFY(src.find("__syncthreads();\n    if (i < n) y[i] = ") != npos);
        QVERIFY(src.find("0.25f * (static_cast<long long>(i) >= 1 ? kf_tile_x[threadIdx.x] : x[i - 1]) + 0.5f * kf_tile_x[threadIdx.x + 1]") !=
                npos);
        QVERIFY(src.find("<<<(n + 255) / 256, 256, (256 + 2) * sizeof(float), stream>>>") != npos);
        QVERIFY(!tile.apply(src).source);
        // After block-size-tunable the shared size follows KF_BLOCK.
        TransformResult tb = rewrite_named("block-size-tunable").apply(three_point);
        QVERIFY2(tb.source, tb.refusal.c_str());
        TransformResult r2 = tile.apply(*tb.source);
        QVERIFY2(r2.source, r2.refusal.c_str());
        QVERIFY2(r2.source->find("<<<(n + (KF_BLOCK - 1)) / KF_BLOCK, KF_BLOCK, (KF_BLOCK + 2) * sizeof(float), stream>>>") != npos,
                 r2.source->c_str());
        // Two inputs: w (double, offsets 0 to 3) after x (float, -2 to 0), at a 16-byte boundary; a launch without a stream.
        const std::string two_inputs =
            "#include \"kf_task.h\"\n\n"
            "__global__ void mix(const float* x, const double* w, float* y, int n) {\n"
            "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i >= n) return;\n"
            "    y[i] = x[i - 2] + x[i] + static_cast<float>(w[i + 3] - w[i]);\n"
            "}\n\n"
            "extern \"C\" void kf_solve(const float* x, float* y, int n, cudaStream_t stream) {\n"
            "    const int block = 128;\n"
            "    mix<<<(n + block - 1) / block, block>>>(x, reinterpret_cast<const double*>(x), y, n / 2);\n"
            "}\n";
        TransformResult r3 = tile.apply(two_inputs);
        QVERIFY2(r3.source, r3.refusal.c_str());
        const std::string& s3 = *r3.source;
        QVERIFY2(s3.find("double* kf_tile_w = reinterpret_cast<double*>(kf_tile_smem + ((blockDim.x + 2) * sizeof(float) + 15) / 16 * 16);") !=
                     npos,
                 s3.c_str());
        QVERIFY(s3.find("const long long kf_g = kf_b0 + kf_t - 2;") != npos);
        QVERIFY(s3.find("const long long kf_g = kf_b0 + kf_t;") != npos);
        QVERIFY(s3.find("(static_cast<long long>(i) + 3 < kf_tile_n ? kf_tile_w[threadIdx.x + 3] : w[i + 3]) - kf_tile_w[threadIdx.x]") != npos);
        QVERIFY(s3.find("<<<(n + block - 1) / block, block, ((block + 2) * sizeof(float) + 15) / 16 * 16 + (block + 3) * sizeof(double)>>>") !=
                npos);
        auto ev = nvcc_evaluator(cache_);
        if (!ev) return;
        for (const std::string* s : {&src, &s3}) {
            CompileResult c = ev->compile(t, {*s, "smem-tile"});
            QVERIFY2(c.ok, (c.info.log + "\n" + *s).c_str());
        }
        CompileResult c2 = ev->compile(t, {*r2.source, "smem-tile"}, {{"KF_BLOCK", 1024}});
        QVERIFY2(c2.ok, (c2.info.log + "\n" + *r2.source).c_str());
    }

    void rewrites_refuse_where_they_do_not_apply_data() {
        QTest::addColumn<QString>("rewrite");
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("reason");
        QTest::newRow("no launch") << "block-size-tunable" << "extern \"C\" void kf_solve(const float* x, float* y, int n) {}"
                                   << "no kernel launch";
        QTest::newRow("two block sizes") << "block-size-tunable" << "k<<<g, 128>>>(x); k2<<<g, 256>>>(x);"
                                         << "the launches use different block sizes";
        QTest::newRow("grid not from the block") << "block-size-tunable" << "k<<<rows, 128, 0, s>>>(x);"
                                                 << "does not follow the block size 128";
        QTest::newRow("runtime block size") << "block-size-tunable" << "int b = pick(); k<<<g, b>>>(x);"
                                            << "is not a literal or an integer constant";
        QTest::newRow("no tunable block") << "launch-bounds" << "__global__ void k() {}" << "no tunable block size";
        QTest::newRow("bounds present") << "launch-bounds"
                                        << "#define BLOCK 256 // @kf tunable values(128, 256)\n__global__ void __launch_bounds__(256) k() {}"
                                        << "already declare launch bounds";
        QTest::newRow("row per thread") << "grid-stride" << "__global__ void k(float* y, int rows) { int r = blockIdx.x; y[r] = 0; }"
                                        << "no one-element-per-thread kernel";
        QTest::newRow("unknown grid") << "grid-stride"
                                      << "__global__ void k(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 0; }\n"
                                         "void f(float* y, int n) { k<<<grid_for(n), 256>>>(y, n); }"
                                      << "so its grid cannot be shrunk";
        const std::string row_kernel =
            "__global__ void k(const float* x, float* y, int rows, int cols) {\n"
            "    const int r = blockIdx.x * blockDim.x + threadIdx.x;\n    if (r >= rows) return;\n";
        const std::string launch = "}\nvoid f(const float* x, float* y, int rows, int cols) { k<<<(rows + 127) / 128, 128>>>(x, y, rows, cols); }";
        const std::string elem = "__global__ void k(const float* x, float* y, int n) {\n    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n";
        const std::string elaunch = "}\nvoid f(const float* x, float* y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }";
        QTest::newRow("vl: a row kernel") << "vector-loads" << kftest::read_file(kftest::data("tasks/row_max/reference.cu")).c_str()
                                          << "control flow in the body";
        QTest::newRow("vl: control flow") << "vector-loads" << (elem + "    if (i >= n) return;\n    if (x[i] > 0) y[i] = x[i];\n" + elaunch).c_str()
                                          << "control flow in the body";
        QTest::newRow("vl: a neighbour") << "vector-loads" << (elem + "    if (i < n) y[i] = x[i] + x[i + 1];\n" + elaunch).c_str()
                                         << "x[i + 1]: a tensor read at another index";
        QTest::newRow("vl: doubles") << "vector-loads"
                                     << "__global__ void k(const double* x, double* y, int n) {\n    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                        "    if (i < n) y[i] = x[i];\n}\nvoid f(const double* x, double* y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }"
                                     << "is not a float tensor";
        QTest::newRow("vl: reads its output") << "vector-loads" << (elem + "    if (i < n) y[i] = y[i] + x[i];\n" + elaunch).c_str()
                                              << "reads its output y";
        QTest::newRow("vl: accumulates") << "vector-loads" << (elem + "    if (i < n) y[i] += x[i];\n" + elaunch).c_str()
                                         << "an output is written once with =";
        QTest::newRow("vl: unknown grid") << "vector-loads"
                                          << (elem + "    if (i < n) y[i] = x[i];\n}\nvoid f(const float* x, float* y, int n) { k<<<grid_for(n), 256>>>(x, y, n); }").c_str()
                                          << "cannot be shrunk";
        QTest::newRow("element per thread") << "warp-rows" << kftest::read_file(kftest::data("tasks/sigmoid/reference.cu")).c_str()
                                            << "no thread-per-row kernel";
        QTest::newRow("no loop") << "warp-rows" << (row_kernel + "    y[r] = x[r];\n" + launch).c_str() << "no loop over the row";
        QTest::newRow("nested loop") << "warp-rows"
                                     << (row_kernel + "    float s = 0;\n    for (int c = 0; c < cols; ++c) for (int k = 0; k < 2; ++k) s += x[c];\n"
                                                      "    y[r] = s;\n" + launch).c_str()
                                     << "a nested loop";
        QTest::newRow("running sum") << "warp-rows"
                                     << (row_kernel + "    float s = 0;\n    for (int c = 0; c < cols; ++c) { s += x[r * cols + c]; y[r * cols + c] = s; }\n" +
                                         launch).c_str()
                                     << "a loop body other than const definitions";
        QTest::newRow("sum from a bias") << "warp-rows"
                                         << (row_kernel + "    float s = x[r];\n    for (int c = 0; c < cols; ++c) s += x[r * cols + c];\n    y[r] = s;\n" +
                                             launch).c_str()
                                         << "does not start at 0";
        QTest::newRow("reads its accumulator") << "warp-rows"
                                               << (row_kernel + "    float s = 0;\n    for (int c = 0; c < cols; ++c) s += s * x[r * cols + c];\n    y[r] = s;\n" +
                                                   launch).c_str()
                                               << "reads it";
        QTest::newRow("stride 2") << "warp-rows"
                                  << (row_kernel + "    float s = 0;\n    for (int c = 0; c < cols; c += 2) s += x[r * cols + c];\n    y[r] = s;\n" +
                                      launch).c_str()
                                  << "a loop that is not for (int c = start; c < end; ++c)";
        QTest::newRow("block of 100") << "warp-rows"
                                      << (row_kernel + "    float s = 0;\n    for (int c = 0; c < cols; ++c) s += x[r * cols + c];\n    y[r] = s;\n"
                                                       "}\nvoid f(const float* x, float* y, int rows, int cols) { k<<<(rows + 99) / 100, 100>>>(x, y, rows, cols); }").c_str()
                                      << "not a multiple of 32";
        QTest::newRow("st: a grid-stride loop")
            << "smem-tile"
            << "__global__ void k(const float* x, float* y, int n) {\n"
               "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i] + x[i + 1];\n"
               "}\nvoid f(const float* x, float* y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }"
            << "no one-element-per-thread kernel";
        QTest::newRow("st: no neighbour") << "smem-tile" << kftest::read_file(kftest::data("tasks/sigmoid/reference.cu")).c_str()
                                          << "no const input read at a constant nonzero offset of i";
        QTest::newRow("st: a computed offset") << "smem-tile" << (elem + "    if (i < n) y[i] = x[i] + x[i - n / 2];\n" + elaunch).c_str()
                                               << "x[i - n / 2] is not a constant offset";
        QTest::newRow("st: too far") << "smem-tile" << (elem + "    if (i < n) y[i] = x[i] + x[i + 40];\n" + elaunch).c_str()
                                     << "x[i + 40]: an offset beyond 32";
        QTest::newRow("st: already tiled") << "smem-tile"
                                           << (elem + "    __shared__ float kf_tile_x[258];\n    if (i < n) y[i] = x[i + 1];\n" + elaunch).c_str()
                                           << "already tiled";
        QTest::newRow("st: in place") << "smem-tile"
                                      << "__global__ void k(float* x, int n) {\n    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                         "    if (i < n) x[i] = 0.5f * (x[i - 1] + x[i + 1]);\n}\n"
                                         "void f(float* x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }"
                                      << "x is written and read at an offset (in place)";
        QTest::newRow("st: shared memory launch") << "smem-tile"
                                                  << (elem + "    if (i < n) y[i] = x[i] + x[i + 1];\n"
                                                             "}\nvoid f(const float* x, float* y, int n, cudaStream_t s) { k<<<(n + 255) / 256, 256, 1024, s>>>(x, y, n); }")
                                                         .c_str()
                                                  << "already asks for shared memory (1024)";
        QTest::newRow("st: return before the guard")
            << "smem-tile"
            << (std::string("__global__ void k(const float* x, float* y, int n) {\n    if (n < 2) return;\n"
                            "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = x[i] + x[i + 1];\n") +
                elaunch)
                   .c_str()
            << "'if (n < 2) return;' before the guard on i";
        QTest::newRow("st: branch around the guard")
            << "smem-tile"
            << (std::string("__global__ void k(const float* x, float* y, int n) {\n    if (n > 1) {\n"
                            "        const int i = blockIdx.x * blockDim.x + threadIdx.x;\n        if (i < n) y[i] = x[i] + x[i + 1];\n    }\n") +
                elaunch)
                   .c_str()
            << "inside a block or branch";
        QTest::newRow("st: computed block size") << "smem-tile"
                                                 << (elem + "    if (i < n) y[i] = x[i] + x[i + 1];\n"
                                                            "}\nvoid f(const float* x, float* y, int n, int b) { k<<<(n + 2 * b - 1) / (2 * b), 2 * b>>>(x, y, n); }")
                                                        .c_str()
                                                 << "(2 * b) is not a literal or a name";
        QTest::newRow("st: no launch") << "smem-tile" << (elem + "    if (i < n) y[i] = x[i] + x[i + 1];\n}\n").c_str() << "no launch of k";
        QTest::newRow("st: a template kernel") << "smem-tile" << ("template <typename T>\n" + elem + "    if (i < n) y[i] = x[i] + x[i + 1];\n" + elaunch).c_str()
                                               << "is a template";
    }

    void rewrites_refuse_where_they_do_not_apply() {
        QFETCH(QString, rewrite);
        QFETCH(QString, source);
        QFETCH(QString, reason);
        TransformResult r = rewrite_named(rewrite.toStdString()).apply(source.toStdString());
        QVERIFY2(!r.source, r.source ? r.source->c_str() : "");
        QVERIFY2(r.refusal.find(reason.toStdString()) != std::string::npos, r.refusal.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTemplateExpert)
#include "test_template_expert.moc"
