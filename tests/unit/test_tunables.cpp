// Tunable annotations: parsing, validation, enumeration and instantiation (kf/tunables.h).
#include <QtTest>

#include <filesystem>

#include "kf/process.h"
#include "kf/tunables.h"
#include "testsupport.h"

namespace {

// The syntax from docs/tunables.md, one form per line; line numbers are asserted below.
const char* kExample =
    "#include <cstdio>\n"                                                        // 1
    "#define BLOCK 256            // @kf tunable values(64, 128, 256, 512)\n"    // 2
    "constexpr int VEC = 4;       // @kf tunable values(1, 2, 4)\n"              // 3
    "static constexpr int UNROLL = 2;   // @kf tunable range(1, 8)\n"            // 4
    "#define TILE 32   // @kf tunable range(8, 64, step=8)\n"                    // 5
    "const int SHIFT = -1;  // @kf tunable values(-2, -1, 0)\n"                  // 6
    "// @kf constraint BLOCK * VEC <= 1024\n"                                    // 7
    "// @kf constraint BLOCK % 32 == 0\n";                                       // 8

std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t step = 1) {
    std::vector<std::int64_t> v;
    for (std::int64_t x = lo; x <= hi; x += step) v.push_back(x);
    return v;
}

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1)
        out.push_back(s.substr(start, nl - start));
    out.push_back(s.substr(start));
    return out;
}

std::filesystem::path find_nvcc() {
    for (const char* p : {"/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"})
        if (std::filesystem::exists(p)) return p;
    return {};
}

}  // namespace

class TestTunables : public QObject {
    Q_OBJECT

private slots:
    void parsesEveryDeclarationForm() {
        kf::TunableSpace s = kf::parse_tunables(kExample);
        QCOMPARE(s.params.size(), std::size_t(5));
        const std::vector<std::string> names = {"BLOCK", "VEC", "UNROLL", "TILE", "SHIFT"};
        const std::vector<int> lines = {2, 3, 4, 5, 6};
        const std::vector<std::int64_t> defaults = {256, 4, 2, 32, -1};
        for (std::size_t i = 0; i < names.size(); ++i) {
            QCOMPARE(s.params[i].name, names[i]);
            QCOMPARE(s.params[i].line, lines[i]);
            QCOMPARE(s.params[i].default_value, defaults[i]);
        }
        QCOMPARE(s.params[0].values, (std::vector<std::int64_t>{64, 128, 256, 512}));
        QCOMPARE(s.params[2].values, range(1, 8));
        QCOMPARE(s.params[3].values, range(8, 64, 8));
        QCOMPARE(s.params[4].values, (std::vector<std::int64_t>{-2, -1, 0}));
        QCOMPARE(s.constraints.size(), std::size_t(2));
        QCOMPARE(s.constraints[0].text, std::string("BLOCK * VEC <= 1024"));
        QCOMPARE(s.constraints[0].line, 7);
        QCOMPARE(s.constraints[1].line, 8);
        QVERIFY(s.find("TILE") != nullptr);
        QVERIFY(s.find("NOPE") == nullptr);
        QCOMPARE(s.defaults().at("TILE"), std::int64_t(32));
        QVERIFY(s.satisfies(s.defaults()));
        QCOMPARE(s.cartesian_size(), std::uint64_t(4 * 3 * 8 * 8 * 3));
    }

