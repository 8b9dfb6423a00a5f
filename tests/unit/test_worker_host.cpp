// The worker end to end on the host backend: every kind of bad candidate ends as the right
// diagnosis, and the engine goes on serving the next request.
#include <QtTest>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "kf/evaluator.h"
#include "testsupport.h"

using namespace kf;

class TestWorkerHost : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Evaluator> ev_;
    Task task_;
    std::filesystem::path cache_root_;

    Diagnosis run(const std::string& name, EvalOptions opt = fast()) {
        Candidate c;
        c.source = kftest::read_file(kftest::data("candidates/host/" + name + ".cpp"));
        c.name = name;
        Diagnosis d = ev_->evaluate(task_, c, opt);
        qInfo("%s: %s: %s", name.c_str(), std::string(to_string(d.status)).c_str(), d.message.c_str());
        return d;
    }
    static EvalOptions fast() {
        EvalOptions o;
        o.min_time_ms = 5;
        o.min_reps = 3;
        o.warmup = 1;
        o.timeout_s = 30;
        return o;
    }
    static const IntegrityCheck* check(const Diagnosis& d, const std::string& name) {
        for (const auto& c : d.integrity)
            if (c.name == name) return &c;
        return nullptr;
    }
    static std::string outcome(const Diagnosis& d, const std::string& name) {
        auto* c = check(d, name);
        return c ? c->outcome : "missing";
    }
    void expect_correct_still_works() {
        Diagnosis d = run("correct");
        QCOMPARE(d.status, Status::Ok);
    }

