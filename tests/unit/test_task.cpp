// Task manifests: loading, validation errors (file, field, reason), expressions and the
// generated entry point.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/expr.h"
#include "kf/paths.h"
#include "kf/task.h"
#include "task_manifest_cases.h"
#include "testsupport.h"

using namespace kf;
using nlohmann::json;

namespace {

std::filesystem::path write_task(const json& manifest) {
    auto dir = kftest::temp_dir("task");
    kftest::write_file(dir / "task.json", manifest.dump(2));
    kftest::write_file(dir / "reference.cu", "// reference\n");
    kftest::write_file(dir / "reference.cpp", "// reference\n");
    return dir;
}

}  // namespace

class TestTask : public QObject {
    Q_OBJECT

private slots:
    void loads_a_valid_manifest() {
        Task t = load_task(write_task(taskcases::valid_manifest()));
        QCOMPARE(t.name, std::string("t"));
        QCOMPARE(t.tensors.size(), std::size_t(3));
        QCOMPARE(t.tensors[1].dtype, DType::Bool);
        QCOMPARE(t.tensors[1].init.dist, std::string("bernoulli"));
        const TaskCase& p = t.primary_case(Backend::Cuda);
        QCOMPARE(p.name, std::string("primary"));
        QCOMPARE(t.shape_of(t.tensors[2], p), (std::vector<std::int64_t>{64, 50}));
        QCOMPARE(t.flops_of(p), 2.0 * 64 * 100);
        QCOMPARE(t.bytes_of(p), 5.0 * 64 * 100);
        QCOMPARE(t.param_value(t.params[0], *t.find_case("odd")), 0.5);
        QCOMPARE(t.cases_for(Backend::Host).size(), std::size_t(2));
        QVERIFY(t.references.at(Backend::Cuda).is_absolute());
    }

    void rejects_malformed_manifests_data() {
        QTest::addColumn<QString>("patch");  // JSON merge patch applied to the valid manifest
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("reason");
        for (const auto& b : taskcases::kBadManifests)
            QTest::newRow(b.tag) << QString::fromUtf8(b.patch) << QString::fromUtf8(b.field) << QString::fromUtf8(b.reason);
    }

    void rejects_malformed_manifests() {
        QFETCH(QString, patch);
        QFETCH(QString, field);
        QFETCH(QString, reason);
        json m = taskcases::valid_manifest();
        m.merge_patch(json::parse(patch.toStdString()));
        auto dir = write_task(m);
        try {
            load_task(dir);
            QFAIL("the manifest was accepted");
        } catch (const TaskError& e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
            QVERIFY2(e.reason().find(reason.toStdString()) != std::string::npos, e.what());
            QVERIFY(e.file().find("task.json") != std::string::npos);
        }
    }

    void rejects_invalid_json_and_missing_files() {
        auto dir = kftest::temp_dir("badjson");
        kftest::write_file(dir / "task.json", "{ \"format\": 1, ");
        QVERIFY_THROWS_EXCEPTION(TaskError, load_task(dir));
        QVERIFY_THROWS_EXCEPTION(TaskError, load_task(dir / "nothing"));
    }

    void expressions() {
        QCOMPARE(Expr::parse("2 * (a + 3) - b / 2").eval({{"a", 1}, {"b", 4}}), 6.0);
        QCOMPARE(Expr::parse("ceil_div(a, 32) * 32").eval({{"a", 33}}), 64.0);
        QCOMPARE(Expr::parse("a % 32 == 0 && a <= 1024").eval({{"a", 256}}), 1.0);
        QCOMPARE(Expr::parse("2 ** 10").eval({}), 1024.0);
        QCOMPARE(Expr::parse("max(a, 3) + min(a, 3)").eval({{"a", 5}}), 8.0);
        QCOMPARE(Expr::parse("-a + !0").eval({{"a", 2}}), -1.0);
        QVERIFY_THROWS_EXCEPTION(ExprError, Expr::parse("2 +"));
        QVERIFY_THROWS_EXCEPTION(ExprError, Expr::parse("foo(1)"));
        QVERIFY_THROWS_EXCEPTION(ExprError, Expr::parse("a").eval({}));
        QCOMPARE(Expr::parse("a * b").names(), (std::set<std::string>{"a", "b"}));
    }

    void entry_header_and_glue() {
        Task t = load_task(write_task(taskcases::valid_manifest()));
        std::string cuda = entry_header(t, Backend::Cuda);
        QVERIFY2(cuda.find("extern \"C\" void kf_solve(const float* x, const bool* m, __nv_bfloat16* y, int rows, int cols, "
                           "double eps, cudaStream_t stream);") != std::string::npos,
                 cuda.c_str());
        std::string host = entry_header(t, Backend::Host);
        QVERIFY2(host.find("extern \"C\" void kf_solve(const float* x, const bool* m, kf_bfloat16* y, int rows, int cols, double eps);") !=
                     std::string::npos,
                 host.c_str());
        std::string glue = entry_glue(t, Backend::Host, "cand.cpp");
        QVERIFY(glue.find("#include \"cand.cpp\"") != std::string::npos);
        QVERIFY(glue.find("kf_entry") != std::string::npos);
    }

    void host_header_compiles_with_gxx() {
        Task t = load_task(write_task(taskcases::valid_manifest()));
        auto dir = kftest::temp_dir("hdr");
        kftest::write_file(dir / "kf_task.h", entry_header(t, Backend::Host));
        kftest::write_file(dir / "c.cpp",
                           "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, const bool* m, kf_bfloat16* y, "
                           "int rows, int cols, double eps) { (void)x; (void)m; (void)eps;\n"
                           " for (int i = 0; i < rows * ((cols + 1) / 2); ++i) y[i] = kf_float_to_bfloat16(kf_half_to_float(kf_float_to_half(1.5f))); }\n");
        kftest::write_file(dir / "glue.cpp", entry_glue(t, Backend::Host, "c.cpp"));
        int rc = std::system(("g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I" + dir.string() + " " + (dir / "glue.cpp").string()).c_str());
        QCOMPARE(rc, 0);
    }

    void bundled_tasks_are_valid() {
        auto root = kftest::source_dir() / "tasks";
        auto dirs = find_task_dirs(root);
        QVERIFY(dirs.size() >= 10);
        int level1 = 0, level2 = 0;
        for (const auto& d : dirs) {
            Task t = load_task(d);  // throws on any error
            QVERIFY2(t.supports(Backend::Cuda) && t.supports(Backend::Host), t.name.c_str());
            QVERIFY(t.cases_for(Backend::Cuda).size() >= 2);
            QVERIFY(t.cases_for(Backend::Host).size() >= 2);
            std::string rel = std::filesystem::relative(d, root).string();
            if (rel.rfind("level1/", 0) == 0) ++level1;
            if (rel.rfind("level2/", 0) == 0) ++level2;
        }
        QVERIFY(level1 >= 8);
        QVERIFY(level2 >= 2);
    }
};

QTEST_GUILESS_MAIN(TestTask)
#include "test_task.moc"
