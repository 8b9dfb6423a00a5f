// The KernelBench worker's fast load_inline build (resources/kernelbench/kb_fastbuild.py):
// the precompiled torch/extension.h is built once and used, the CUDA source gets the lighter
// header only where it builds with it, a rebuilt source is not compiled again, and a real
// compile error still reaches the user. Runs tests/data/kernelbench/fastbuild/check_fastbuild.py
// with stand-ins for PyTorch's headers and build step, the host's C++ compiler and ninja.
#include <QtTest>

#include <chrono>
#include <string>

#include "kf/process.h"
#include "testsupport.h"

class TestKbFastBuild : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (kf::run_process({"ninja", "--version"}, std::chrono::seconds(30)).exit_code != 0)
            QSKIP("ninja is not installed");
    }

    void fast_build_checks() {
        auto work = kftest::temp_dir("kbfast");
        kf::ProcessResult r = kf::run_process(
            {"python3", (kftest::source_dir() / "tests" / "data" / "kernelbench" / "fastbuild" / "check_fastbuild.py").string(),
             kftest::source_dir().string(), work.string()},
            std::chrono::minutes(5));
        qInfo().noquote() << QString::fromStdString(r.output);
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.output.find("FAIL") == std::string::npos);
        QVERIFY(r.output.find("the compiler used the precompiled header") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestKbFastBuild)
#include "test_kb_fastbuild.moc"
