// The KernelBench bridge without PyTorch: finding problems and candidates, KernelBench's
// metrics, and the engine's side of the Python worker's protocol against a stand-in worker
// (tests/data/kernelbench-fake/fake_kb_worker.py): results, time limits, crashes, parallel
// and cached compiles, the store and the CLI.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <fstream>

#include "kf/kernelbench.h"
#include "kf/process.h"
#include "kf/store.h"
#include "testsupport.h"

using namespace kf;
namespace fs = std::filesystem;

namespace {

fs::path fake_root() { return kftest::data("kernelbench-fake"); }
fs::path fake_worker() { return fake_root() / "fake_kb_worker.py"; }

kb::WorkerOptions fake_options(const fs::path& build_root) {
    kb::WorkerOptions w;
    w.script = fake_worker();
    w.build_root = build_root;
    return w;
}

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
    fs::create_directories(dir);
    std::ofstream(dir / name) << text;
    return dir / name;
}

bool python_has_torch() {
    ProcessResult r = run_process({"python3", "-c", "import torch"}, std::chrono::seconds(60));
    return r.exit_code == 0;
}

kb::ProblemOutcome outcome(int id, const std::string& status, double ms, double eager, double compile) {
    kb::ProblemOutcome o;
    o.level = 1;
    o.id = id;
    o.name = "p" + std::to_string(id);
    o.status = status;
    o.correct = status == "ok";
    o.candidate_ms = ms;
    o.eager_ms = eager;
    o.compile_ms = compile;
    return o;
}

}  // namespace

class TestKernelBench : public QObject {
    Q_OBJECT

private slots:
    void problems_are_found_in_a_checkout() {
        auto ps = kb::list_problems(fake_root(), 1);
        QCOMPARE(ps.size(), std::size_t{3});  // README.txt is not a problem
        QCOMPARE(ps[0].id, 1);
        QCOMPARE(ps[0].name, std::string("Scale"));
        QCOMPARE(ps[1].key(), std::string("level1/2_Row_Sum"));
        QVERIFY(ps[2].file.is_absolute());
        // The checkout may be given as the repository or as its KernelBench folder.
        QCOMPARE(kb::list_problems(fake_root() / "KernelBench", 1).size(), std::size_t{3});
        QCOMPARE(kb::find_problem(fake_root(), 1, 3).name, std::string("Relu"));
        try {
            kb::find_problem(fake_root(), 1, 7);
            QFAIL("a missing problem must throw");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("no problem 7") != std::string::npos);
        }
        try {
            kb::list_problems(fake_root(), 2);
            QFAIL("a missing level must throw");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("level2") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(Error, kb::list_problems(fake_root() / "nowhere", 1));
    }

    void id_lists() {
        QCOMPARE(kb::parse_id_list("1-3,5"), (std::vector<int>{1, 2, 3, 5}));
        QCOMPARE(kb::parse_id_list(" 7 , 2-3,3"), (std::vector<int>{2, 3, 7}));
        for (const char* bad : {"", "a", "5-2", "0", "1,,2", "1-", "-3", "1-2-3"})
            QVERIFY_THROWS_EXCEPTION(Error, kb::parse_id_list(bad));
    }

    void candidates_in_every_layout() {
        auto p1 = kb::find_problem(fake_root(), 1, 1);
        auto p2 = kb::find_problem(fake_root(), 1, 2);
        auto p3 = kb::find_problem(fake_root(), 1, 3);
        auto c1 = kb::find_candidates(fake_root() / "candidates", p1);
        QCOMPARE(c1.size(), std::size_t{1});
        QCOMPARE(c1[0].filename().string(), std::string("1_scale_tuned.py"));
        auto c2 = kb::find_candidates(fake_root() / "candidates", p2);
        QCOMPARE(c2.size(), std::size_t{2});  // 2_row_sum.py and KernelBench's own naming
        QVERIFY(kb::find_candidates(fake_root() / "candidates", p3).empty());
    }

