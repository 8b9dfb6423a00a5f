// End-to-end evaluation of the CUDA test candidates (tests/data/candidates/cuda/*.cu) against
// the scale_add test task on a real GPU: one test per candidate, each asserting the status and
// the integrity check that must catch it; and rewrites of the stencil2d reference, which must
// stay correct. Skips itself where no CUDA device is present.
#include <QtTest>

#include <filesystem>
#include <memory>
#include <string>

#include "kf/diagnosis.h"
#include "kf/evaluator.h"
#include "kf/task.h"
#include "kf/transforms.h"
#include "testsupport.h"

namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString status_of(kf::Status s) { return qs(kf::to_string(s)); }

const kf::IntegrityCheck* find_check(const kf::Diagnosis& d, const std::string& name) {
    for (const auto& c : d.integrity)
        if (c.name == name) return &c;
    return nullptr;
}

/** `source` rewritten by the named rewrite (kf/transforms.h); empty, with a failure, where it refuses. */
std::string rewritten(const std::string& name, const std::string& source) {
    for (const auto& t : kf::code_transforms())
        if (t.name == name) {
            kf::TransformResult r = t.apply(source);
            if (!r.source) QTest::qFail(qPrintable(QString::fromStdString(name + " refused: " + r.refusal)), __FILE__, __LINE__);
            return r.source.value_or(std::string());
        }
    QTest::qFail(qPrintable(QString::fromStdString("no rewrite " + name)), __FILE__, __LINE__);
    return {};
}

QString outcome_of(const kf::Diagnosis& d, const std::string& name) {
    const kf::IntegrityCheck* c = find_check(d, name);
    return c ? qs(c->outcome) : QString("<no check '%1'>").arg(qs(name));
}

void log_diagnosis(const std::string& name, const kf::Diagnosis& d) {
    qInfo().noquote() << qs(name) << "->" << status_of(d.status) << "(stage" << qs(kf::to_string(d.stage)) << "):"
                      << qs(d.message);
    if (d.timing)
        qInfo().noquote() << "   timing: median" << d.timing->median_ms << "ms, reference" << d.timing->reference_median_ms
                          << "ms, speedup" << d.timing->speedup << ", reps" << d.timing->reps << ", wall median"
                          << d.timing->wall_median_ms << "ms";
    if (d.correctness)
        for (const auto& c : d.correctness->cases)
            qInfo().noquote() << "   case" << qs(c.name) << (c.passed ? "passed" : "failed") << "mismatches" << c.mismatches
                              << "nan" << c.nan_count << "unwritten" << c.unwritten << "oob" << c.out_of_bounds_write
                              << "max_abs" << c.max_abs_error;
    for (const auto& c : d.integrity)
        qInfo().noquote() << "   check" << qs(c.name) << qs(c.outcome) << "-" << qs(c.detail);
    qInfo().noquote() << "   kernel launches:" << d.kernel_launches;
}

}  // namespace

class TestCudaEval : public QObject {
    Q_OBJECT

    std::unique_ptr<kf::Evaluator> eval_;
    kf::Task task_;
    std::filesystem::path task_dir_;

    /** A hostile candidate (docs/sandbox.md, CUDA): no process of it survives, the task's
     *  files are as they were, and the next correct and wrong candidates are judged right. */
    kf::Diagnosis attack(const std::string& name) {
        auto before = kftest::snapshot({task_dir_});
        kf::Diagnosis d = evaluate(name);
        auto left = kftest::escapees();
        if (!left.empty()) QTest::qFail(qPrintable(QString::fromStdString(name) + ": a process of it survived"), __FILE__, __LINE__);
        if (kftest::snapshot({task_dir_}) != before)
            QTest::qFail(qPrintable(QString::fromStdString(name) + ": the task's files changed"), __FILE__, __LINE__);
        kf::Diagnosis good = evaluate("correct");
        if (good.status != kf::Status::Ok)
            QTest::qFail(qPrintable("after " + QString::fromStdString(name) + " the correct candidate got " + status_of(good.status)),
                         __FILE__, __LINE__);
        kf::Diagnosis bad = evaluate("wrong");
        if (bad.status != kf::Status::Incorrect)
            QTest::qFail(qPrintable("after " + QString::fromStdString(name) + " the wrong candidate got " + status_of(bad.status)),
                         __FILE__, __LINE__);
        return d;
    }

    kf::EvalOptions options(double timeout_s = 120) const {
        kf::EvalOptions o;
        o.trials = 3;
        o.warmup = 2;
        o.min_time_ms = 20;
        o.min_reps = 5;
        o.max_reps = 200;
        o.timeout_s = timeout_s;
        return o;
    }

