// The KernelBench bridge for real: kfoundry runs the Python worker with the GPU server's
// PyTorch on KernelBench-format problems written for the tests (tests/data/kernelbench*).
// Skips itself where Python has no PyTorch with CUDA.
#include <QtTest>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "kf/process.h"
#include "testsupport.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool torch_cuda() {
    kf::ProcessResult r = kf::run_process(
        {"python3", "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"}, std::chrono::minutes(2));
    return r.exit_code == 0;
}

kf::ProcessResult cli(std::vector<std::string> args, int minutes = 10) {
    args.insert(args.begin(), kftest::cli_path().string());
    return kf::run_process(args, std::chrono::minutes(minutes));
}

/** The JSON document a command printed after its progress lines (the first line that opens one). */
json printed_json(const std::string& out) {
    std::size_t pos = out.rfind('{', 0) == 0 ? 0 : out.find("\n{");
    if (pos == std::string::npos) return nullptr;
    return json::parse(out.substr(pos == 0 ? 0 : pos + 1), nullptr, false);
}

std::string check_outcome(const json& d, const std::string& name) {
    for (const auto& c : d.value("integrity", json::array()))
        if (c.value("name", "") == name) return c.value("outcome", "");
    return "missing";
}

fs::path compile_data() { return kftest::data("kernelbench-compile"); }

}  // namespace

class TestKernelBenchGpu : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!torch_cuda()) QSKIP("python3 has no PyTorch with a CUDA device");
        // Cold caches: the compile times below are real builds.
        fs::path cache = kftest::temp_dir("kbgpu-cache");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((cache / "compile").string()));
    }

    void one_kernel_through_both_paths() {
        // The same GELU kernels: the native task with nvcc, and a ModelNew with load_inline.
        kf::ProcessResult native = cli({"eval", kftest::task("level1/gelu").string(),
                                        (kftest::task("level1/gelu") / "candidates" / "fast.cu").string(), "--backend", "cuda",
                                        "--json"});
        json nd = printed_json(native.output);
        QVERIFY2(native.exit_code == 0, native.output.c_str());
        kf::ProcessResult kb = cli({"kernelbench", "eval", "--kb", compile_data().string(), "--problem", "1",
                                    (compile_data() / "candidates" / "1_gelu_fast.py").string(), "--json"});
        json d = printed_json(kb.output);
        QVERIFY2(kb.exit_code == 0, kb.output.c_str());
        QCOMPARE(d.value("status", ""), std::string("ok"));
        QCOMPARE(check_outcome(d, "framework_compute"), std::string("pass"));
        QCOMPARE(check_outcome(d, "kernel_launch"), std::string("pass"));
        QVERIFY(d.value("kernel_launches", 0) >= 1);
        QVERIFY(d["baselines"]["eager"].value("median_ms", 0.0) > 0);
        double kb_compile = d["compile_step"].value("seconds", 0.0);
        double native_compile = nd["compile"].value("seconds", 0.0);
        QVERIFY(kb_compile > 0);
        qInfo("compile of the GELU kernels: native nvcc %.2f s, load_inline %.2f s; times: native %.4f ms "
              "(%.2fx its reference), KernelBench %.4f ms (%.2fx eager PyTorch, eager %.4f ms, torch.compile %s ms)",
              native_compile, kb_compile, nd["timing"].value("median_ms", 0.0), nd["timing"].value("speedup", 0.0),
              d["timing"].value("median_ms", 0.0), d["timing"].value("speedup", 0.0),
              d["baselines"]["eager"].value("median_ms", 0.0),
              d["baselines"].contains("compile") ? d["baselines"]["compile"].dump().c_str() : "-");
    }

    void verdicts_of_the_cuda_candidates() {
        // Honest fp32 reorderings correct by the fp64 rule, a bfloat16 downgrade rejected, a peek
        // at the reference that finds nothing, a pointer-keyed cache named output_reuse, process
        // starts named processes and killed (tests/data/kernelbench/candidates/README.md).
        fs::path out = kftest::temp_dir("kbgpu-verdicts") / "out.json";
        kf::ProcessResult r = kf::run_process(
            {"python3", (kftest::source_dir() / "scripts" / "kernelbench" / "kb_gpu_test.py").string(), out.string(),
             "--device", "0", "--shared-build", "--build-root", kftest::temp_dir("kbgpu-verdicts-build").string(),
             "--only",
             "good_cuda_gemm_folded.py,good_cuda_gemm_reversed.py,cheat_gemm_bf16.py,cheat_frame_peek.py,"
             "cheat_pointer_cache.py,cheat_process_popen.py,cheat_process_fork.py,cheat_process_multiprocessing.py"},
            std::chrono::minutes(14));
        qInfo("%s", r.output.c_str());
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        kf::ProcessResult left = kf::run_process({"pgrep", "-f", "sleep 3517"}, std::chrono::seconds(30));
        QVERIFY2(left.exit_code != 0, "a process started by a candidate outlived its evaluation");
    }

    void run_tunes_a_model_new_and_reports() {
        fs::path project = kftest::temp_dir("kbgpu-project") / "p";
        kf::ProcessResult run = cli({"kernelbench", "run", "--kb", compile_data().string(), "--level", "1", "--problems",
                                     "1", "--project", project.string(), "--candidates",
                                     (compile_data() / "candidates").string(), "--budget", "4", "--no-compile-baseline"},
                                    20);
        qInfo("%s", run.output.c_str());
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        kf::ProcessResult rep = cli({"kernelbench", "report", "--project", project.string(), "--json"});
        json r = printed_json(rep.output);
        QVERIFY2(rep.exit_code == 0, rep.output.c_str());
        QCOMPARE(r["problems"].get<int>(), 1);
        QCOMPARE(r["correct"].get<int>(), 1);
        QVERIFY(r["rows"][0]["evaluations"].get<int>() >= 2);  // the tuner's variants of the annotated defines
        QVERIFY(r["rows"][0]["speedup_eager"].get<double>() > 0);
    }
};

QTEST_GUILESS_MAIN(TestKernelBenchGpu)
#include "test_kernelbench_gpu.moc"