    void acceptsOtherIntegerSpellings() {
        const char* src =
            "  static const unsigned int A = 8u;  // @kf tunable values(8, 16)\n"
            "constexpr std::int64_t B = 3;  // @kf tunable range(1, 4)\n"
            "# define C 5 ///< @kf tunable values(5)\n"
            "inline constexpr long long D = 7LL;\t//\t@kf   tunable   values( 7 ,9 )\n"
            "const char* url = \"http://x // @kf nonsense\";  // plain comment\n"
            "// see @kfdocs and // @kf? not annotations\n"
            "/* @kf tunable values(1) */ int E = 1;\n";
        kf::TunableSpace s = kf::parse_tunables(src);
        QCOMPARE(s.params.size(), std::size_t(4));
        QCOMPARE(s.params[0].default_value, std::int64_t(8));
        QCOMPARE(s.params[1].default_value, std::int64_t(3));
        QCOMPARE(s.params[2].name, std::string("C"));
        QCOMPARE(s.params[3].values, (std::vector<std::int64_t>{7, 9}));
        std::string out = kf::instantiate(src, s, {{"A", 16}, {"B", 4}, {"C", 5}, {"D", 9}});
        QVERIFY(out.find("unsigned int A = 16u;") != std::string::npos);
        QVERIFY(out.find("long long D = 9LL;") != std::string::npos);
    }

    void sourceWithoutAnnotationsIsEmpty() {
        kf::TunableSpace s = kf::parse_tunables("#define BLOCK 256\nint main() {}\n");
        QVERIFY(s.empty());
        QCOMPARE(s.cartesian_size(), std::uint64_t(1));
        QCOMPARE(s.enumerate().size(), std::size_t(1));  // the source as written
        QCOMPARE(kf::instantiate("int x;\n", s, {}), std::string("int x;\n"));
    }