    void report_metrics() {
        // A: correct, 2x eager, 0.9x compile; B: correct, 0.6x eager, no compile baseline;
        // C: incorrect; D: missing. fast_p counts over all four.
        std::vector<kb::ProblemOutcome> rows = {outcome(4, "missing", 0, 1, 0), outcome(1, "ok", 1.0, 2.0, 0.9),
                                                outcome(2, "ok", 1.0, 0.6, 0), outcome(3, "incorrect", 0, 1, 1)};
        kb::Report r = kb::make_report(rows);
        QCOMPARE(r.problems, 4);
        QCOMPARE(r.attempted, 3);
        QCOMPARE(r.correct, 2);
        QCOMPARE(r.correctness_rate, 0.5);
        QCOMPARE(r.rows.front().id, 1);  // sorted by level and id
        std::vector<double> want_eager = {0.5, 0.5, 0.25, 0.25, 0.25, 0.0};  // p = 0, .5, .8, 1, 1.5, 2 (strict)
        std::vector<double> want_compile = {0.25, 0.25, 0.25, 0.0, 0.0, 0.0};
        for (std::size_t i = 0; i < want_eager.size(); ++i) {
            QCOMPARE(r.fast_eager[i].second, want_eager[i]);
            QCOMPARE(r.fast_compile[i].second, want_compile[i]);
        }
        QVERIFY(std::abs(r.geomean_eager - std::sqrt(2.0 * 0.6)) < 1e-12);
        QVERIFY(std::abs(r.geomean_compile - 0.9) < 1e-12);
        QCOMPARE(r.without_compile_baseline, 2);  // the missing one and B
        nlohmann::json j = kb::to_json(r);
        QCOMPARE(j["fast_p_eager"]["1.5"].get<double>(), 0.25);
        QCOMPARE(j["fast_p_compile"]["0"].get<double>(), 0.25);
        QCOMPARE(j["rows"].size(), std::size_t{4});
        QCOMPARE(j["rows"][3]["status"].get<std::string>(), std::string("missing"));
        std::string md = kb::to_markdown(r);
        QVERIFY(md.find("| eager | 50.0% | 50.0% | 25.0% | 25.0% | 25.0% | 0.0% |") != std::string::npos);
        QVERIFY(md.find("| 1 | 1 | p1 | ok | 1 | 2 | 0.9 | 2.00x | 0.90x | — | — |") != std::string::npos);
        QCOMPARE(r.tolerance, std::string("unrecorded"));  // rows without a recorded policy
        // No problems: zeros, not a division by zero.
        kb::Report empty = kb::make_report({});
        QCOMPARE(empty.correctness_rate, 0.0);
        QCOMPARE(empty.fast_eager[0].second, 0.0);
    }

