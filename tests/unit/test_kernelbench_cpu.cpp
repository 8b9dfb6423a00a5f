// The real KernelBench worker in its CPU testing mode, over the CPU test candidates that
// carry the verdicts of honest fp32 reorderings, a peek at the reference, a pointer-keyed
// output cache and process starts (tests/data/kernelbench/cpu_candidates/README.md), through
// scripts/kernelbench/kb_gpu_test.py. Needs PyTorch (CPU build), a C++ compiler and ninja in
// $KF_PYTHON or python3; skips itself without PyTorch.
#include <QtTest>

#include <chrono>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "kf/process.h"
#include "testsupport.h"

namespace fs = std::filesystem;

namespace {

std::string python() {
    const char* p = std::getenv("KF_PYTHON");
    return p && *p ? p : "python3";
}

/** Processes whose command line holds `marker` (the popen candidate's `sleep 3517`). */
int processes_with(const std::string& marker) {
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmd = kftest::read_file(e.path() / "cmdline");
        for (auto& c : cmd)
            if (c == '\0') c = ' ';
        if (cmd.find(marker) != std::string::npos) ++n;
    }
    return n;
}

}  // namespace

class TestKernelBenchCpu : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        kf::ProcessResult r = kf::run_process({python(), "-c", "import torch"}, std::chrono::minutes(2));
        if (r.exit_code != 0) QSKIP("no PyTorch for $KF_PYTHON or python3");
    }

    void verdicts_of_the_cpu_candidates() {
        fs::path out = kftest::temp_dir("kbcpu") / "out.json";
        fs::path build = kftest::temp_dir("kbcpu-build");
        const std::string only =
            "good_cpu_gemm_folded.py,good_cpu_gemm_reversed.py,cheat_cpu_gemm_bf16.py,cheat_frame_peek.py,"
            "cheat_pointer_cache.py,cheat_process_popen.py,cheat_process_fork.py,cheat_process_multiprocessing.py,"
            "cheat_cache_by_pointer.py,good_cpu_scale_relu.py";
        kf::ProcessResult r = kf::run_process(
            {python(), (kftest::source_dir() / "scripts" / "kernelbench" / "kb_gpu_test.py").string(), out.string(),
             "--device", "cpu", "--python", python(), "--shared-build", "--build-root", build.string(), "--jobs", "2",
             "--reps", "5", "--only", only},
            std::chrono::minutes(25));
        qInfo("%s", r.output.c_str());
        nlohmann::json j = nlohmann::json::parse(kftest::read_file(out), nullptr, false);
        QVERIFY2(j.is_object(), r.output.c_str());
        QCOMPARE(j["results"].size(), std::size_t{10});
        for (const auto& row : j["results"]) {
            std::string file = row["file"].get<std::string>();
            QVERIFY2(row["ok"].get<bool>(), (file + ": " + row["problems"].dump()).c_str());
            const auto& res = row["result"];
            if (file.find("gemm") != std::string::npos) {
                // Both errors against fp64 are reported, and the policy they were judged by.
                const auto& c = res["correctness"];
                QCOMPARE(res["tolerance"]["policy"].get<std::string>(), std::string("current"));
                QVERIFY(c["fp64_available"].get<bool>());
                QVERIFY(c["reference_error_fp64"].get<double>() > 0);
                if (file.rfind("good_", 0) == 0) QCOMPARE(c["passed_by"].get<std::string>(), std::string("fp64"));
            }
        }
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        // Everything the candidates started was killed with their evaluation.
        QCOMPARE(processes_with("sleep 3517"), 0);
    }
};

QTEST_GUILESS_MAIN(TestKernelBenchCpu)
#include "test_kernelbench_cpu.moc"