    void rejectsMalformedAnnotations_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("reason");
        auto row = [](const char* tag, const char* src, int line, const char* reason) {
            QTest::newRow(tag) << QString::fromUtf8(src) << line << QString::fromUtf8(reason);
        };
        row("unknown keyword", "int x;\n// @kf tunabel values(1)\n", 2, "unknown keyword '@kf tunabel'");
        row("missing keyword", "// @kf\n", 1, "must be followed by 'tunable' or 'constraint'");
        row("no declaration", "\n\nint x = f(); // @kf tunable values(1, 2)\n", 3, "needs a declaration");
        row("float type", "constexpr float X = 1; // @kf tunable values(1, 2)\n", 1, "needs a declaration");
        row("function macro", "#define F(x) 3 // @kf tunable values(3)\n", 1, "needs a declaration");
        row("duplicate", "#define A 1 // @kf tunable values(1)\nconstexpr int A = 1; // @kf tunable values(1)\n", 2,
            "already declared on line 1");
        row("empty values", "#define A 1 // @kf tunable values()\n", 1, "values() is empty");
        row("not integer", "#define A 1 // @kf tunable values(1, two)\n", 1, "'two' is not an integer");
        row("empty entry", "#define A 1 // @kf tunable values(1,,2)\n", 1, "empty entry");
        row("repeated value", "#define A 1 // @kf tunable values(1, 2, 1)\n", 1, "listed twice");
        row("no paren", "#define A 1 // @kf tunable values 1, 2\n", 1, "expected '('");
        row("unclosed", "#define A 1 // @kf tunable values(1, 2\n", 1, "missing ')'");
        row("trailing text", "#define A 1 // @kf tunable values(1) fast\n", 1, "unexpected text");
        row("no kind", "#define A 1 // @kf tunable\n", 1, "values(...) or range(...)");
        row("range arity", "#define A 1 // @kf tunable range(1)\n", 1, "takes (lo, hi)");
        row("range order", "#define A 1 // @kf tunable range(8, 1)\n", 1, "lower bound is above");
        row("range step", "#define A 1 // @kf tunable range(1, 8, 2)\n", 1, "'step=<int>'");
        row("range zero step", "#define A 1 // @kf tunable range(1, 8, step=0)\n", 1, "step must be positive");
        row("range huge", "#define A 1 // @kf tunable range(1, 100000000)\n", 1, "at most");
        row("default missing", "\n#define A 3 // @kf tunable values(1, 2)\n", 2, "must be one of its values");
        row("default off step", "#define A 3 // @kf tunable range(2, 8, step=2)\n", 1, "must be one of its values");
        row("octal", "#define A 010 // @kf tunable values(8, 10)\n", 1, "octal");
        row("overflow", "#define A 99999999999999999999 // @kf tunable values(1)\n", 1, "64 bits");
        row("constraint syntax", "#define A 1 // @kf tunable values(1)\n// @kf constraint A <=\n", 2,
            "constraint does not parse");
        row("constraint empty", "// @kf constraint\n", 1, "needs an expression");
        row("constraint undeclared", "#define A 1 // @kf tunable values(1)\n\n// @kf constraint A * B < 4\n", 3,
            "'B', which is not a declared tunable");
        row("defaults violate", "#define A 4 // @kf tunable values(1, 4)\n// @kf constraint A < 4\n", 2,
            "the values written in the source (A=4)");
    }
    void rejectsMalformedAnnotations() {
        QFETCH(QString, source);
        QFETCH(int, line);
        QFETCH(QString, reason);
        try {
            kf::parse_tunables(source.toStdString());
            QFAIL("no TunableError thrown");
        } catch (const kf::TunableError& e) {
            QCOMPARE(e.line(), line);
            const QString what = QString::fromStdString(e.what());
            QVERIFY2(what.startsWith(QStringLiteral("line %1: ").arg(line)), qPrintable(what));
            QVERIFY2(what.contains(reason), qPrintable(what));
        }
    }

    void constraintMayPrecedeDeclaration() {
        kf::TunableSpace s = kf::parse_tunables("// @kf constraint A + B == 3\n#define A 1 // @kf tunable range(0, 3)\n"
                                                "#define B 2 // @kf tunable range(0, 3)\n");
        QCOMPARE(s.enumerate().size(), std::size_t(4));
    }

    void instantiateRewritesOnlyTheNumbers() {
        const std::string src = kExample;
        kf::TunableSpace s = kf::parse_tunables(src);
        kf::Assignment a = {{"BLOCK", 128}, {"VEC", 2}, {"UNROLL", 8}, {"TILE", 64}, {"SHIFT", 0}};
        std::string out = kf::instantiate(src, s, a);
        auto before = lines_of(src), after = lines_of(out);
        QCOMPARE(after.size(), before.size());
        QCOMPARE(after[1], std::string("#define BLOCK 128            // @kf tunable values(64, 128, 256, 512)"));
        QCOMPARE(after[2], std::string("constexpr int VEC = 2;       // @kf tunable values(1, 2, 4)"));
        QCOMPARE(after[3], std::string("static constexpr int UNROLL = 8;   // @kf tunable range(1, 8)"));
        QCOMPARE(after[4], std::string("#define TILE 64   // @kf tunable range(8, 64, step=8)"));
        QCOMPARE(after[5], std::string("const int SHIFT = 0;  // @kf tunable values(-2, -1, 0)"));
        for (std::size_t i : {0u, 6u, 7u, 8u}) QCOMPARE(after[i], before[i]);
        // The instantiated text carries the same annotations, now with new defaults.
        QCOMPARE(kf::parse_tunables(out).defaults(), a);
        QCOMPARE(kf::instantiate(src, s, s.defaults()), src);
    }

    void instantiateKeepsCrLf() {
        const std::string src = "#define A 1 // @kf tunable values(1, 22)\r\nint x;\r\n";
        kf::TunableSpace s = kf::parse_tunables(src);
        QCOMPARE(kf::instantiate(src, s, {{"A", 22}}), std::string("#define A 22 // @kf tunable values(1, 22)\r\nint x;\r\n"));
    }

    void instantiateRejectsInvalidAssignments_data() {
        QTest::addColumn<QString>("assignment");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("reason");
        auto row = [](const char* tag, const char* assignment, int line, const char* reason) {
            QTest::newRow(tag) << QString::fromUtf8(assignment) << line << QString::fromUtf8(reason);
        };
        row("incomplete", "BLOCK=128 UNROLL=1 TILE=8 SHIFT=0", 3, "no value given for tunable VEC");
        row("out of values", "BLOCK=100 VEC=1 UNROLL=1 TILE=8 SHIFT=0", 2,
            "BLOCK=100 is not one of its values (64, 128, 256, 512)");
        row("constraint", "BLOCK=512 VEC=4 UNROLL=1 TILE=8 SHIFT=0", 7,
            "violates the constraint 'BLOCK * VEC <= 1024' (line 7)");
        row("unknown", "BLOCK=128 VEC=1 UNROLL=1 TILE=8 SHIFT=0 WARP=32", 0, "'WARP' is not a tunable");
    }
    void instantiateRejectsInvalidAssignments() {
        QFETCH(QString, assignment);
        QFETCH(int, line);
        QFETCH(QString, reason);
        kf::Assignment a;
        for (const QString& kv : assignment.split(QLatin1Char(' ')))
            a[kv.section(QLatin1Char('='), 0, 0).toStdString()] = kv.section(QLatin1Char('='), 1).toLongLong();
        kf::TunableSpace s = kf::parse_tunables(kExample);
        QVERIFY(!s.satisfies(a));
        QVERIFY2(QString::fromStdString(s.violation(a)).contains(reason), s.violation(a).c_str());
        try {
            kf::instantiate(kExample, s, a);
            QFAIL("no TunableError thrown");
        } catch (const kf::TunableError& e) {
            QCOMPARE(e.line(), line);
            QVERIFY2(QString::fromStdString(e.what()).contains(reason), e.what());
        }
    }

    void instantiateRejectsAnotherSource() {
        kf::TunableSpace s = kf::parse_tunables(kExample);
        QVERIFY_THROWS_EXCEPTION(kf::TunableError, kf::instantiate("int x;\n", s, s.defaults()));
    }

    void enumerateIsLexicographicAndFiltered() {
        const char* src =
            "#define A 2 // @kf tunable values(2, 1)\n"
            "#define B 1 // @kf tunable range(0, 2)\n"
            "#define C 0 // @kf tunable values(0, 5)\n"
            "// @kf constraint A + B <= 3\n"
            "// @kf constraint C == 0 || B == 1\n";
        kf::TunableSpace s = kf::parse_tunables(src);
        QCOMPARE(s.cartesian_size(), std::uint64_t(12));
        std::vector<std::string> got;
        for (const auto& a : s.enumerate()) got.push_back(kf::to_string(a));
        // Declaration order, first parameter slowest, values in their declared order.
        const std::vector<std::string> want = {"A=2 B=0 C=0", "A=2 B=1 C=0", "A=2 B=1 C=5", "A=1 B=0 C=0",
                                               "A=1 B=1 C=0", "A=1 B=1 C=5", "A=1 B=2 C=0"};
        QCOMPARE(got, want);
        for (const auto& a : s.enumerate()) QVERIFY(s.satisfies(a));
        QCOMPARE(s.enumerate(3).size(), std::size_t(3));
        QCOMPARE(kf::to_string(s.enumerate(3).back()), std::string("A=2 B=1 C=5"));
        QVERIFY(s.enumerate(0).empty());
    }

    void enumerateExampleMatchesBruteForce() {
        kf::TunableSpace s = kf::parse_tunables(kExample);
        std::size_t valid = 0;
        for (auto b : s.params[0].values)
            for (auto v : s.params[1].values)
                if (b * v <= 1024 && b % 32 == 0) ++valid;
        auto all = s.enumerate();
        QCOMPARE(all.size(), valid * 8 * 8 * 3);
        QCOMPARE(all.front(), (kf::Assignment{{"BLOCK", 64}, {"VEC", 1}, {"UNROLL", 1}, {"TILE", 8}, {"SHIFT", -2}}));
    }

    void cartesianSizeSaturates() {
        std::string src;
        for (int i = 0; i < 6; ++i)
            src += "#define P" + std::to_string(i) + " 1 // @kf tunable range(1, 65536)\n";
        kf::TunableSpace s = kf::parse_tunables(src);
        QCOMPARE(s.cartesian_size(), std::numeric_limits<std::uint64_t>::max());
        QCOMPARE(s.enumerate(5).size(), std::size_t(5));
    }

    void toStringListsNamesInOrder() {
        QCOMPARE(kf::to_string({{"VEC", 4}, {"BLOCK", 128}}), std::string("BLOCK=128 VEC=4"));
        QCOMPARE(kf::to_string({}), std::string());
    }

    // The point of annotations: the instantiated source compiles as written, and compiler
    // diagnostics point at the same line as in the original.
    void instantiatedHostSourceCompiles() {
        const std::string src =
            "#include <cstddef>\n"
            "#define BLOCK 256            // @kf tunable values(64, 128, 256, 512)\n"
            "constexpr int VEC = 4;       // @kf tunable values(1, 2, 4)\n"
            "static constexpr int UNROLL = 2;   // @kf tunable range(1, 8)\n"
            "// @kf constraint BLOCK * VEC <= 2048\n"
            "static_assert(BLOCK * VEC <= 2048, \"constraint\");\n"
            "static_assert(BLOCK != 64, \"marker on line 7\");\n"
            "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
            "    for (int start = 0; start < n; start += BLOCK * VEC) {\n"
            "        static_assert(UNROLL >= 1, \"unroll\");\n"
            "        for (int i = start; i < start + BLOCK * VEC && i < n; ++i) y[i] = 2 * x[i];\n"
            "    }\n"
            "}\n";
        kf::TunableSpace s = kf::parse_tunables(src);
        auto dir = kftest::temp_dir("tunables");
        auto compile = [&](const kf::Assignment& a) {
            auto file = dir / ("kernel-" + std::to_string(a.at("BLOCK")) + ".cpp");
            kftest::write_file(file, kf::instantiate(src, s, a));
            return kf::run_process({"g++", "-std=c++17", "-Wall", "-fsyntax-only", file.string()},
                                   std::chrono::seconds(60));
        };
        auto ok = compile({{"BLOCK", 512}, {"VEC", 4}, {"UNROLL", 8}});
        if (ok.start_failed) QSKIP("g++ is not available");
        QVERIFY2(ok.exit_code == 0, ok.output.c_str());
        // BLOCK=64 trips the marker; the diagnostic must name line 7 of the original.
        auto bad = compile({{"BLOCK", 64}, {"VEC", 1}, {"UNROLL", 1}});
        QVERIFY(bad.exit_code != 0);
        QVERIFY2(bad.output.find("kernel-64.cpp:7:") != std::string::npos, bad.output.c_str());
    }

    void instantiatedCudaSourceCompiles() {
        auto nvcc = find_nvcc();
        if (nvcc.empty()) QSKIP("nvcc is not installed");
        const std::string src =
            "#define BLOCK 256  // @kf tunable values(128, 256)\n"
            "constexpr int VEC = 4;  // @kf tunable values(1, 4)\n"
            "__global__ void scale(const float* x, float* y, int n) {\n"
            "    int i = (blockIdx.x * BLOCK + threadIdx.x) * VEC;\n"
            "    for (int k = 0; k < VEC && i + k < n; ++k) y[i + k] = 2 * x[i + k];\n"
            "}\n";
        kf::TunableSpace s = kf::parse_tunables(src);
        auto dir = kftest::temp_dir("tunables-cu");
        kftest::write_file(dir / "kernel.cu", kf::instantiate(src, s, {{"BLOCK", 128}, {"VEC", 1}}));
        auto r = kf::run_process({nvcc.string(), "-c", "-o", (dir / "kernel.o").string(), (dir / "kernel.cu").string()},
                                 std::chrono::seconds(180));
        QVERIFY2(r.exit_code == 0, r.output.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTunables)
#include "test_tunables.moc"