    kf::Diagnosis evaluate(const std::string& name, const kf::EvalOptions& opt) {
        kf::Candidate c;
        c.name = name;
        c.source = kftest::read_file(kftest::data("candidates/cuda/" + name + ".cu"));
        kf::Diagnosis d = eval_->evaluate(task_, c, opt);
        log_diagnosis(name, d);
        return d;
    }
    kf::Diagnosis evaluate(const std::string& name) { return evaluate(name, options()); }

    /** After a crash, hang or sticky fault the engine restarts the worker: `correct` is Ok again. */
    void expect_recovered() {
        kf::Diagnosis d = evaluate("correct");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Ok));
    }

private slots:
    void initTestCase() {
        if (!kftest::gpu_available()) QSKIP("no CUDA device");
        qunsetenv("CUDA_DEVICE_MAX_CONNECTIONS");  // the worker's own choice (oneHardwareQueue)
        QVERIFY2(std::filesystem::exists(kftest::worker_path()), kftest::worker_path().c_str());
        // A copy of the task, which the hostile candidates may attack (KF_TEST_TASK_DIR).
        auto tmp = kftest::temp_dir("cuda-eval");
        task_dir_ = tmp / "scale_add";
        std::filesystem::copy(kftest::data("tasks/scale_add"), task_dir_, std::filesystem::copy_options::recursive);
        qputenv("KF_TEST_TASK_DIR", QByteArray::fromStdString(task_dir_.string()));
        task_ = kf::load_task(task_dir_);
        QVERIFY(task_.supports(kf::Backend::Cuda));
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Cuda;
        cfg.worker.device = 0;
        cfg.worker.worker = kftest::worker_path();
        cfg.worker.log = tmp / "worker.log";
        cfg.cache_dir = tmp / "cache";
        eval_ = std::make_unique<kf::Evaluator>(cfg);
        QCOMPARE(qs(kf::to_string(eval_->backend())), qs(kf::to_string(kf::Backend::Cuda)));
    }

    void deviceInfo() {
        nlohmann::json info = eval_->device_info();
        qInfo().noquote() << QString::fromStdString(info.dump());
        QVERIFY(!info["device"].value("name", std::string()).empty());
        QVERIFY(info["peaks"].value("bandwidth_gbps", 0.0) > 1000.0);
        QVERIFY(info["peaks"].value("fp32_gflops", 0.0) > 0.0);
    }

    void correct() {
        kf::Diagnosis d = evaluate("correct");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Ok));
        QVERIFY(d.timing.has_value());
        QVERIFY(d.timing->speedup > 0);
        QCOMPARE(outcome_of(d, "kernel_launch"), QString("pass"));
        QCOMPARE(outcome_of(d, "side_stream"), QString("pass"));
        QCOMPARE(outcome_of(d, "inputs_unmodified"), QString("pass"));
        QCOMPARE(outcome_of(d, "shape_generality"), QString("pass"));
        // The checks the hostile candidates below fail, passed by an honest one (the driver's
        // and CUPTI's threads are counted before the library loads).
        for (const char* check : {"timed_outputs", "out_of_bounds_write", "spawned_work", "work_between_calls",
                                  "host_compute", "forbidden_loading", "device_memory"})
            QVERIFY2(outcome_of(d, check) == "pass", qPrintable(QString(check) + ": " + outcome_of(d, check)));
        // The memory shared with its runner is made once: the timed calls' sets fit the first.
        const nlohmann::json site = d.phases.value("site", nlohmann::json::object());
        QCOMPARE(site.value("arenas", -1), 1);
    }

    // The worker gives every context one hardware queue (docs/sandbox.md, Cost): the runner's
    // environment says so before its driver starts (one_queue is correct only there).
    void oneHardwareQueue() {
        kf::Diagnosis d = evaluate("one_queue");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Ok));
    }

    void wrong() {
        kf::Diagnosis d = evaluate("wrong");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Incorrect));
        QVERIFY(d.correctness.has_value());
        QVERIFY(d.correctness->mismatches > 0);
    }

    void nan() {
        kf::Diagnosis d = evaluate("nan");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Incorrect));
        QVERIFY(d.correctness.has_value());
        bool found = false;
        for (const auto& c : d.correctness->cases) found = found || c.nan_count > 0;
        QVERIFY2(found, "no case reports a NaN");
    }

    void partial() {
        kf::Diagnosis d = evaluate("partial");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Incorrect));
        QVERIFY(d.correctness.has_value());
        bool found = false;
        for (const auto& c : d.correctness->cases) found = found || c.unwritten > 0;
        QVERIFY2(found, "no case reports unwritten elements");
    }

    void modifiesInput() {
        kf::Diagnosis d = evaluate("modifies_input");
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "inputs_unmodified"), QString("fail"));
    }

    void infiniteLoop() {
        kf::Diagnosis d = evaluate("infinite_loop", options(10));
        QCOMPARE(status_of(d.status), status_of(kf::Status::Timeout));
        expect_recovered();
    }

    void segfault() {
        kf::Diagnosis d = evaluate("segfault");
        QCOMPARE(status_of(d.status), status_of(kf::Status::RuntimeError));
        expect_recovered();
    }

    void exitCall() {
        kf::Diagnosis d = evaluate("exit");
        QCOMPARE(status_of(d.status), status_of(kf::Status::RuntimeError));
        expect_recovered();
    }

    void oobWrite() {
        kf::Diagnosis d = evaluate("oob_write");
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "out_of_bounds_write"), QString("fail"));
        QVERIFY(d.correctness.has_value());
        bool found = false;
        for (const auto& c : d.correctness->cases) found = found || c.out_of_bounds_write;
        QVERIFY2(found, "no case reports an out-of-bounds write");
    }

    void hardcoded() {
        kf::Diagnosis d = evaluate("hardcoded");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Incorrect));
        QCOMPARE(outcome_of(d, "shape_generality"), QString("fail"));
    }

    void noKernel() {
        kf::Diagnosis d = evaluate("no_kernel");
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "kernel_launch"), QString("fail"));
    }

    void cublas() {
        kf::Diagnosis d = evaluate("cublas");
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "forbidden_symbols"), QString("fail"));
    }

    void sideStream() {
        kf::Diagnosis d = evaluate("side_stream");
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "side_stream"), QString("fail"));
    }

    // The timer holds the stream while the host enqueues a call (so the events time the
    // device's work, not the launch). A call that waits on its own stream times the gate out
    // once, and its process then times ungated: its median stays that of its kernel.
    void syncsInside() {
        kf::Diagnosis d = evaluate("syncs_inside");
        QCOMPARE(status_of(d.status), status_of(kf::Status::Ok));
        QVERIFY(d.timing.has_value());
        QVERIFY2(d.timing->median_ms < 10.0, qPrintable("median " + QString::number(d.timing->median_ms) + " ms"));
    }

    // Host work inside the call happens while the gate holds the stream: the events do not see
    // it, and the judge's wall clock must still charge it.
    void hostWorkIsCharged() {
        kf::Diagnosis d = evaluate("host_work");
        QVERIFY(d.timing.has_value());
        QVERIFY2(d.timing->median_ms > 2.5, qPrintable("median " + QString::number(d.timing->median_ms) + " ms"));
    }

    void reuseOutput() {
        kf::Diagnosis d = evaluate("reuse_output");
        QVERIFY2(d.status == kf::Status::Incorrect || d.status == kf::Status::IntegrityViolation,
                 qPrintable("status " + status_of(d.status)));
    }

    void stickyFault() {
        kf::Diagnosis d = evaluate("sticky_fault");
        QCOMPARE(status_of(d.status), status_of(kf::Status::RuntimeError));
        expect_recovered();
    }

    void hostileEscape() {
        kf::Diagnosis d = attack("hostile_escape");
        if (QTest::currentTestFailed()) return;
        QVERIFY2(d.status != kf::Status::Ok, qPrintable(status_of(d.status)));
    }

    void hostileSignal() {
        kf::Diagnosis d = attack("hostile_signal");
        if (QTest::currentTestFailed()) return;
        // It launched nothing and computed nothing; nobody was stopped.
        QVERIFY2(d.status != kf::Status::Ok, qPrintable(status_of(d.status)));
    }

    void hostileThrows() {
        kf::Diagnosis d = attack("hostile_throws");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::RuntimeError));
    }

    /** Forged worker replies on every descriptor: the judge's channel is out of its reach,
     *  and what it wrote on the runner's socket stops it. */
    void hostileForge() {
        kf::Diagnosis d = attack("hostile_forge");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "runner_channel"), QString("fail"));
    }

    /** A search of the device memory it can address for the reference's output finds
     *  nothing: the judge's allocations are in another process's context. */
    void hostilePeek() {
        kf::Diagnosis d = attack("hostile_peek");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::Incorrect));
        QVERIFY(d.correctness.has_value());
        QVERIFY(d.correctness->cases.at(0).trials_passed == 0);
    }

    /** A device fault ends the candidate's own context: the worker is not restarted, and
     *  the next candidate is judged by the same worker. */
    void stickyFaultKeepsTheWorker() {
        kf::Diagnosis before = evaluate("correct");
        QCOMPARE(status_of(before.status), status_of(kf::Status::Ok));
        const int restarts = eval_->worker().restarts();
        kf::Diagnosis d = evaluate("sticky_fault");
        QCOMPARE(status_of(d.status), status_of(kf::Status::RuntimeError));
        kf::Diagnosis after = evaluate("correct");
        QCOMPARE(status_of(after.status), status_of(kf::Status::Ok));
        QCOMPARE(eval_->worker().restarts(), restarts);
    }

    /** smem-tile on the 2-D stencil's reference, and on it after block-size-tunable with 128 threads a block: correct on every case. */
    void smemTileStencil() {
        const kf::Task stencil = kf::load_task(kftest::source_dir() / "tasks/level1/stencil2d");
        const std::string ref = kftest::read_file(stencil.references.at(kf::Backend::Cuda));
        const std::string tiled = rewritten("smem-tile", ref);
        if (QTest::currentTestFailed()) return;
        kf::Diagnosis d = eval_->evaluate(stencil, {tiled, "smem_tile"}, options());
        log_diagnosis("smem_tile", d);
        QCOMPARE(status_of(d.status), status_of(kf::Status::Ok));
        const std::string tunable = rewritten("smem-tile", rewritten("block-size-tunable", ref));
        if (QTest::currentTestFailed()) return;
        kf::EvalOptions o = options();
        o.tunables = {{"KF_BLOCK", 128}};
        kf::Diagnosis d2 = eval_->evaluate(stencil, {tunable, "smem_tile_block_128"}, o);
        log_diagnosis("smem_tile_block_128", d2);
        QCOMPARE(status_of(d2.status), status_of(kf::Status::Ok));
    }

    // Each candidate below cheats in a way that only the check it names catches.

    /** A write beyond the 4 KiB canary, into the room the runner's memory has to spare:
     *  the arena's unused end is sealed with canary bytes and checked after every call. */
    void oobPastTheGuard() {
        kf::Diagnosis d = evaluate("oob_past_guard");
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "out_of_bounds_write"), QString("fail"));
    }

    /** The answer computed on the host and a dummy kernel launched: the runner's CPU time
     *  per call (its waits for the device sleep) against the reference's. */
    void hostCompute() {
        kf::Diagnosis d = attack("host_compute");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "host_compute"), QString("fail"));
    }

    /** Honest in the first call, on a stream of its own later: every correctness trial of the
     *  primary case runs under launch accounting. */
    void sideStreamAfterTheFirstCall() {
        kf::Diagnosis d = attack("side_stream_late");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "side_stream"), QString("fail"));
    }

    /** cuBLAS loaded through a dlopen found in the C library's symbol table: mapped in the
     *  runner, where the judge reads /proc/<pid>/maps. */
    void cublasThroughDlopen() {
        kf::Diagnosis d = attack("dlopen_cublas");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "forbidden_loading"), QString("fail"));
    }

    /** A module loaded from PTX it holds XOR'ed, through cuModuleLoadData found with
     *  cudaGetDriverEntryPointByVersion, and its kernel launched with cuLaunchKernel: correct
     *  output, no library mapped, no symbol to screen; the runner counts the modules loaded
     *  after its library (CUPTI's resource callback, CUDA_MODULE_LOADING=EAGER). */
    void moduleLoadedThroughTheDriver() {
        kf::Diagnosis d = attack("driver_module");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "forbidden_loading"), QString("fail"));
        QVERIFY2(d.message.find("module") != std::string::npos, d.message.c_str());
    }

    void deviceMemoryLeak() {
        kf::Diagnosis d = attack("leak");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::RuntimeError));
        QCOMPARE(outcome_of(d, "device_memory"), QString("fail"));
    }

    /** Device memory taken until the device has none: over the cap after the first call,
     *  and the runner (with its memory) is gone before the judge allocates again. */
    void deviceMemoryHog() {
        kf::Diagnosis d = attack("memory_hog");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "device_memory"), QString("fail"));
    }

    void threadOfItsOwn() {
        kf::Diagnosis d = attack("spawn_thread");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "spawned_work"), QString("fail"));
    }

    /** Kept inputs and output copied over the fresh ones in timed calls: checked calls are
     *  compared against inputs the judge draws again. */
    void inputsRewrittenInTimedCalls() {
        kf::Diagnosis d = attack("input_rewrite");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        QCOMPARE(outcome_of(d, "timed_outputs"), QString("fail"));
    }

    void hostilePoison() {
        kf::Diagnosis d = attack("hostile_poison");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(status_of(d.status), status_of(kf::Status::IntegrityViolation));
        // In the runner's file-system view the task is not there to change (`attack` checked
        // that it is unchanged); without the view, the file guard restores it and blames the candidate.
        const QString guard = outcome_of(d, "protected_files");
        QVERIFY2(guard == "pass" || guard == "fail", qPrintable(guard));
        if (guard == "pass") QCOMPARE(outcome_of(d, "kernel_launch"), QString("fail"));
    }
};

QTEST_GUILESS_MAIN(TestCudaEval)
#include "test_cuda_eval.moc"
