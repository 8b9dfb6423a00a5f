// Containment on the host backend (docs/sandbox.md): every hostile candidate in
// tests/data/candidates/hostile ends as one record with the right status, no process of it
// survives, no file outside its scratch space changes, and the next honest candidate is
// still judged `ok` (and a wrong one `incorrect`).
#include <QtTest>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "kf/evaluator.h"
#include "kf/process.h"
#include "testsupport.h"

using namespace kf;
namespace fs = std::filesystem;

using kftest::escapees;
using kftest::snapshot;

class TestContainment : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Evaluator> ev_;
    Task task_;
    fs::path root_, task_dir_, sentinel_, work_;
    std::map<std::string, std::string> before_;

    static EvalOptions fast() {
        EvalOptions o;
        o.min_time_ms = 20;
        o.min_reps = 5;
        o.warmup = 1;
        o.timeout_s = 60;
        return o;
    }

    std::unique_ptr<Evaluator> make_evaluator() {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = root_ / "cache" / "compile";
        return std::make_unique<Evaluator>(cfg);
    }

    Diagnosis run(Evaluator& ev, const std::string& name, EvalOptions opt = fast()) {
        Candidate c;
        c.source = kftest::read_file(kftest::data("candidates/hostile/" + name + ".cpp"));
        c.name = name;
        Diagnosis d = ev.evaluate(task_, c, opt);
        std::string failed;
        for (const auto& chk : d.integrity)
            if (chk.outcome == "fail") failed += " " + chk.name;
        qInfo("%s: %s:%s: %s", name.c_str(), std::string(to_string(d.status)).c_str(), failed.c_str(), d.message.c_str());
        return d;
    }

    /** Runs a hostile candidate, then checks that it left nothing behind and changed nothing. */
    void attack(const std::string& name, Diagnosis& d, EvalOptions opt = fast()) {
        d = run(*ev_, name, opt);
        auto left = escapees();
        QVERIFY2(left.empty(), ("processes of " + name + " survived the evaluation").c_str());
        QVERIFY2(!fs::exists("/tmp/kf-escapee-file"), "a file appeared in /tmp");
        auto after = snapshot({task_dir_, sentinel_, work_.parent_path()});
        for (const auto& [path, bytes] : before_) {
            QVERIFY2(after.count(path), (path + " was removed").c_str());
            QVERIFY2(after.at(path) == bytes, (path + " was changed").c_str());
        }
        QCOMPARE(after.size(), before_.size());
        if (QTest::currentTestFailed()) return;
        Diagnosis honest = run(*ev_, "honest");
        if (honest.status != Status::Ok) {
            QFAIL(("after " + name + ", the honest candidate got " + std::string(to_string(honest.status)) + ": " +
                   honest.message).c_str());
        }
        Diagnosis wrong = run(*ev_, "wrong");
        if (wrong.status != Status::Incorrect) QFAIL(("after " + name + ", the wrong candidate was not judged incorrect").c_str());
    }

    /** attack(), then the status it must have ended with. */
    void expect(const std::string& name, Status status) {
        Diagnosis d;
        attack(name, d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, status);
    }

    /** expect(), and the check that must have failed. */
    void expect_failed(const std::string& name, Status status, const std::string& check) {
        Diagnosis d;
        attack(name, d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, status);
        QCOMPARE(outcome(d, check), std::string("fail"));
    }

    static std::string outcome(const Diagnosis& d, const std::string& check) {
        for (const auto& c : d.integrity)
            if (c.name == check) return c.outcome;
        return "missing";
    }