private slots:
    void initTestCase() {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cache_root_ = kftest::temp_dir("cache");
        cfg.cache_dir = cache_root_ / "compile";
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString(cfg.cache_dir.string()));
        ev_ = std::make_unique<Evaluator>(cfg);
        task_ = load_task(kftest::data("tasks/scale_add"));
    }

    void correct() {
        Diagnosis d = run("correct");
        QCOMPARE(d.status, Status::Ok);
        QCOMPARE(d.stage, Stage::Done);
        QVERIFY(d.correctness && d.correctness->passed);
        QCOMPARE(d.correctness->cases.size(), std::size_t(2));  // primary + validation
        QCOMPARE(d.correctness->trials, 3);
        QVERIFY(d.timing);
        QVERIFY(d.timing->median_ms > 0);
        QVERIFY(d.timing->reference_median_ms > 0);
        QVERIFY(d.timing->speedup > 0);
        QVERIFY(d.timing->reps >= 3);
        QVERIFY(d.roofline);
        QVERIFY(d.roofline->bytes == 12.0 * 1048576);
        QCOMPARE(outcome(d, "inputs_unmodified"), std::string("pass"));
        QCOMPARE(outcome(d, "forbidden_symbols"), std::string("pass"));
        QCOMPARE(outcome(d, "shape_generality"), std::string("pass"));
        QCOMPARE(outcome(d, "output_reuse"), std::string("pass"));
        QCOMPARE(outcome(d, "kernel_launch"), std::string("skipped"));
    }

    /**
     * The timed calls stop once the median is known to within `precision`, after min_reps of
     * them; with precision 0 they run until they total min_time_ms. The last call is checked
     * against the reference whichever it is.
     */
    void timing_stops_once_the_median_is_known() {
        // A small task, so that each timed call's fresh inputs cost little.
        const Task copy = load_task(kftest::data("tasks/opaque_copy"));
        Candidate c;
        c.name = "copy";
        c.source = kftest::read_file(kftest::data("tasks/opaque_copy/reference.cpp"));
        EvalOptions o = fast();
        o.min_time_ms = 1e5;  // never reached: the repetitions end at max_reps or at the precision
        o.min_reps = 10;
        // Precision 1: the middle of the timings within twice the median. On a machine busy
        // with other tests, 60 calls of a 1 MiB copy were once not enough for that (the
        // preempted calls take milliseconds), so the loose case may run up to 1000; the
        // interval of the median then spans its 47th to 53rd percentiles.
        o.max_reps = 1000;
        o.precision = 1.0;
        Diagnosis loose = ev_->evaluate(copy, c, o);
        QCOMPARE(loose.status, Status::Ok);
        QVERIFY(loose.timing);
        qInfo("loose reps %d", loose.timing->reps);
        QVERIFY2(loose.timing->reps >= 20 && loose.timing->reps < 1000, std::to_string(loose.timing->reps).c_str());
        auto* checked = check(loose, "timed_outputs");
        QVERIFY(checked && checked->outcome == "pass");
        QVERIFY2(checked->detail.find("checked against the reference") != std::string::npos, checked->detail.c_str());
        o.precision = 0;
        o.max_reps = 60;
        Diagnosis full = ev_->evaluate(copy, c, o);
        QCOMPARE(full.status, Status::Ok);
        QVERIFY(full.timing);
        QCOMPARE(full.timing->reps, 60);
        // Where the evaluation's time went is reported.
        QVERIFY(full.phases.is_object());
        QVERIFY(full.phases.contains("correctness_ms"));
        QCOMPARE(full.phases["timing"].value("reps", 0), full.timing->reps);
        QVERIFY(full.phases["site"].value("calls", 0) >= full.timing->reps);
        // The runner's shared memory is made once for both correctness cases (the smaller one
        // placed where the larger was) and at most once more for the timed sets: not per case.
        const int arenas = full.phases["site"].value("arenas", 0);
        QVERIFY2(arenas >= 1 && arenas <= 2, full.phases["site"].dump().c_str());
    }

    /**
     * The reference is timed twice and its faster median kept: a reference that is slow on its
     * first calls in a process (20 ms more on each of its first five) would otherwise be timed
     * cold, and a candidate doing the same work would come out several times faster than it.
     */
    void reference_is_not_timed_cold() {
        Task cold = load_task(kftest::data("tasks/cold_start"));
        Candidate c;
        c.name = "same-work";
        c.source = "#include \"kf_task.h\"\n"
                   "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                   "    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];\n"
                   "}\n";
        Diagnosis d = ev_->evaluate(cold, c, fast());
        QCOMPARE(d.status, Status::Ok);
        QVERIFY(d.timing);
        qInfo("candidate %.3f ms, reference %.3f ms: %.2fx", d.timing->median_ms, d.timing->reference_median_ms,
              d.timing->speedup);
        // Timed cold, the reference's median is its 20 ms wait and more (21.8 ms to 22.0 ms,
        // 70x to 93x the candidate, with the faster of two timings not kept). Warm it is the
        // candidate's work, but on a loaded two-core machine a block of its calls was once
        // timed at 7.7x the candidate's (2.9 ms): the bound is half the cold wait, not a ratio.
        QVERIFY2(d.timing->reference_median_ms < 10.0, std::to_string(d.timing->reference_median_ms).c_str());
        QVERIFY2(d.timing->speedup < 30.0, std::to_string(d.timing->speedup).c_str());
    }

    /**
     * The judge's OpenMP threads sleep after each of its parallel regions (OMP_WAIT_POLICY
     * passive, in the worker's own environment), so that they take no core from the candidate
     * timed after it; the runners get the policy the worker was given (none here), and no
     * trace of the worker's second start.
     */
    void judge_threads_sleep_and_runners_keep_the_policy() {
        if (qEnvironmentVariableIsSet("OMP_WAIT_POLICY")) QSKIP("OMP_WAIT_POLICY is set for the tests");
        Candidate c;
        c.name = "environment";
        c.source = "#include \"kf_task.h\"\n#include <cstdlib>\n"
                   "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                   "    const bool given = !std::getenv(\"OMP_WAIT_POLICY\") && !std::getenv(\"KF_WORKER_OMP_WAIT_POLICY\");\n"
                   "    for (int i = 0; i < n; ++i) z[i] = given ? alpha * x[i] + y[i] : 0.0f;\n"
                   "}\n";
        Diagnosis d = ev_->evaluate(task_, c, fast());
        QVERIFY2(d.status == Status::Ok, d.message.c_str());
        // The worker is this process's child: its environment as it was started.
        int workers = 0, passive = 0;
        const std::string self = std::to_string(getpid());
        for (const auto& e : std::filesystem::directory_iterator("/proc")) {
            std::ifstream stat(e.path() / "stat");
            std::string pid, comm, state, ppid;
            if (!(stat >> pid >> comm >> state >> ppid) || ppid != self || comm != "(kfoundry-worker)") continue;
            ++workers;
            std::ifstream env(e.path() / "environ", std::ios::binary);
            std::string entry;
            while (std::getline(env, entry, '\0'))
                if (entry == "OMP_WAIT_POLICY=passive") ++passive;
        }
        QVERIFY(workers >= 1);
        QCOMPARE(passive, workers);
    }

    void wrong() {
        Diagnosis d = run("wrong");
        QCOMPARE(d.status, Status::Incorrect);
        QVERIFY(d.correctness && d.correctness->mismatches > 0);
        QVERIFY(d.correctness->cases[0].first_mismatch_index >= 0);
        QCOMPARE(d.correctness->cases[0].first_mismatch_tensor, std::string("z"));
        QVERIFY(!d.timing);
    }

    void nan_output() {
        Diagnosis d = run("nan");
        QCOMPARE(d.status, Status::Incorrect);
        QVERIFY(d.correctness->cases[0].nan_count > 0);
    }

    void partial_write() {
        Diagnosis d = run("partial");
        QCOMPARE(d.status, Status::Incorrect);
        QVERIFY(d.correctness->cases[0].unwritten > 0);
    }

    void modifies_input() {
        Diagnosis d = run("modifies_input");
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "inputs_unmodified"), std::string("fail"));
        QVERIFY(d.correctness->cases[0].inputs_modified);
    }

    void infinite_loop_times_out() {
        EvalOptions o = fast();
        o.timeout_s = 3;
        int before = ev_->worker().restarts();
        Diagnosis d = run("infinite_loop", o);
        QCOMPARE(d.status, Status::Timeout);
        QVERIFY(d.message.find("correctness") != std::string::npos);
        expect_correct_still_works();
        QVERIFY(ev_->worker().restarts() > before);
    }

    /** A cancel while the worker runs the candidate stops it there, long before its time limit. */
    void cancel_stops_a_running_evaluation() {
        EvalOptions o = fast();
        o.timeout_s = 60;
        auto started = std::chrono::steady_clock::now();
        o.cancel = [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(1500); };
        const int before = ev_->worker().restarts();
        bool thrown = false;
        try {
            run("infinite_loop", o);
        } catch (const Cancelled& e) {
            thrown = true;
            qInfo("%s", e.what());
            QVERIFY2(std::string(e.what()).find("evaluation cancelled during") == 0, e.what());
        }
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        QVERIFY(thrown);
        QVERIFY2(took < 15, std::to_string(took).c_str());  // the time limit was 60 s
        expect_correct_still_works();
        QVERIFY(ev_->worker().restarts() > before);
        // A cancel check that stays false changes nothing.
        o = fast();
        o.cancel = [] { return false; };
        Diagnosis d = run("correct", o);
        QCOMPARE(d.status, Status::Ok);
    }

    void segfault() {
        Diagnosis d = run("segfault");
        QCOMPARE(d.status, Status::RuntimeError);
        QVERIFY2(d.message.find("SIGSEGV") != std::string::npos, d.message.c_str());
        expect_correct_still_works();
    }

    void process_exit() {
        Diagnosis d = run("exit");
        QCOMPARE(d.status, Status::RuntimeError);
        QVERIFY2(d.message.find("exit code 3") != std::string::npos, d.message.c_str());
        expect_correct_still_works();
    }

    void out_of_bounds_write() {
        Diagnosis d = run("oob_write");
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "out_of_bounds_write"), std::string("fail"));
        QVERIFY(d.correctness && d.correctness->cases[0].out_of_bounds_write);
        QCOMPARE(d.correctness->cases[0].out_of_bounds_tensor, std::string("z"));
    }

    void hardcoded_shape() {
        Diagnosis d = run("hardcoded");
        QCOMPARE(d.status, Status::Incorrect);
        QVERIFY(d.correctness->cases[0].passed);
        QVERIFY(!d.correctness->cases[1].passed);
        QCOMPARE(outcome(d, "shape_generality"), std::string("fail"));
    }

    void forbidden_library_load() {
        Diagnosis d = run("forbidden");
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "forbidden_symbols"), std::string("fail"));
        QVERIFY(check(d, "forbidden_symbols")->detail.find("dlopen") != std::string::npos);
    }

    void thread_escape() {
        Diagnosis d = run("thread");
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "forbidden_symbols"), std::string("fail"));
    }

    void compile_error_maps_to_candidate_line() {
        Candidate c;
        c.name = "broken";
        c.source = "#include \"kf_task.h\"\n"
                   "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                   "    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + undefined_name[i];\n"
                   "}\n";
        Diagnosis d = ev_->evaluate(task_, c, fast());
        QCOMPARE(d.status, Status::CompileError);
        QVERIFY(!d.compile.ok);
        bool found = false;
        for (const auto& dg : d.compile.diagnostics)
            if (dg.severity == Severity::Error && dg.file == "broken.cpp" && dg.line == 3) found = true;
        QVERIFY2(found, d.message.c_str());
        QCOMPARE(d.advice.front(), std::string("repair_compile"));
    }

    void wrong_signature_is_a_compile_error() {
        Candidate c;
        c.name = "badsig";
        c.source = "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, float* z, int n) { (void)x; (void)z; (void)n; }\n";
        Diagnosis d = ev_->evaluate(task_, c, fast());
        QCOMPARE(d.status, Status::CompileError);
    }

    void malformed_tunable_is_a_compile_error() {
        Candidate c;
        c.name = "badtune";
        c.source = kftest::read_file(kftest::data("candidates/host/correct.cpp")) + "\n#define BLOCK 3 // @kf tunable values(1, 2)\n";
        Diagnosis d = ev_->evaluate(task_, c, fast());
        QCOMPARE(d.status, Status::CompileError);
        QVERIFY(d.message.find("tunable") != std::string::npos);
    }

    void tunables_partially_assigned_keep_written_values() {
        Candidate c;
        c.name = "tuned";
        c.source = "#include \"kf_task.h\"\n"
                   "#define CHUNK 64   // @kf tunable values(16, 64, 256)\n"
                   "#define UNROLL 1   // @kf tunable values(1, 2, 4)\n"
                   "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                   "    static_assert(UNROLL == 2, \"UNROLL must be instantiated\");\n"
                   "    for (int b = 0; b < n; b += CHUNK)\n"
                   "        for (int i = b; i < n && i < b + CHUNK; ++i) z[i] = alpha * x[i] + y[i];\n"
                   "}\n";
        EvalOptions o = fast();
        o.tunables = {{"UNROLL", 2}};
        Diagnosis d = ev_->evaluate(task_, c, o);
        QCOMPARE(d.status, Status::Ok);
        o.tunables = {{"UNROLL", 3}};  // not among the declared values
        d = ev_->evaluate(task_, c, o);
        QCOMPARE(d.status, Status::CompileError);
        QVERIFY(d.message.find("UNROLL") != std::string::npos);
    }

    void diagnosis_round_trips_through_json() {
        Diagnosis d = run("wrong");
        nlohmann::json j = d;
        QCOMPARE(j["schema_version"].get<int>(), kDiagnosisSchemaVersion);
        QCOMPARE(j["status"].get<std::string>(), std::string("incorrect"));
        Diagnosis back = j.get<Diagnosis>();
        QCOMPARE(back.status, d.status);
        QCOMPARE(back.correctness->mismatches, d.correctness->mismatches);
        QCOMPARE(nlohmann::json(back).dump(), j.dump());
    }

    void evaluate_all_compiles_in_parallel() {
        std::vector<Candidate> cands;
        for (const char* n : {"correct", "wrong", "nan"}) {
            Candidate c;
            c.name = n;
            c.source = kftest::read_file(kftest::data(std::string("candidates/host/") + n + ".cpp"));
            cands.push_back(c);
        }
        auto ds = ev_->evaluate_all(task_, cands, fast());
        QCOMPARE(ds.size(), std::size_t(3));
        QCOMPARE(ds[0].status, Status::Ok);
        QCOMPARE(ds[1].status, Status::Incorrect);
        QCOMPARE(ds[2].status, Status::Incorrect);
    }

    void host_floor_is_a_calibrated_copy_whatever_the_cache() {
        // A peak bandwidth far too low makes DRAM's floor huge. A working set that fits in
        // the last-level cache must not be judged by it (CI failed here on a large-cache
        // machine); one that does not fit is still flagged.
        nlohmann::json info = ev_->device_info();
        std::string uuid = info["device"]["uuid"].get<std::string>();
        auto llc = info["device"]["l2_bytes"].get<std::uint64_t>();
        auto cache_file = cache_root_ / "devices" / (uuid + ".json");
        std::filesystem::create_directories(cache_file.parent_path());
        std::string saved = std::filesystem::exists(cache_file) ? kftest::read_file(cache_file) : std::string();
        {
            std::ofstream out(cache_file);
            out << R"({"bandwidth_gbps": 0.01, "fp32_gflops": 0.01, "method": "test", "device": "test"})";
        }
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache_root_ / "compile";
        Evaluator slow_peaks(cfg);
        Candidate c;
        c.source = kftest::read_file(kftest::data("candidates/host/correct.cpp"));
        c.name = "correct";
        Diagnosis d = slow_peaks.evaluate(task_, c, fast());
        if (saved.empty()) std::filesystem::remove(cache_file);
        else std::ofstream(cache_file) << saved;
        // The host's floor is a copy of the same bytes timed on this machine, not the cached
        // peaks (absurdly low here) and not skipped for a working set that fits in the
        // last-level cache (llc is what the machine reports).
        (void)llc;
        QVERIFY2(d.status == Status::Ok, d.message.c_str());
        QCOMPARE(outcome(d, "physical_floor"), std::string("pass"));
        QVERIFY(check(d, "physical_floor")->detail.find("a copy of the same") != std::string::npos);
    }

    /**
     * The host's multiply-add peak is measured in the CPU's widest vector FMA, as candidates
     * built with -march=native use it: a vectorised chain of multiply-adds stays under it
     * (measured from scalar chains, the peak was several times lower than such a kernel).
     */
    void host_fma_peak_bounds_a_vectorised_kernel() {
        Task t = load_task(kftest::data("tasks/poly_eval"));
        std::ifstream in(kftest::data("tasks/poly_eval/reference.cpp"));
        std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EvalOptions opt;
        opt.trials = 1;
        opt.min_time_ms = 100;
        Diagnosis d = ev_->evaluate(t, {src, "horner"}, opt);
        QVERIFY2(d.status == Status::Ok, d.message.c_str());
        QVERIFY(d.roofline);
        qInfo("%.1f GFLOP/s achieved against a peak of %.1f", d.roofline->achieved_gflops, d.roofline->peak_gflops);
        QVERIFY2(d.roofline->compute_fraction < 1.25, std::to_string(d.roofline->compute_fraction).c_str());
    }

    void device_info_reports_peaks() {
        auto info = ev_->device_info();
        QCOMPARE(info["device"]["backend"].get<std::string>(), std::string("host"));
        QVERIFY(info["peaks"]["bandwidth_gbps"].get<double>() > 0);
    }
};

QTEST_GUILESS_MAIN(TestWorkerHost)
#include "test_worker_host.moc"