    void evaluator_maps_results_limits_and_crashes() {
        auto build = kftest::temp_dir("kbbuild");
        kb::Evaluator ev(fake_options(build));
        nlohmann::json h = ev.hello();
        QCOMPARE(h["torch"].get<std::string>(), std::string("fake"));
        auto p = kb::find_problem(fake_root(), 1, 1);
        auto dir = kftest::temp_dir("kbcands");
        kb::EvalOptions opt;
        std::vector<nlohmann::json> progress;
        kb::Result good = ev.evaluate(p, write(dir, "good.py", "# fake: ms=0.5\n"), opt,
                                      [&](const nlohmann::json& j) { progress.push_back(j); });
        QCOMPARE(good.diagnosis.status, Status::Ok);
        QVERIFY(good.diagnosis.timing.has_value());
        QCOMPARE(good.diagnosis.timing->speedup, 4.0);
        QCOMPARE(good.eager_ms(), 2.0);
        QCOMPARE(good.compile_ms(), 1.0);
        QCOMPARE(good.diagnosis.kernel_launches, std::int64_t{1});
        QCOMPARE(good.diagnosis.backend, std::string("kernelbench"));
        QCOMPARE(good.diagnosis.task, std::string("level1/1_Scale"));
        QVERIFY(!progress.empty());

        kb::Result wrong = ev.evaluate(p, write(dir, "wrong.py", "# fake: status=incorrect\n"), opt);
        QCOMPARE(wrong.diagnosis.status, Status::Incorrect);
        QVERIFY(wrong.diagnosis.correctness && !wrong.diagnosis.correctness->passed);

        kb::Result broken = ev.evaluate(p, write(dir, "broken.py", "# fake: compile-error\n"), opt);
        QCOMPARE(broken.diagnosis.status, Status::CompileError);
        QVERIFY(broken.diagnosis.compile.log.find("expected a ';'") != std::string::npos);

        kb::EvalOptions quick = opt;
        quick.timeout_s = 2;
        kb::Result hung = ev.evaluate(p, write(dir, "hang.py", "# fake: hang\n"), quick);
        QCOMPARE(hung.diagnosis.status, Status::Timeout);
        QVERIFY(hung.diagnosis.message.find("correctness") != std::string::npos);  // where it hung

        kb::Result crashed = ev.evaluate(p, write(dir, "crash.py", "# fake: crash\n"), opt);
        QCOMPARE(crashed.diagnosis.status, Status::RuntimeError);
        QVERIFY(crashed.diagnosis.message.find("died") != std::string::npos);

        // The worker is restarted: the next evaluation works.
        QCOMPARE(ev.evaluate(p, dir / "good.py", opt).diagnosis.status, Status::Ok);
        // No candidate: the baselines only; torch.compile failing is reported, not fatal.
        kb::Result base = ev.evaluate(kb::find_problem(fake_root(), 1, 2), std::nullopt, opt);
        QCOMPARE(base.diagnosis.status, Status::Ok);
        QCOMPARE(base.eager_ms(), 3.0);
        QCOMPARE(base.compile_ms(), 0.0);
        QVERIFY(base.baselines["compile"].contains("error"));
        // A candidate file that cannot be read is a load error, not an exception.
        QCOMPARE(ev.evaluate(p, dir / "missing.py", opt).diagnosis.status, Status::LoadError);
    }

    void compiles_run_in_parallel_and_are_cached() {
        auto build = kftest::temp_dir("kbbuild");
        kb::Evaluator ev(fake_options(build));
        auto dir = kftest::temp_dir("kbcands");
        std::vector<fs::path> files;
        for (int i = 0; i < 3; ++i)
            files.push_back(write(dir, "c" + std::to_string(i) + ".py",
                                  "# fake-compile-seconds: 1.5\n# variant " + std::to_string(i) + "\n"));
        files.push_back(write(dir, "bad.py", "# fake: compile-error\n"));
        auto t0 = std::chrono::steady_clock::now();
        auto first = ev.compile_all(files, 4, 60);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(s < 4.0, qPrintable(QString("three 1.5 s compiles took %1 s: not parallel").arg(s)));
        for (int i = 0; i < 3; ++i) {
            QVERIFY(first[i].ok);
            QVERIFY(!first[i].cached);
            QVERIFY(first[i].seconds >= 1.5);
        }
        QVERIFY(!first[3].ok);
        QVERIFY(first[3].log.find("fake build failed") != std::string::npos);
        // One build folder per source: different sources, different folders; the second time is cached.
        QVERIFY(ev.build_dir_for("a") != ev.build_dir_for("b"));
        auto second = ev.compile_all(files, 4, 60);
        for (int i = 0; i < 3; ++i) QVERIFY(second[i].cached);
    }