private slots:
    void initTestCase() {
        root_ = kftest::temp_dir("containment");
        task_dir_ = root_ / "task";
        fs::copy(kftest::data("tasks/heavy_map"), task_dir_, fs::copy_options::recursive);
        sentinel_ = root_ / "sentinel";
        fs::create_directories(sentinel_);
        kftest::write_file(sentinel_ / "project.db", "a project database");
        kftest::write_file(sentinel_ / "keep.txt", "keep me");
        work_ = root_ / "work" / "here";
        fs::create_directories(work_);
        kftest::write_file(work_.parent_path() / "neighbour.txt", "untouched");
        fs::current_path(work_);
        fs::remove("/tmp/kf-escapee-file");
        qputenv("KF_TEST_TASK_DIR", QByteArray::fromStdString(task_dir_.string()));
        qputenv("KF_TEST_SENTINEL", QByteArray::fromStdString(sentinel_.string()));
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((root_ / "cache" / "compile").string()));
        qputenv("XDG_CACHE_HOME", QByteArray::fromStdString((root_ / "xdg").string()));
        task_ = load_task(task_dir_);
        ev_ = make_evaluator();
        QCOMPARE(run(*ev_, "honest").status, Status::Ok);  // peaks measured and cached before the snapshot
        before_ = snapshot({task_dir_, sentinel_, work_.parent_path()});
        QVERIFY(escapees().empty());
    }

    void honest_candidate_is_timed_against_a_floor() {
        Diagnosis d = run(*ev_, "honest");
        QCOMPARE(d.status, Status::Ok);
        // The floor holds whatever size the machine reports for its last-level cache.
        QCOMPARE(outcome(d, "physical_floor"), std::string("pass"));
        QCOMPARE(outcome(d, "timed_outputs"), std::string("pass"));
        QCOMPARE(outcome(d, "protected_files"), std::string("pass"));
        QCOMPARE(outcome(d, "spawned_work"), std::string("pass"));  // OpenMP's threads are the runner's own
        QCOMPARE(outcome(d, "work_between_calls"), std::string("pass"));
        QCOMPARE(outcome(d, "out_of_bounds_write"), std::string("pass"));
        QCOMPARE(outcome(d, "forbidden_loading"), std::string("pass"));
        QVERIFY(d.roofline && d.roofline->floor_ms > 0);
    }

    void forged_reply_from_the_call() {
        Diagnosis d;
        attack("forge_reply", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "runner_channel"), std::string("fail"));
    }

    void forged_reply_from_a_constructor() { expect("forge_ctor", Status::IntegrityViolation); }

    void forged_error_and_unknown_status() { expect("forge_error", Status::IntegrityViolation); }

    void signals_to_the_engine() {
        Diagnosis d;
        attack("signal_parent", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::Incorrect);  // it computed nothing, and nobody was stopped
    }

    void endless_output_line() {
        Diagnosis d;
        attack("huge_line", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::Incorrect);
        QVERIFY(d.eval_seconds < 60);
    }

    void exception_out_of_the_entry_point() {
        Diagnosis d;
        attack("throws", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::RuntimeError);
        QVERIFY(d.message.find("threw") != std::string::npos);
    }

    // The system-call filter ends the runner at the attempt.
    void escapes_by_fork_and_clone() { expect_failed("escape_fork", Status::IntegrityViolation, "spawned_work"); }
    void escape_by_execve() { expect_failed("escape_exec", Status::IntegrityViolation, "spawned_work"); }
    void escape_by_system_found_at_run_time() {
        expect_failed("escape_system", Status::IntegrityViolation, "spawned_work");
    }

    // It computes nothing: the files it wants are not in its view (attack() checks they are
    // unchanged), so its output is the poison.
    void files_outside_the_scratch_space() { expect("files", Status::Incorrect); }

    void poisoned_task_reference_and_peaks() {
        // attack() then shows that a wrong candidate is still wrong and an honest one right.
        expect("poison_task", Status::Incorrect);
    }

    void poisoned_files_are_restored_without_the_file_system_view() {
        // Without bubblewrap the candidate can reach the files: the engine notices, blames it
        // and puts the clean copies back.
        // Its own compile cache: this candidate overwrites every library it can find there.
        fs::path cache = root_ / "unsandboxed-cache";
        qputenv("KF_SANDBOX", "off");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString(cache.string()));
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache;
        auto ev = std::make_unique<Evaluator>(cfg);
        QCOMPARE(run(*ev, "wrong").status, Status::Incorrect);  // cached before the attack
        QCOMPARE(run(*ev, "honest").status, Status::Ok);
        Diagnosis d = run(*ev, "poison_task");
        qunsetenv("KF_SANDBOX");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((root_ / "cache" / "compile").string()));
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "protected_files"), std::string("fail"));
        QVERIFY(d.message.find("task.json") != std::string::npos);
        auto after = snapshot({task_dir_});
        for (const auto& [path, bytes] : before_)
            if (path.rfind(task_dir_.string(), 0) == 0) QVERIFY2(after.at(path) == bytes, (path + " not restored").c_str());
        // Their overwritten libraries in the compile cache are not served again.
        QCOMPARE(run(*ev, "wrong").status, Status::Incorrect);
        QCOMPARE(run(*ev, "honest").status, Status::Ok);
    }

    void peek_at_the_reference_output() { expect("peek", Status::Incorrect); }

    void output_cached_by_input_content() {
        // Every timed call gets fresh inputs: a cache never hits, so no speed is gained.
        Diagnosis d;
        attack("cache_content", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::Ok);  // it does the work whenever its cache misses: always
        QVERIFY2(d.timing->speedup < 3, "the cache made it look faster");
    }

    void work_skipped_when_the_output_is_not_poisoned() {
        Diagnosis d;
        attack("skip_unpoisoned", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::Ok);  // every output it is given is poisoned: it always works
        QVERIFY2(d.timing->speedup < 3, "skipping work made it look faster");
    }

    void work_on_a_timer_thread() {
        // The timer's thread works after the call has returned: it is counted (spawned_work),
        // or the runner ends with SIGSEGV before the count (what the two-core test machine
        // shows, between calls or while it receives its tensors). Never ok nor incorrect.
        Diagnosis d;
        attack("timer_thread", d);
        if (QTest::currentTestFailed()) return;
        QVERIFY2(d.status == Status::IntegrityViolation || d.status == Status::RuntimeError,
                 std::string(to_string(d.status)).c_str());
        if (d.status == Status::IntegrityViolation) QCOMPARE(outcome(d, "spawned_work"), std::string("fail"));
    }

    void output_cache_keyed_on_sampled_values() {
        // A miss is answered from the cache with the cached inputs written back: the judge
        // checks timed calls against inputs it draws again itself, not the candidate's copy.
        Diagnosis d;
        attack("cache_sampled", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "timed_outputs"), std::string("fail"));
    }

    void judge_calls_told_apart_by_count_and_poison() {
        // Computes in the first calls and on 0x7F poison only: the check after timing is
        // poisoned like the timed calls, and every checked timed call is caught.
        Diagnosis d;
        attack("sniff_calls", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "timed_outputs"), std::string("fail"));
        QCOMPARE(outcome(d, "output_reuse"), std::string("fail"));
    }

    void work_on_a_side_thread_between_calls() {
        // The runner itself (not bubblewrap's init) is stopped between calls, and a thread
        // the candidate started is counted.
        Diagnosis d;
        attack("side_thread", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "spawned_work"), std::string("fail"));
    }

    void work_in_a_process_of_its_own() {
        Diagnosis d;
        attack("spawn_process", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "spawned_work"), std::string("fail"));
    }

    void out_of_bounds_write_in_timed_calls_only() {
        // Within bounds in the correctness trials, past the end of its output later: the
        // canaries and the guards of its memory are checked after every call.
        Diagnosis d;
        attack("oob_timed", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "out_of_bounds_write"), std::string("fail"));
    }

    void library_loaded_at_run_time() {
        // dlopen found in the C library's symbol table: the symbol screen sees nothing, the
        // judge sees the library mapped in the runner.
        Diagnosis d;
        attack("load_blas", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "forbidden_loading"), std::string("fail"));
    }

    void rounding_in_timed_calls_is_incorrect_not_cheating() {
        // Off by 5x the tolerance once timing starts: the work is done, only not precisely
        // enough, which is wrong but not an integrity violation.
        Diagnosis d;
        attack("drift", d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::Incorrect);
        QCOMPARE(d.stage, Stage::Timing);  // the correctness trials passed; the timed calls did not
        QCOMPARE(outcome(d, "timed_outputs"), std::string("pass"));
        QVERIFY2(d.message.find("rounding") != std::string::npos, d.message.c_str());
    }

    void gross_errors_in_timed_calls_are_an_integrity_violation() {
        Candidate c;
        c.name = "drift-gross";
        c.source = "#define KF_DRIFT 0.25f\n" + kftest::read_file(kftest::data("candidates/hostile/drift.cpp"));
        Diagnosis d = ev_->evaluate(task_, c, fast());
        QCOMPARE(d.status, Status::IntegrityViolation);
        QCOMPARE(outcome(d, "timed_outputs"), std::string("fail"));
    }

    void sabotage_of_the_reference_timing() {
        // The reference is timed in a process of its own: slowing down its own process
        // does not make the candidate look faster (an honest one is ~1x here).
        auto ev = make_evaluator();  // a fresh worker, so that the reference is timed again
        Diagnosis d = run(*ev, "sabotage_reference");
        QCOMPARE(d.status, Status::Ok);  // its own work is honest
        QVERIFY2(d.timing->speedup < 1.6, "the reference was slowed down");
    }

    void memory_is_limited() {
        EvalOptions o = fast();
        o.memory_mb = 512;
        Diagnosis d;
        attack("leak", d, o);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(d.status, Status::RuntimeError);
    }

    void a_batch_survives_and_streams_its_records() {
        std::string h = kftest::data("candidates/hostile/").string();
        ProcessResult r = run_process({kftest::cli_path().string(), "eval", task_dir_.string(), h + "forge_ctor.cpp",
                                       h + "throws.cpp", h + "honest.cpp", h + "wrong.cpp", "--backend", "host", "--json",
                                       "--min-time", "20"},
                                      std::chrono::minutes(5));
        QCOMPARE(r.exit_code, 4);
        std::vector<std::string> statuses;
        std::istringstream lines(r.output);
        for (std::string line; std::getline(lines, line);)
            if (!line.empty() && line.front() == '{')
                statuses.push_back(nlohmann::json::parse(line).value("status", ""));
        QCOMPARE(statuses, (std::vector<std::string>{"integrity_violation", "runtime_error", "ok", "incorrect"}));
    }

    void cleanupTestCase() {
        ev_.reset();
        QVERIFY(escapees().empty());
    }
};

QTEST_GUILESS_MAIN(TestContainment)
#include "test_containment.moc"
