// What a hostile candidate cannot do to the compile step: name files it may not read
// (#include and its relatives), exhaust memory or disk through the compiler, produce an
// oversized library, or get the contents of an outside file quoted back in diagnostics; the
// bwrap sandbox the compiler runs in, and its announced fallback. Honest tasks still compile.
#include <QtTest>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "kf/compile.h"
#include "kf/process.h"
#include "kf/sandbox_view.h"
#include "kf/task.h"
#include "testsupport.h"

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

const char* kHostHeader = "#pragma once\nextern \"C\" void kf_solve(const float* x, float* y, int n);\n";
const char* kHostGlue = "#include \"kf_task.h\"\n#include \"candidate.cpp\"\n";

kf::CompileRequest host_request(std::string source) {
    kf::CompileRequest r;
    r.backend = kf::Backend::Host;
    r.source = std::move(source);
    r.header = kHostHeader;
    r.glue = kHostGlue;
    r.timeout_s = 120;
    return r;
}

std::string everything(const kf::CompileResult& r) {
    std::string s = "ok=" + std::to_string(r.ok) + "\n";
    for (const auto& d : r.info.diagnostics)
        s += d.tool + " " + d.file + ":" + std::to_string(d.line) + ": " + d.message + "\n";
    return s + r.info.log;
}

bool has_message(const kf::CompileResult& r, const std::string& part) {
    return std::any_of(r.info.diagnostics.begin(), r.info.diagnostics.end(),
                       [&](const kf::Diagnostic& d) { return d.message.find(part) != std::string::npos; });
}

bool have_nvcc() {
    auto r = kf::run_process({kf::compiler_program(kf::Backend::Cuda), "--version"}, std::chrono::seconds(30));
    return !r.start_failed && r.exit_code == 0;
}

/** The largest resident set of any child this process has waited for, in bytes. */
std::uint64_t children_max_rss() {
    rusage ru{};
    getrusage(RUSAGE_CHILDREN, &ru);
    return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
}

/** Sets an environment variable for one scope. */
struct ScopedEnv {
    QByteArray name, saved;
    bool had;
    ScopedEnv(const char* n, const char* value) : name(n), saved(qgetenv(n)), had(qEnvironmentVariableIsSet(n)) {
        qputenv(n, value);
    }
    ~ScopedEnv() {
        if (had)
            qputenv(name.constData(), saved);
        else
            qunsetenv(name.constData());
    }
};

}  // namespace

class TestCompileLimits : public QObject {
    Q_OBJECT

    fs::path cache_dir_;

private slots:
    void initTestCase() { cache_dir_ = kftest::temp_dir("compile-limits"); }