    void a_worker_without_pytorch_says_so() {
        qputenv("FAKE_NO_TORCH", "1");
        kb::Evaluator ev(fake_options(kftest::temp_dir("kbbuild")));
        try {
            ev.hello();
            qunsetenv("FAKE_NO_TORCH");
            QFAIL("hello must fail without PyTorch");
        } catch (const Error& e) {
            qunsetenv("FAKE_NO_TORCH");
            QVERIFY(std::string(e.what()).find("PyTorch is not installed") != std::string::npos);
        }
        // The shipped worker, on a machine without PyTorch (as in CI), says the same.
        if (python_has_torch()) QSKIP("PyTorch is installed here");
        kb::WorkerOptions real;
        real.build_root = kftest::temp_dir("kbbuild");
        real.script = kftest::source_dir() / "resources" / "kernelbench" / "kb_worker.py";
        kb::Evaluator shipped(real);
        try {
            shipped.hello();
            QFAIL("the shipped worker must refuse without PyTorch");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("PyTorch") != std::string::npos, e.what());
        }
    }

    void tolerance_policies() {
        kb::EvalOptions o;
        QCOMPARE(o.to_json()["tolerance"].get<std::string>(), std::string("current"));
        for (const char* p : kb::kTolerancePolicies) QVERIFY(!kb::describe_tolerance(p).empty());
        QVERIFY(kb::describe_tolerance("v0").find("1e-2") != std::string::npos);
        QVERIFY(kb::describe_tolerance("loose").empty());
        // The report names the policy of its rows, or says they are mixed.
        auto a = outcome(1, "ok", 1.0, 2.0, 0), b = outcome(2, "ok", 1.0, 2.0, 0);
        a.tolerance = b.tolerance = "v0";
        a.error_fp64 = 0.02;
        a.reference_error_fp64 = 0.003;
        a.passed_by = "fp64";
        kb::Report r = kb::make_report({a, b});
        QCOMPARE(r.tolerance, std::string("v0"));
        std::string md = kb::to_markdown(r);
        QVERIFY2(md.find("- Tolerance: v0 (KernelBench v0/v0.1") != std::string::npos, md.c_str());
        QVERIFY2(md.find("| 0.02 (fp64 rule) | 0.003 |") != std::string::npos, md.c_str());
        nlohmann::json j = kb::to_json(r);
        QCOMPARE(j["tolerance"].get<std::string>(), std::string("v0"));
        QCOMPARE(j["rows"][0]["error_fp64"].get<double>(), 0.02);
        QVERIFY(j["rows"][1]["error_fp64"].is_null());
        b.tolerance = "current";
        QCOMPARE(kb::make_report({a, b}).tolerance, std::string("mixed: current, v0"));
    }

    void cli_tolerance_is_sent_stored_and_reported() {
        auto cli = [&](std::vector<std::string> args) {
            args.insert(args.begin(), kftest::cli_path().string());
            qputenv("KF_CACHE_DIR", QByteArray::fromStdString((kftest::temp_dir("kbcache") / "compile").string()));
            return run_process(args, std::chrono::minutes(2));
        };
        auto run = [&](const fs::path& project, const std::string& tolerance) {
            return cli({"kernelbench", "run", "--kb", fake_root().string(), "--level", "1", "--kb-worker",
                        fake_worker().string(), "--problems", "1", "--project", project.string(), "--candidates",
                        (fake_root() / "candidates-fp64").string(), "--tolerance", tolerance});
        };
        auto report = [&](const fs::path& project) {
            ProcessResult rep = cli({"kernelbench", "report", "--project", project.string(), "--json"});
            return nlohmann::json::parse(rep.output.substr(rep.output.find('{')));
        };
        // v0: the reordered candidate is correct by the fp64 rule; the report says so.
        auto v0 = kftest::temp_dir("kbtol") / "v0";
        ProcessResult r1 = run(v0, "v0");
        QVERIFY2(r1.exit_code == 0, r1.output.c_str());
        QVERIFY(r1.output.find("tolerance v0") != std::string::npos);
        nlohmann::json j = report(v0);
        QCOMPARE(j["tolerance"].get<std::string>(), std::string("v0"));
        QCOMPARE(j["correct"].get<int>(), 1);
        QCOMPARE(j["rows"][0]["passed_by"].get<std::string>(), std::string("fp64"));
        QCOMPARE(j["rows"][0]["error_fp64"].get<double>(), 0.02);
        QCOMPARE(j["rows"][0]["reference_error_fp64"].get<double>(), 0.003);
        ProcessResult md = cli({"kernelbench", "report", "--project", v0.string()});
        QVERIFY2(md.output.find("- Tolerance: v0") != std::string::npos, md.output.c_str());
        // Another policy is not "already finished": the problem runs again, judged by it.
        ProcessResult r2 = run(v0, "strict");
        QVERIFY2(r2.exit_code == 0, r2.output.c_str());
        QVERIFY(r2.output.find("already finished") == std::string::npos);
        j = report(v0);
        QCOMPARE(j["tolerance"].get<std::string>(), std::string("strict"));
        QCOMPARE(j["correct"].get<int>(), 0);
        // An unknown policy is refused before anything runs.
        ProcessResult bad = run(kftest::temp_dir("kbtol") / "bad", "loose");
        QVERIFY(bad.exit_code != 0);
        QVERIFY2(bad.output.find("loose") != std::string::npos, bad.output.c_str());
    }

    void cli_run_resume_and_report() {
        auto project = kftest::temp_dir("kbproject") / "proj";
        auto cli = [&](std::vector<std::string> args) {
            args.insert(args.begin(), kftest::cli_path().string());
            qputenv("KF_CACHE_DIR", QByteArray::fromStdString((kftest::temp_dir("kbcache") / "compile").string()));
            return run_process(args, std::chrono::minutes(2));
        };
        std::vector<std::string> common = {"--kb", fake_root().string(), "--level", "1", "--kb-worker", fake_worker().string()};
        auto args = [&](std::vector<std::string> a) {
            a.insert(a.end(), common.begin(), common.end());
            return a;
        };
        ProcessResult run = cli(args({"kernelbench", "run", "--problems", "1-3", "--project", project.string(),
                                      "--candidates", (fake_root() / "candidates").string(), "--budget", "4"}));
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        QVERIFY(run.output.find("[3/3] level1/3_Relu") != std::string::npos);
        QVERIFY(run.output.find("no candidate") != std::string::npos);

        ProcessResult rep = cli({"kernelbench", "report", "--project", project.string(), "--json"});
        QVERIFY2(rep.exit_code == 0, rep.output.c_str());
        nlohmann::json j = nlohmann::json::parse(rep.output.substr(rep.output.find('{')));
        QCOMPARE(j["problems"].get<int>(), 3);
        QCOMPARE(j["correct"].get<int>(), 2);
        const auto& rows = j["rows"];
        // Problem 1: the tuner moved BLOCK from 100 to 200 within the budget: 0.5 ms, 4x eager, 2x compile.
        QCOMPARE(rows[0]["candidate_ms"].get<double>(), 0.5);
        QCOMPARE(rows[0]["speedup_eager"].get<double>(), 4.0);
        QCOMPARE(rows[0]["speedup_compile"].get<double>(), 2.0);
        QVERIFY(rows[0]["evaluations"].get<int>() >= 2);
        // Problem 2: the correct one of its two candidates; torch.compile failed for it.
        QCOMPARE(rows[1]["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(rows[1]["speedup_eager"].get<double>(), 6.0);
        QCOMPARE(rows[1]["compile_ms"].get<double>(), 0.0);
        QCOMPARE(rows[2]["status"].get<std::string>(), std::string("missing"));
        QCOMPARE(j["fast_p_eager"]["2"].get<double>(), 2.0 / 3.0);

        // Everything is in the store, so a second run skips finished problems.
        ProcessResult again = cli(args({"kernelbench", "run", "--problems", "1", "--project", project.string()}));
        QVERIFY2(again.exit_code == 0, again.output.c_str());
        QVERIFY(again.output.find("already finished") != std::string::npos);

        // With the checkout, problems that were not run count as failures.
        auto md = kftest::temp_dir("kbreport") / "report.md";
        ProcessResult sel = cli({"kernelbench", "report", "--project", project.string(), "--kb", fake_root().string(),
                                 "--problems", "1-4", "--markdown", md.string()});
        QVERIFY2(sel.exit_code == 0, sel.output.c_str());
        QVERIFY(sel.output.find("Problems: 4 (attempted 2, correct 2)") != std::string::npos);
        QVERIFY(kftest::read_file(md).find("fast_p") != std::string::npos);

        // Bad input gets a clear error.
        ProcessResult bad = cli(args({"kernelbench", "run", "--problems", "5-2", "--project", project.string()}));
        QVERIFY(bad.exit_code != 0);
        QVERIFY(bad.output.find("bad problem range") != std::string::npos);
        ProcessResult nokb = cli({"kernelbench", "eval", "--kb", "/nonexistent", "--problem", "1",
                                  (fake_root() / "candidates" / "2_row_sum.py").string()});
        QVERIFY(nokb.exit_code != 0);
        QVERIFY(nokb.output.find("no KernelBench checkout") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestKernelBench)
#include "test_kernelbench.moc"
