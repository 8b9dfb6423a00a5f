// Profiling for real on a GPU with Nsight Compute: bundled tasks' fast candidates are evaluated,
// then profiled through Evaluator::profile_into, and the metrics must be present and plausible
// (only the candidate's kernels, durations close to the measured time, percentages in range).
// Skips itself where there is no CUDA device or no ncu; reports denied counters as a skip.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "kf/diagnosis.h"
#include "kf/evaluator.h"
#include "kf/profile.h"
#include "kf/task.h"
#include "testsupport.h"

using nlohmann::json;

namespace {

bool pct_ok(const json& v) { return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 100.5; }

}  // namespace

class TestProfileGpu : public QObject {
    Q_OBJECT

    std::unique_ptr<kf::Evaluator> eval_;

    kf::Diagnosis evaluate_and_profile(const std::string& task_name, const std::string& candidate) {
        kf::Task task = kf::load_task(kftest::task(task_name));
        kf::Candidate c;
        c.name = "fast";
        c.source = kftest::read_file(kftest::task(task_name) / candidate);
        kf::EvalOptions eo;
        eo.min_time_ms = 20;
        eo.timeout_s = 120;
        kf::Diagnosis d = eval_->evaluate(task, c, eo);
        kf::ProfileOptions po;
        po.timeout_s = 180;
        eval_->profile_into(d, task, c, po);
        qInfo().noquote() << QString::fromStdString(task_name) << QString::fromStdString(std::string(kf::to_string(d.status)))
                          << QString::fromStdString(d.profile.dump(1).substr(0, 4000));
        return d;
    }

    void check_plausible(const kf::Diagnosis& d, const std::string& kernel_word) {
        QVERIFY2(d.ok(), d.message.c_str());
        const json& p = d.profile;
        if (p.value("code", "") == "permission") QSKIP("GPU performance counters are not accessible (ERR_NVGPUCTRPERM)");
        QVERIFY2(p.value("available", false), p.dump().c_str());
        QVERIFY(p["kernels"].is_array() && !p["kernels"].empty());
        for (const auto& k : p["kernels"]) {
            std::string name = k.value("name", "");
            // Only the candidate's kernels: none of the worker's own (fills, comparisons, flushes).
            for (const char* worker_kernel : {"fill_kernel", "compare_kernel", "checksum_kernel", "copy16_kernel",
                                              "count_not_equal_kernel", "fma_kernel", "kf_worker_stream_marker"})
                QVERIFY2(name.find(worker_kernel) == std::string::npos, name.c_str());
            QVERIFY2(k["duration_us"].is_number() && k["duration_us"].get<double>() > 0, name.c_str());
            for (const char* f : {"sm_throughput_pct", "memory_throughput_pct", "dram_throughput_pct",
                                  "achieved_occupancy_pct", "theoretical_occupancy_pct"})
                QVERIFY2(pct_ok(k[f]), (name + " " + f + " = " + k[f].dump()).c_str());
            QVERIFY(k["registers_per_thread"].get<double>() >= 1);
            QVERIFY(k["grid"][0].get<long long>() >= 1 && k["block"][0].get<long long>() >= 1);
            QVERIFY(!k["stalls"].empty());
        }
        QVERIFY2(p["summary"].value("dominant", "").find(kernel_word) != std::string::npos, p["summary"].dump().c_str());
        // The profiled duration is close to the measured median (ncu replays each kernel with
        // its caches flushed and clocks left alone).
        double profiled_ms = p["summary"].value("total_duration_us", 0.0) / 1000.0;
        double median_ms = d.timing->median_ms;
        QVERIFY2(profiled_ms > 0.3 * median_ms && profiled_ms < 3.0 * median_ms,
                 qPrintable(QString("profiled %1 ms, timed %2 ms").arg(profiled_ms).arg(median_ms)));
        std::string bound = p.value("bound", "");
        QVERIFY2(bound == "memory" || bound == "compute" || bound == "latency" || bound == "occupancy" ||
                     bound == "launch_overhead",
                 bound.c_str());
        QCOMPARE(d.roofline->bound, bound);
        QVERIFY(!p["evidence"].empty());
        QVERIFY(!d.advice.empty());
        QVERIFY(p.value("seconds", 0.0) > 0 && p.value("seconds", 0.0) < 180);
    }

private slots:
    void initTestCase() {
        if (!kftest::gpu_available()) QSKIP("no CUDA device");
        std::string why;
        if (kf::find_ncu(why).empty()) QSKIP(why.c_str());
        QVERIFY2(std::filesystem::exists(kftest::worker_path()), kftest::worker_path().c_str());
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Cuda;
        cfg.worker.worker = kftest::worker_path();
        auto tmp = kftest::temp_dir("profile-gpu");
        cfg.worker.log = tmp / "worker.log";
        cfg.cache_dir = tmp / "cache";
        eval_ = std::make_unique<kf::Evaluator>(cfg);
        QVERIFY(eval_->profiler_available());
    }

    void softmaxFast() {
        kf::Diagnosis d = evaluate_and_profile("level1/softmax", "candidates/fast.cu");
        check_plausible(d, "softmax");
        // A row softmax at this size streams its data: DRAM is busy.
        QVERIFY(d.profile["summary"].value("dram_throughput_pct", 0.0) > 20);
    }

    void matmulFast() {
        kf::Diagnosis d = evaluate_and_profile("level1/matmul", "candidates/fast.cu");
        check_plausible(d, "sgemm");
        // Recorded on the H200 with a kernel-name filter: SM 67%, memory 56% of peak (compute).
        QVERIFY2(d.profile["summary"].value("sm_throughput_pct", 0.0) > 40, d.profile["summary"].dump().c_str());
        QVERIFY2(d.profile.value("bound", "") != "launch_overhead", d.profile.value("bound", "").c_str());
    }
};

QTEST_GUILESS_MAIN(TestProfileGpu)
#include "test_profile_gpu.moc"