    void screenRefuses_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("named");
        QTest::newRow("absolute") << "#include \"/etc/shadow\"\n" << 1 << "\"/etc/shadow\"";
        QTest::newRow("dev") << "int a;\n#include \"/dev/zero\"\n" << 2 << "/dev";
        QTest::newRow("proc angle") << "#include </proc/self/environ>\n" << 1 << "</proc/self/environ>";
        QTest::newRow("parent") << "#include \"../../project.db\"\n" << 1 << "'..'";
        QTest::newRow("parent angle") << "#include <../../../etc/passwd>\n" << 1 << "<../../../etc/passwd>";
        QTest::newRow("include_next") << "#  include_next \"/etc/passwd\"\n" << 1 << "#include_next";
        QTest::newRow("import") << "#import \"/etc/passwd\"\n" << 1 << "#import";
        QTest::newRow("embed") << "const char d[] = {\n#embed \"/dev/urandom\"\n};\n" << 2 << "#embed";
        QTest::newRow("digraph") << "%:include \"/etc/passwd\"\n" << 1 << "/etc/passwd";
        QTest::newRow("comment in directive") << "#/**/include \"/etc/passwd\"\n" << 1 << "/etc/passwd";
        QTest::newRow("continued directive") << "#inc\\\nlude \"/etc/pa\\\nsswd\"\n" << 1 << "/etc/passwd";
        QTest::newRow("macro name") << "#define F \"/etc/passwd\"\n#include F\n" << 2 << "computed by a macro";
        QTest::newRow("has_include") << "#if __has_include(\"/etc/shadow\")\n#endif\n" << 1 << "__has_include";
        QTest::newRow("has_include macro") << "#define H(x) __has_include(x)\n" << 1 << "__has_include";
        QTest::newRow("pragma dependency") << "#pragma GCC dependency \"/etc/shadow\"\n" << 1 << "dependency";
        QTest::newRow("_Pragma dependency") << "int a;\n_Pragma(\"GCC dependency \\\"../x\\\"\")\n" << 2 << "dependency";
        QTest::newRow("_Pragma computed") << "#define P(x) _Pragma(#x)\nP(GCC dependency \"/etc/shadow\")\n" << 2
                                          << "dependency";
        QTest::newRow("incbin") << "asm(\".incbin \\\"/etc/shadow\\\"\");\n" << 1 << ".incbin";
        QTest::newRow("gas include") << "asm(\".include \\\"/etc/shadow\\\"\");\n" << 1 << ".include";
        // A lexer that took 1'/*' for a digit separator would see a comment and miss line 2.
        QTest::newRow("separator trick") << "int x = 1'/*';\n#include \"/etc/shadow\"\n// */\n" << 2 << "/etc/shadow";
        QTest::newRow("in block comment") << "/*\n#include \"/etc/shadow\"\n*/\n" << 2 << "/etc/shadow";
    }

    void screenRefuses() {
        QFETCH(QString, source);
        QFETCH(int, line);
        QFETCH(QString, named);
        auto found = kf::screen_includes(source.toStdString(), "candidate.cpp");
        QVERIFY2(!found.empty(), qPrintable(source));
        QCOMPARE(found.front().line, line);
        QCOMPARE(found.front().file, std::string("candidate.cpp"));
        QCOMPARE(found.front().severity, kf::Severity::Error);
        QVERIFY2(found.front().message.find(named.toStdString()) != std::string::npos, found.front().message.c_str());
    }

    void screenAccepts() {
        const char* honest =
            "#include <cmath>\n#include <cuda_runtime.h>\n#  include \"kf_task.h\"\n"
            "#if __has_include(<cuda_fp16.h>)\n#include <cuda_fp16.h>\n#endif\n"
            "#define UNROLL _Pragma(\"unroll\")\n#define PRAGMA(x) _Pragma(#x)\n"
            "// see ../docs and /etc/x in a comment\n"
            "const char* s = \"a string naming /etc/passwd and ../x\";\n"
            "const char* r = R\"x(#include \"/etc/passwd\" in a raw string is text)x\";\n"
            "int n = 1'000'000; char c = '\\'';\n";
        auto found = kf::screen_includes(honest, "candidate.cu");
        QVERIFY2(found.empty(), found.empty() ? "" : found.front().message.c_str());
        // Every bundled reference and candidate passes.
        int sources = 0;
        for (const auto& e : fs::recursive_directory_iterator(kftest::source_dir() / "tasks")) {
            auto ext = e.path().extension();
            if (ext != ".cu" && ext != ".cpp") continue;
            ++sources;
            auto f = kf::screen_includes(kftest::read_file(e.path()), e.path().filename().string());
            QVERIFY2(f.empty(), qPrintable(QString::fromStdString(e.path().string() + ": " + (f.empty() ? "" : f.front().message))));
        }
        QVERIFY(sources > 20);
    }

    void devZeroRefusedBeforeCompiling() {
        kf::CompileCache cache(cache_dir_);
        auto req = host_request(kftest::read_file(kftest::data("candidates/host/compile_dev_zero.cpp")));
        auto t0 = std::chrono::steady_clock::now();
        auto r = cache.compile(req);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(!r.ok, everything(r).c_str());
        QVERIFY2(seconds < 30, everything(r).c_str());
        QCOMPARE(r.info.diagnostics.front().line, 3);
        QCOMPARE(r.info.diagnostics.front().file, std::string("candidate.cpp"));
        QVERIFY2(has_message(r, "#include \"/dev/zero\""), everything(r).c_str());
        QVERIFY(r.library.empty());
        QVERIFY2(children_max_rss() < kf::effective_limits(req).memory_bytes, everything(r).c_str());
        // Refused every time, from the cache as well.
        auto again = cache.compile(req);
        QVERIFY(again.info.cached);
        QVERIFY(!again.ok);
    }

    void macroIncludeRefused() {
        kf::CompileCache cache(cache_dir_);
        auto r = cache.compile(host_request(kftest::read_file(kftest::data("candidates/host/compile_macro_include.cpp"))));
        QVERIFY2(!r.ok, everything(r).c_str());
        QCOMPARE(r.info.diagnostics.front().line, 4);
        QVERIFY2(has_message(r, "#include KF_SECRET"), everything(r).c_str());
    }

    void memoryLimit() {
        kf::CompileCache cache(cache_dir_);
        auto req = host_request(kftest::read_file(kftest::data("candidates/host/compile_memory_hog.cpp")));
        req.limits.memory_bytes = 384 * MiB;
        auto t0 = std::chrono::steady_clock::now();
        auto r = cache.compile(req);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(!r.ok, everything(r).c_str());
        QVERIFY2(has_message(r, "ran out of memory"), everything(r).c_str());
        QVERIFY2(has_message(r, "384.0 MiB"), everything(r).c_str());
        QVERIFY2(seconds < req.timeout_s, everything(r).c_str());
        QVERIFY2(children_max_rss() <= 384 * MiB, qPrintable(QString::number(children_max_rss())));
        QCOMPARE(kf::effective_limits(host_request("")).memory_bytes, 4096 * MiB);
        kf::CompileRequest cuda;
        cuda.backend = kf::Backend::Cuda;
        QCOMPARE(kf::effective_limits(cuda).memory_bytes, 8192 * MiB);
    }

    void libraryTooLarge() {
        kf::CompileCache cache(cache_dir_);
        auto req = host_request(kftest::read_file(kftest::data("candidates/host/compile_huge_library.cpp")));
        req.extra_flags = {"-DKF_HUGE_MIB=12"};
        req.limits.library_bytes = 4 * MiB;
        auto r = cache.compile(req);
        QVERIFY2(!r.ok, everything(r).c_str());
        QVERIFY2(has_message(r, "over the limit of 4.0 MiB"), everything(r).c_str());
        QVERIFY(r.library.empty());
        QVERIFY(!fs::exists(cache_dir_ / r.key / "candidate.so"));
        // Under the limit, the same source is accepted.
        req.limits.library_bytes = 64 * MiB;
        auto fits = cache.compile(req);
        QVERIFY2(fits.ok, everything(fits).c_str());
        QCOMPARE(kf::effective_limits(host_request("")).library_bytes, 64 * MiB);
    }

    void fileSizeLimit() {
        const fs::path dir = kftest::temp_dir("compile-limits-fsize");
        kf::CompileCache cache(dir);
        auto req = host_request(kftest::read_file(kftest::data("candidates/host/compile_huge_library.cpp")));
        req.extra_flags = {"-DKF_HUGE_MIB=24"};
        req.limits.file_bytes = 6 * MiB;
        auto r = cache.compile(req);
        QVERIFY2(!r.ok, everything(r).c_str());
        QVERIFY2(has_message(r, "no file it writes may exceed 6.0 MiB"), everything(r).c_str());
        for (const auto& e : fs::recursive_directory_iterator(dir))
            if (e.is_regular_file()) QVERIFY2(e.file_size() <= 6 * MiB, e.path().c_str());
    }

    void outputCapped() {
        auto req = host_request("");
        QCOMPARE(kf::effective_limits(req).output_bytes, std::size_t(MiB));
        auto r = kf::run_process({"sh", "-c", "yes | head -c 3000000"}, std::chrono::seconds(30), {}, 1000);
        QCOMPARE(r.output.size(), std::size_t(1000));
        QCOMPARE(r.exit_code, 0);
    }

    void childYieldsTheProcessors() {
        errno = 0;
        const int own = getpriority(PRIO_PROCESS, 0);
        QCOMPARE(errno, 0);
        kf::ProcessLimits limits;
        limits.nice = 5;
        auto r = kf::run_process({"nice"}, std::chrono::seconds(30), {}, 1000, limits);
        QCOMPARE(r.exit_code, 0);
        QCOMPARE(std::stoi(r.output), std::min(19, own + 5));
        r = kf::run_process({"nice"}, std::chrono::seconds(30));
        QCOMPARE(std::stoi(r.output), own);
    }

    // The compiler runs at a lower priority than the engine (KF_COMPILE_NICE, default 10), so
    // that evaluations beside it do not wait for a processor. A stand-in compiler reports its
    // niceness (outside the sandbox, which would not show the stand-in).
    void compilerYieldsTheProcessors_data() {
        QTest::addColumn<QString>("setting");
        QTest::addColumn<int>("added");
        QTest::newRow("default") << QString() << 10;
        QTest::newRow("three") << QString("3") << 3;
        QTest::newRow("none") << QString("0") << 0;
        QTest::newRow("junk") << QString("high") << 10;
    }

    void compilerYieldsTheProcessors() {
        QFETCH(QString, setting);
        QFETCH(int, added);
        const fs::path dir = kftest::temp_dir("compile-nice");
        const fs::path fake = dir / "fake-cxx";
        {
            std::ofstream f(fake);
            f << "#!/bin/sh\necho \"kf-niceness $(nice)\"\nexit 1\n";
        }
        fs::permissions(fake, fs::perms::owner_all);
        ScopedEnv bwrap("KF_BWRAP", "/nonexistent/bwrap");
        ScopedEnv cxx("KF_CXX", fake.c_str());
        std::optional<ScopedEnv> nice;
        if (!setting.isEmpty()) nice.emplace("KF_COMPILE_NICE", setting.toUtf8().constData());
        kf::CompileCache cache(dir / "cache");
        auto r = cache.compile(host_request("// " + setting.toStdString() + "\nextern \"C\" void kf_solve(const float*, float*, int) {}\n"));
        QVERIFY(!r.ok);
        const auto at = r.info.log.find("kf-niceness ");
        QVERIFY2(at != std::string::npos, r.info.log.c_str());
        errno = 0;
        const int own = getpriority(PRIO_PROCESS, 0);
        QCOMPARE(std::stoi(r.info.log.substr(at + 12)), std::min(19, own + added));
    }

    void outsideQuotesWithheld() {
        const fs::path dir = "/cache/tmp-abc";
        const std::string gcc =
            "In file included from /cache/tmp-abc/kf_glue.cpp:2:\n"
            "/etc/secret.h:1:1: error: 'TOPSECRET_1' does not name a type\n"
            "    1 | TOPSECRET_1 TOPSECRET_2\n"
            "      | ^~~~~~~~~~~\n"
            "/cache/tmp-abc/candidate.cpp:4:5: error: 'undeclared' was not declared in this scope\n"
            "    4 |     undeclared;\n"
            "      |     ^~~~~~~~~~\n"
            "/usr/include/c++/12/bits/stl_algo.h:9:1: note: in 'std::sort'\n"
            "    9 |   sort(first, last);\n";
        std::string kept = kf::withhold_outside_quotes(gcc, dir, {"/usr"});
        QVERIFY2(kept.find("TOPSECRET") == std::string::npos, kept.c_str());
        QVERIFY2(kept.find("/etc/secret.h:1:1: error:") != std::string::npos, kept.c_str());
        QVERIFY2(kept.find("    4 |     undeclared;") != std::string::npos, kept.c_str());
        QVERIFY2(kept.find("    9 |   sort(first, last);") != std::string::npos, kept.c_str());
        QVERIFY2(kept.find("withheld") != std::string::npos, kept.c_str());
        const std::string nvcc =
            "/project/headers/secret.cuh(3): error: identifier \"TOPSECRET_3\" is undefined\n"
            "    TOPSECRET_3 x;\n"
            "    ^\n\n"
            "/cache/tmp-abc/candidate.cu(2): error: expected a \";\"\n"
            "    int y\n"
            "         ^\n";
        kept = kf::withhold_outside_quotes(nvcc, dir, {"/usr"});
        QVERIFY2(kept.find("TOPSECRET") == std::string::npos, kept.c_str());
        QVERIFY2(kept.find("    int y\n") != std::string::npos, kept.c_str());
    }

    void outsideFileNotQuotedByRealCompile() {
        // A header folder the request allows (a task's headers) holds a file with a secret
        // and a syntax error: the compile fails, naming the file, without quoting it.
        fs::path headers = kftest::temp_dir("compile-limits-headers");
        kftest::write_file(headers / "secret_config.h", "SECRET_PASSWORD_4711 = hunter2 ;\n");
        kf::CompileCache cache(cache_dir_);
        auto req = host_request("#include \"secret_config.h\"\n"
                                "extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                "    for (int i = 0; i < n; ++i) y[i] = x[i];\n}\n");
        req.include_dirs = {headers};
        auto r = cache.compile(req);
        QVERIFY2(!r.ok, everything(r).c_str());
        std::string all = everything(r);
        QVERIFY2(all.find("secret_config.h") != std::string::npos, all.c_str());
        QVERIFY2(all.find("SECRET_PASSWORD") == std::string::npos, all.c_str());
        QVERIFY2(all.find("hunter2") == std::string::npos, all.c_str());
        auto meta = kftest::read_file(cache_dir_ / r.key / "meta.json");
        QVERIFY2(meta.find("hunter2") == std::string::npos, meta.c_str());
    }

    void bwrapPrefixArguments() {
        kf::SandboxView view;
        view.read_only = {"/usr", "/bin", "/does/not/exist"};
        view.scratch = "/tmp/scratch-x";
        view.devices = {"/dev/null"};
        auto args = kf::bwrap_prefix(view);
        auto has = [&](std::vector<std::string> seq) {
            return std::search(args.begin(), args.end(), seq.begin(), seq.end()) != args.end();
        };
        QVERIFY(has({"--die-with-parent"}));
        QVERIFY(has({"--new-session"}));
        QVERIFY(has({"--unshare-all"}));
        QVERIFY(!has({"--share-net"}));
        QVERIFY(has({"--ro-bind", "/usr", "/usr"}));
        QVERIFY(has({"--tmpfs", "/tmp"}));
        QVERIFY(has({"--bind", "/tmp/scratch-x", "/tmp/scratch-x"}));
        QVERIFY(has({"--chdir", "/tmp/scratch-x"}));
        QVERIFY(has({"--dev-bind", "/dev/null", "/dev/null"}));
        QVERIFY(!has({"/does/not/exist"}));
        if (fs::is_symlink("/bin")) QVERIFY(has({"--symlink", fs::read_symlink("/bin").string(), "/bin"}));
        QCOMPARE(args.back(), std::string("--"));
        view.network = true;
        args = kf::bwrap_prefix(view);
        QVERIFY(has({"--share-net"}));
    }

    void sandboxShowsOnlyTheView() {
        std::string why;
        if (!kf::bwrap_usable(&why)) QSKIP(qPrintable(QString::fromStdString("bwrap cannot run here: " + why)));
        fs::path secret_dir = kftest::temp_dir("compile-limits-secret");
        kftest::write_file(secret_dir / "secret.txt", "TOPSECRET\n");
        fs::path scratch = kftest::temp_dir("compile-limits-scratch");
        kf::SandboxView view;
        view.read_only = kf::system_read_only_paths();
        view.scratch = scratch;
        auto run = [&](const std::string& script) {
            auto argv = kf::bwrap_prefix(view);
            argv.insert(argv.end(), {"sh", "-c", script});
            return kf::run_process(argv, std::chrono::seconds(30));
        };
        auto r = run("cat " + (secret_dir / "secret.txt").string());
        QVERIFY2(r.exit_code != 0 && r.output.find("TOPSECRET") == std::string::npos, r.output.c_str());
        r = run("echo written > out.txt && cat out.txt");
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        QVERIFY(fs::exists(scratch / "out.txt"));
        r = run("touch /usr/kf-should-fail");
        QVERIFY2(r.exit_code != 0, r.output.c_str());
        r = run("test ! -e /etc/passwd && test ! -e /home && echo clean");
        QVERIFY2(r.output.find("clean") != std::string::npos, r.output.c_str());
        r = run("cat /proc/net/dev");  // only the loopback device: no network
        QVERIFY2(r.output.find("eth") == std::string::npos && r.output.find("ens") == std::string::npos, r.output.c_str());
    }

    void sandboxFallbackIsAnnounced() {
        ScopedEnv env("KF_BWRAP", "/nonexistent/bwrap");
        std::string why;
        QVERIFY(!kf::bwrap_usable(&why));
        QVERIFY2(why.find("/nonexistent/bwrap") != std::string::npos, why.c_str());
        kf::CompileCache cache(cache_dir_);
        auto r = cache.compile(host_request("extern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                            "    for (int i = 0; i < n; ++i) y[i] = 3.0f * x[i];\n}\n"));
        QVERIFY2(r.ok, everything(r).c_str());
        int warnings = 0;
        for (const auto& d : r.info.diagnostics)
            if (d.severity == kf::Severity::Warning && d.message.find("without a sandbox") != std::string::npos) ++warnings;
        QCOMPARE(warnings, 1);
        QVERIFY2(r.info.log.rfind("kfoundry: warning: the compiler ran without a sandbox", 0) == 0, r.info.log.c_str());
    }

    void sandboxedCompileHasNoWarning() {
        std::string why;
        if (!kf::bwrap_usable(&why)) QSKIP(qPrintable(QString::fromStdString("bwrap cannot run here: " + why)));
        kf::CompileCache cache(cache_dir_);
        auto r = cache.compile(host_request("#include <cmath>\nextern \"C\" void kf_solve(const float* x, float* y, int n) {\n"
                                            "    for (int i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);\n}\n"));
        QVERIFY2(r.ok, everything(r).c_str());
        QVERIFY2(!has_message(r, "without a sandbox"), everything(r).c_str());
    }

    void honestTasksCompile() {
        // Every bundled task's references and candidates compile under the default limits
        // (and in the sandbox where bwrap runs); CUDA only where nvcc is present.
        const bool nvcc = have_nvcc();
        kf::CompileCache cache(cache_dir_);
        kf::CompilePool pool(cache, 2);
        std::vector<std::pair<std::string, std::future<kf::CompileResult>>> jobs;
        for (const fs::path& dir : kf::find_task_dirs(kftest::source_dir() / "tasks")) {
            kf::Task task = kf::load_task(dir);
            for (kf::Backend b : {kf::Backend::Host, kf::Backend::Cuda}) {
                if (b == kf::Backend::Cuda && !nvcc) continue;
                std::vector<fs::path> sources;
                const std::string ext = b == kf::Backend::Cuda ? ".cu" : ".cpp";
                if (fs::exists(dir / ("reference" + ext))) sources.push_back(dir / ("reference" + ext));
                if (fs::is_directory(dir / "candidates"))
                    for (const auto& e : fs::directory_iterator(dir / "candidates"))
                        if (e.path().extension() == ext) sources.push_back(e.path());
                for (const auto& src : sources) {
                    kf::CompileRequest req;
                    req.backend = b;
                    req.source = kftest::read_file(src);
                    req.source_name = src.stem().string() + ext;
                    req.header = kf::entry_header(task, b);
                    req.glue = kf::entry_glue(task, b, req.source_name);
                    req.libraries = task.rules.allowed_libraries;
                    jobs.emplace_back(src.string(), pool.submit(req));
                }
            }
        }
        QVERIFY(jobs.size() >= 10);
        for (auto& [name, fut] : jobs) {
            kf::CompileResult r = fut.get();
            QVERIFY2(r.ok, (name + "\n" + everything(r)).c_str());
        }
        if (!nvcc) qInfo("nvcc not found: only the host sources were compiled");
    }
};

QTEST_GUILESS_MAIN(TestCompileLimits)
#include "test_compile_limits.moc"
