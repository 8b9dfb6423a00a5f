// The search on KernelBench problems with LLM experts, without PyTorch or a GPU: answers
// served by a local stand-in LLM server, ModelNew files judged by the stand-in worker
// (tests/data/kernelbench-fake/fake_kb_worker.py), whose verdict and speed come from
// `# fake:` markers in the answer. A two-problem run improving through the answers, cheats
// rejected by name (in the record and in the next prompt), resume after kill -9, budgets,
// the library learning a pattern by op class, and Level 4 refused per problem.
#include <QProcess>
#include <QtTest>

#include <atomic>
#include <fstream>

#include "http_test_server.h"
#include "kf/search.h"
#include "kf/kernelbench_search.h"
#include "kf/library.h"
#include "kf/llm.h"
#include "kf/process.h"
#include "kf/store.h"
#include "testsupport.h"

using namespace kf;
using kftest::HttpResponse;
using kftest::HttpTestServer;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path fake_root() { return kftest::data("kernelbench-fake"); }
fs::path fake_worker() { return fake_root() / "fake_kb_worker.py"; }

HttpResponse answer(const std::string& text, int delay_ms = 0) {
    HttpResponse r;
    r.body = kftest::openai_answer(text, "stop", 1000, 250);
    r.delay_ms = delay_ms;
    return r;
}

std::string model_new(const std::string& marker, int variant, const std::string& extra = {}) {
    return "```python\nimport torch\nfrom torch.utils.cpp_extension import load_inline\n# fake: " + marker + "\n" + extra +
           "# variant " + std::to_string(variant) +
           "\nsrc = \"__global__ void k(const float4* x, float4* y) {}\"\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
           "        return x\n```\n";
}

/**
 * The stand-in model: every first-generation answer cheats (PyTorch computes it: the worker
 * fails framework_compute); every later answer is a correct ModelNew faster than the one
 * before; insight requests get a two-line lesson.
 */
struct ScriptedModel {
    std::atomic<int> first{0}, later{0}, insights{0};
    int delay_ms = 0;
    std::string extra;  ///< more markers for every ModelNew (e.g. a compile time)

    HttpResponse operator()(const kftest::HttpRequest& req, int) {
        std::string prompt = kftest::user_prompt(req);
        if (prompt.find("State the reusable lesson") != std::string::npos) {
            ++insights;
            return answer("CONDITION: an elementwise problem\nACTION: one kernel with float4 loads", delay_ms);
        }
        if (prompt.find("Write the first `ModelNew`") != std::string::npos)
            return answer("PyTorch does it.\n" + model_new("integrity=framework_compute", 100 + first++, extra), delay_ms);
        int k = ++later;
        char ms[32];
        std::snprintf(ms, sizeof ms, "ms=%.4f", 1.0 / k);
        return answer("One kernel with float4 loads, variant " + std::to_string(k) + ".\n" + model_new(ms, k, extra), delay_ms);
    }
};

json llm_config(const HttpTestServer& s, int concurrency = 2) {
    json provider = {{"name", "local"},     {"kind", "openai"}, {"base_url", s.url("/v1")}, {"api_key_env", "KF_TEST_LLM_KEY"},
                     {"retries", 0},        {"timeout_s", 60},  {"concurrency", concurrency}};
    return {{"providers", json::array({provider})}, {"models", json::array({{{"name", "m1"}, {"provider", "local"}}})}};
}

fs::path write_config(const json& j) {
    fs::path f = kftest::temp_dir("kbs-llm") / "llm.json";
    std::ofstream(f) << j.dump(2);
    return f;
}

ProcessResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), kftest::cli_path().string());
    return run_process(args, std::chrono::minutes(4));
}

std::vector<std::string> run_args(const fs::path& project, const fs::path& config, const std::string& problems,
                                  std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"kernelbench", "run", "--kb",     fake_root().string(), "--level",      "1",
                                  "--kb-worker", fake_worker().string(), "--problems", problems, "--project", project.string(),
                                  "--llm-config", config.string()};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

/** A fresh library and compile cache for one test. */
void fresh_environment(const std::string& tag) {
    qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir(tag + "-data").string()));
    qputenv("KF_CACHE_DIR", QByteArray::fromStdString((kftest::temp_dir(tag + "-cache") / "compile").string()));
}

fs::path library_path() { return fs::path(qgetenv("XDG_DATA_HOME").toStdString()) / "kernel-foundry" / "library.db"; }

std::optional<RunRecord> run_of(ProjectStore& store, const std::string& task) {
    std::optional<RunRecord> out;
    for (auto& r : store.runs())
        if (r.task == task && (!out || r.id > out->id)) out = r;
    return out;
}

}  // namespace

class TestKernelBenchSearch : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
        qputenv("KF_TEST_LLM_KEY", "sk-test-key");
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) qunsetenv(v);
    }

    void op_classes_shapes_and_answers() {
        QCOMPARE(kb::op_class_of("self.conv = nn.Conv2d(3, 16, 3)\nreturn torch.relu(self.conv(x))"), std::string("conv"));
        QCOMPARE(kb::op_class_of("return torch.matmul(A, B)"), std::string("gemm"));
        QCOMPARE(kb::op_class_of("return A @ B"), std::string("gemm"));
        QCOMPARE(kb::op_class_of("return torch.softmax(x, dim=1)"), std::string("softmax"));
        QCOMPARE(kb::op_class_of("self.ln = nn.LayerNorm(d)\nreturn self.ln(x)"), std::string("norm"));
        QCOMPARE(kb::op_class_of("return torch.sum(x, dim=self.dim)"), std::string("reduction"));
        QCOMPARE(kb::op_class_of("return torch.cumsum(x, dim=1)"), std::string("scan"));
        QCOMPARE(kb::op_class_of("return F.gelu(x)"), std::string("elementwise"));
        QCOMPARE(kb::op_class_of("# torch.matmul in a comment only\nreturn x * 2"), std::string("elementwise"));
        std::vector<std::string> ops;
        QCOMPARE(kb::op_class_of("x = self.linear(x)  # nn.Linear\nself.linear = nn.Linear(4, 4)\nreturn torch.relu(x)", &ops),
                 std::string("gemm"));
        QVERIFY(std::find(ops.begin(), ops.end(), "nn.Linear") != ops.end());
        QVERIFY(std::find(ops.begin(), ops.end(), "torch.relu") != ops.end());

        std::string shapes = kb::shapes_from_source("batch_size = 16\ndim = 16384\n\ndef get_inputs():\n    x = torch.randn(batch_size, dim)\n"
                                                    "    return [x]\n\ndef get_init_inputs():\n    return []\n");
        QVERIFY2(shapes.find("batch_size = 16, dim = 16384") != std::string::npos, shapes.c_str());
        QVERIFY2(shapes.find("get_inputs(): x = torch.randn(batch_size, dim); return [x]") != std::string::npos, shapes.c_str());

        const std::string parent = "import torch\nclass ModelNew(torch.nn.Module):\n    BLOCK = 128\n";
        std::string form;
        QCOMPARE(kb::parse_model_new("Bigger blocks.\n<<<<<<< SEARCH\n    BLOCK = 128\n=======\n    BLOCK = 256\n>>>>>>> REPLACE\n", parent, &form),
                 std::string("import torch\nclass ModelNew(torch.nn.Module):\n    BLOCK = 256\n"));
        QCOMPARE(form, std::string("diff"));
        QCOMPARE(kb::parse_model_new("Here:\n```python\nimport torch\nclass ModelNew:\n    pass\n```\n", parent, &form),
                 std::string("import torch\nclass ModelNew:\n    pass\n"));
        QCOMPARE(form, std::string("full"));
        QVERIFY_THROWS_EXCEPTION(Error, kb::parse_model_new("```python\nprint(1)\n```\n", parent));
        QVERIFY_THROWS_EXCEPTION(Error, kb::parse_model_new("I cannot help with that.", parent));
        QVERIFY_THROWS_EXCEPTION(Error, kb::parse_model_new("```python\nclass ModelNew:\n", parent));
    }

    /** A child built quickly is evaluated while a slower one is still compiling. */
    void queue_evaluates_while_others_compile() {
        kb::WorkerOptions w;
        w.script = fake_worker();
        w.build_root = kftest::temp_dir("kbs-queue-build");
        kb::Evaluator ev(w);
        kb::Problem p = kb::find_problem(fake_root(), 1, 1);
        kb::EvalOptions o;
        o.baselines = {"eager"};
        auto q = kb::make_queue(ev, p, o, 2, kftest::temp_dir("kbs-queue-files"), 2);
        Child slow, fast;
        slow.id = 1;
        slow.proposal.source = "# fake: ms=0.5\n# fake-compile-seconds: 3\nclass ModelNew: pass\n";
        fast.id = 2;
        fast.proposal.source = "# fake: ms=0.25\n# fake-compile-seconds: 0.1\nclass ModelNew: pass\n";
        auto t0 = std::chrono::steady_clock::now();
        q->submit(slow);
        q->submit(fast);
        std::optional<std::pair<Child, Diagnosis>> first;
        while (!first && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) first = q->next(std::chrono::milliseconds(50));
        QVERIFY(first);
        QCOMPARE(first->first.id, std::int64_t{2});
        QVERIFY(first->second.ok());
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500));
        std::optional<std::pair<Child, Diagnosis>> second;
        while (!second && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) second = q->next(std::chrono::milliseconds(50));
        QVERIFY(second);
        QCOMPARE(second->first.id, std::int64_t{1});
        QCOMPARE(second->second.fitness(), 4.0);  // eager 2 ms / 0.5 ms
    }

    /** The prompt carries the problem, its shapes, baselines, the parent's diagnosis (integrity check by name, profiler metrics), inspirations and library notes. */
    void prompt_contents() {
        HttpTestServer server(std::vector<HttpResponse>{answer("unused")});
        auto ens = llm::LlmEnsemble::create(llm::parse_llm_config(llm_config(server)), kftest::source_dir() / "resources" / "prompts");
        kb::Problem p = kb::find_problem(fake_root(), 1, 1);
        kb::ProblemFacts f = kb::problem_facts(p, json::parse(R"({"eager": {"median_ms": 2.0}, "compile": {"median_ms": 1.0}})"),
                                               json::array({"input[0]: float32 16x1024"}));
        QCOMPARE(f.op_class, std::string("elementwise"));
        Member parent;
        parent.id = 7;
        parent.source = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";
        parent.status = kf::Status::IntegrityViolation;
        parent.family = "llm/init";
        json diag = {{"status", "integrity_violation"},
                     {"stage", "integrity"},
                     {"message", "integrity check framework_compute failed"},
                     {"integrity", json::array({{{"name", "framework_compute"}, {"outcome", "fail"}, {"detail", "forward computes with aten::mul"}}})},
                     {"profile", {{"dram_throughput_pct", 42.5}}}};
        Member other;
        other.id = 3;
        other.island = 1;
        other.fitness = 2.5;
        other.family = "llm/memory";
        other.expert = "llm:memory";
        other.source = "class ModelNew: pass  # the inspiration\n";
        std::vector<std::string> notes = {"pattern kernelbench/level1/3_Relu (elementwise): one kernel"};
        ProposalContext ctx;
        ctx.parent = &parent;
        ctx.parent_diagnosis = &diag;
        ctx.diagnosis_class = kf::DiagnosisClass::IntegrityViolation;
        ctx.inspirations = {&other};
        ctx.library_notes = &notes;
        std::string prompt = kb::render_prompt(*ens, "numerics", f, ctx);
        for (const char* want : {"# Role: numerical repair", "level1/1_Scale (KernelBench, op class elementwise)", "return x * 2",
                                 "input[0]: float32 16x1024", "eager PyTorch 2 ms, torch.compile 1 ms", "candidate #7",
                                 "integrity check FAILED: framework_compute: forward computes with aten::mul",
                                 "dram_throughput_pct = 42.5", "the inspiration", "2.5x eager PyTorch",
                                 "pattern kernelbench/level1/3_Relu", "class ModelNew(nn.Module)", ">>>>>>> REPLACE"})
            QVERIFY2(prompt.find(want) != std::string::npos, (std::string("missing: ") + want + "\n" + prompt).c_str());
        QVERIFY(prompt.find("kf_solve") == std::string::npos);
        // The first generation: no parent, the problem's source alone.
        ProposalContext init;
        std::string first = kb::render_prompt(*ens, "memory", f, init);
        QVERIFY(first.find("Write the first `ModelNew`") != std::string::npos);
        QVERIFY(first.find("Current ModelNew") == std::string::npos);
    }

    /**
     * Two problems of one op class: the first generation cheats and is rejected by name, the
     * repairs get faster, the second problem's prompts carry the first one's pattern.
     */
    void two_problems_improve_reject_cheats_and_teach_the_library() {
        fresh_environment("kbs-two");
        ScriptedModel model;
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        fs::path project = kftest::temp_dir("kbs-two") / "proj";
        ProcessResult run = cli(run_args(project, write_config(llm_config(server)), "1,3", {"--budget", "6", "--islands", "2"}));
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        QVERIFY2(run.output.find("[2/2] level1/3_Relu") != std::string::npos, run.output.c_str());

        ProjectStore store = ProjectStore::open(project);
        for (const char* task : {"level1/1_Scale", "level1/3_Relu"}) {
            auto r = run_of(store, task);
            QVERIFY(r);
            QCOMPARE(r->state, RunState::Done);
            QCOMPARE(static_cast<int>(store.evaluations(r->id).size()), 6);
            // The first generation (one per island) cheated, and the record names the check.
            int cheats = 0;
            for (const auto& c : store.candidates(r->id)) {
                auto e = store.evaluation_of(c.id);
                QVERIFY(e);
                if (c.family != "llm/init") continue;
                QCOMPARE(e->status, std::string("integrity_violation"));
                bool named = false;
                for (const auto& chk : e->diagnosis["integrity"])
                    named = named || (chk["name"] == "framework_compute" && chk["outcome"] == "fail");
                QVERIFY(named);
                ++cheats;
            }
            QCOMPARE(cheats, 2);
            // Improved through the answers: the best is an LLM child, faster than the first correct one.
            auto best = store.best(r->id);
            QVERIFY(best);
            QVERIFY(best->first.expert.rfind("llm:", 0) == 0);
            double first_ok = 0;
            for (const auto& e : store.evaluations(r->id))
                if (e.status == "ok" && first_ok == 0) first_ok = e.fitness;
            QVERIFY2(best->second.fitness > first_ok, std::to_string(best->second.fitness).c_str());
        }
        // The next prompt after a cheat names the failed check.
        bool named_in_prompt = false, source_in_prompt = false, pattern_retrieved = false;
        for (const auto& req : server.requests()) {
            std::string p = kftest::user_prompt(req);
            named_in_prompt = named_in_prompt || p.find("integrity check FAILED: framework_compute") != std::string::npos;
            source_in_prompt = source_in_prompt || (p.find("return x * 2") != std::string::npos &&
                                                    p.find("input[0]: float32 16x1024") != std::string::npos &&
                                                    p.find("eager PyTorch 2 ms, torch.compile 1 ms") != std::string::npos);
            if (p.find("level1/3_Relu (KernelBench") != std::string::npos)
                pattern_retrieved = pattern_retrieved || p.find("pattern kernelbench/level1/1_Scale (elementwise)") != std::string::npos;
        }
        QVERIFY(named_in_prompt);
        QVERIFY(source_in_prompt);
        QVERIFY(pattern_retrieved);

        // The library learnt both winners, keyed by op class.
        ExperienceLibrary lib = ExperienceLibrary::open(library_path());
        auto pat = lib.pattern_by_name("kernelbench/level1/1_Scale");
        QVERIFY(pat);
        QCOMPARE(pat->op_class, std::string("elementwise"));
        QVERIFY2(pat->description.find("float4") != std::string::npos, pat->description.c_str());
        QVERIFY(pat->source.find("class ModelNew") != std::string::npos);
        InsightQuery q;
        q.op_class = "elementwise";
        q.text = "level1/1_Scale";
        QCOMPARE(lib.insights(q).size(), std::size_t{1});

        // The report counts both problems correct.
        ProcessResult rep = cli({"kernelbench", "report", "--project", project.string(), "--json"});
        QVERIFY2(rep.exit_code == 0, rep.output.c_str());
        json j = json::parse(rep.output.substr(rep.output.find('{')));
        QCOMPARE(j["correct"].get<int>(), 2);
        QVERIFY(j["rows"][0]["speedup_eager"].get<double>() > 2.0);

        // Finished problems are skipped by the next run.
        ProcessResult again = cli(run_args(project, write_config(llm_config(server)), "1", {"--budget", "6"}));
        QVERIFY2(again.output.find("already finished") != std::string::npos, again.output.c_str());
    }

    /** Evaluations per problem and per level, and LLM tokens per problem. */
    void budgets() {
        fresh_environment("kbs-budgets");
        ScriptedModel model;
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        // A level budget of 5 evaluations over two problems: 5/2 = 2 for the first, what is left (3) for the second.
        fs::path project = kftest::temp_dir("kbs-budgets") / "proj";
        ProcessResult run = cli(run_args(project, write_config(llm_config(server)), "1,3",
                                         {"--budget", "10", "--level-budget", "5", "--islands", "1", "--no-library"}));
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        ProjectStore store = ProjectStore::open(project);
        QCOMPARE(static_cast<int>(store.evaluations(run_of(store, "level1/1_Scale")->id).size()), 2);
        QCOMPARE(static_cast<int>(store.evaluations(run_of(store, "level1/3_Relu")->id).size()), 3);
        QVERIFY(run.output.find("evaluation budget of 2 spent") != std::string::npos);

        // Tokens: every answer costs 1250 tokens; with 3000 per problem and one call at a time
        // the third call is the last one started (2500 < 3000), and the run ends saying why.
        ScriptedModel model2;
        HttpTestServer server2([&](const kftest::HttpRequest& r, int i) { return model2(r, i); });
        fs::path project2 = kftest::temp_dir("kbs-tokens") / "proj";
        ProcessResult tok = cli(run_args(project2, write_config(llm_config(server2, 1)), "1",
                                         {"--budget", "50", "--problem-tokens", "3000", "--islands", "1", "--no-library"}));
        QVERIFY2(tok.exit_code == 0, tok.output.c_str());
        QCOMPARE(server2.count(), 3);
        QVERIFY2(tok.output.find("LLM budget spent: 3750 of 3000 tokens") != std::string::npos, tok.output.c_str());
        ProjectStore store2 = ProjectStore::open(project2);
        auto r2 = run_of(store2, "level1/1_Scale");
        QCOMPARE(r2->state, RunState::Done);
        auto usage = store2.get_state(r2->id, "llm");
        QVERIFY(usage);
        QCOMPARE((*usage)["usage"]["totals"]["calls"].get<int>(), 3);
        QVERIFY(static_cast<int>(store2.evaluations(r2->id).size()) < 50);
    }

    /** A level's budgets shared out: the rest over the problems left, each share capped by the problem's own limit. */
    void level_budgets_are_shared_out() {
        kb::ProblemSearchOptions o;
        o.search.budget = 30;
        o.budgets.max_tokens = 150;
        kb::LevelBudgets level;
        level.evaluations = 30;
        level.tokens = 1000;
        level.cost = 2.0;
        level.calls = 9;
        level.time_s = 100;
        kb::LevelSpent others;
        others.evaluations = 10;
        others.tokens = 400;
        others.cost = 0.5;
        others.calls = 3;
        QCOMPARE(kb::share_level_budgets(level, others, 40, 2, o), std::string());
        QCOMPARE(o.search.budget, 10);             // (30 - 10) / 2, under the problem's 30
        QCOMPARE(o.budgets.max_tokens, std::int64_t(150));  // (1000 - 400) / 2 = 300, capped by the problem's 150
        QCOMPARE(o.budgets.max_cost, 0.75);        // (2.0 - 0.5) / 2
        QCOMPARE(o.budgets.max_calls, std::int64_t(3));     // (9 - 3) / 2
        QCOMPARE(o.search.time_limit_s, 30.0);     // (100 - 40) / 2
        // What one problem left unused goes to the next: the last one gets all the rest.
        kb::ProblemSearchOptions last;
        last.search.budget = 30;
        others.evaluations = 14;
        QCOMPARE(kb::share_level_budgets(level, others, 40, 1, last), std::string());
        QCOMPARE(last.search.budget, 16);
        // A spent budget says which; the problem must not run.
        for (const auto& [what, spent] : std::vector<std::pair<std::string, kb::LevelSpent>>{
                 {"evaluations", {30, 0, 0, 0}}, {"tokens", {0, 1000, 0, 0}}, {"calls", {0, 0, 9, 0}}, {"cost", {0, 0, 0, 2.5}}}) {
            kb::ProblemSearchOptions p;
            QCOMPARE(kb::share_level_budgets(level, spent, 0, 3, p), what);
        }
        kb::ProblemSearchOptions late;
        QCOMPARE(kb::share_level_budgets(level, {}, 100, 3, late), std::string("time"));
        // No level budget: the problem's own limits stay as they are.
        kb::ProblemSearchOptions own;
        own.search.budget = 7;
        QCOMPARE(kb::share_level_budgets({}, others, 1000, 5, own), std::string());
        QCOMPARE(own.search.budget, 7);
        QCOMPARE(own.budgets.max_tokens, std::int64_t(0));
        QCOMPARE(own.search.time_limit_s, 0.0);
    }

    /** kill -9 of `kfoundry kernelbench run` mid-search: the next run resumes it and loses no committed candidate. */
    void resumes_after_kill() {
        fresh_environment("kbs-kill");
        ScriptedModel model;
        model.delay_ms = 150;
        model.extra = "# fake-compile-seconds: 0.3\n";
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        fs::path project = kftest::temp_dir("kbs-kill") / "proj";
        fs::path config = write_config(llm_config(server));
        auto args = run_args(project, config, "1", {"--budget", "12", "--islands", "2"});

        QProcess proc;
        QStringList qargs;
        for (const auto& a : args) qargs << QString::fromStdString(a);
        proc.setProcessChannelMode(QProcess::MergedChannels);
        proc.start(QString::fromStdString(kftest::cli_path().string()), qargs);
        QVERIFY(proc.waitForStarted());
        fs::path files = project / "kernelbench" / "candidates";
        auto count_files = [&] {
            std::error_code ec;
            int n = 0;
            if (fs::is_directory(files, ec))
                for (const auto& e : fs::directory_iterator(files, ec)) n += e.path().extension() == ".py";
            return n;
        };
        // Killed once a few candidates are written (the event loop turns meanwhile, so that
        // the process's end, were it to come first, is seen).
        QTRY_VERIFY_WITH_TIMEOUT(count_files() >= 5 || proc.state() == QProcess::NotRunning, 120000);
        QVERIFY2(proc.state() == QProcess::Running, proc.readAll().constData());
        proc.kill();  // SIGKILL
        QVERIFY(proc.waitForFinished());

        std::vector<std::int64_t> committed;
        std::int64_t run_id = 0;
        {
            ProjectStore store = ProjectStore::open(project);
            auto r = run_of(store, "level1/1_Scale");
            QVERIFY(r);
            QVERIFY(r->state != RunState::Done);
            run_id = r->id;
            for (const auto& c : store.candidates(r->id)) committed.push_back(c.id);
        }
        QVERIFY(committed.size() >= 3);
        QVERIFY(static_cast<int>(committed.size()) < 12);

        ProcessResult again = cli(args);
        QVERIFY2(again.exit_code == 0, again.output.c_str());
        QVERIFY2(again.output.find("(resumed)") != std::string::npos, again.output.c_str());
        ProjectStore store = ProjectStore::open(project);
        auto r = run_of(store, "level1/1_Scale");
        QCOMPARE(r->id, run_id);
        QCOMPARE(r->state, RunState::Done);
        std::set<std::int64_t> now;
        for (const auto& c : store.candidates(r->id)) now.insert(c.id);
        for (auto id : committed) {
            QVERIFY2(now.count(id), std::to_string(id).c_str());
            QVERIFY2(store.evaluation_of(id), std::to_string(id).c_str());  // each one evaluated, none lost
        }
        QCOMPARE(static_cast<int>(store.evaluations(r->id).size()), 12);
    }

    /** When the first generation brings nothing usable, the problem's own Model as a ModelNew is the parent. */
    void reference_is_the_parent_of_last_resort() {
        fresh_environment("kbs-ref");
        HttpTestServer server(std::vector<HttpResponse>{answer("I would rather not write code today.")});
        fs::path project = kftest::temp_dir("kbs-ref") / "proj";
        ProcessResult run = cli(run_args(project, write_config(llm_config(server)), "1", {"--budget", "1", "--islands", "1"}));
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        QVERIFY2(run.output.find("initial ModelNew refused: llm:memory: model m1: no code in the answer") != std::string::npos,
                 run.output.c_str());
        ProjectStore store = ProjectStore::open(project);
        auto cands = store.candidates(run_of(store, "level1/1_Scale")->id);
        QCOMPARE(cands.size(), std::size_t{1});
        QCOMPARE(cands[0].family, std::string("reference"));
        QVERIFY(cands[0].source.find("class ModelNew(Model):") != std::string::npos);
        QVERIFY(cands[0].source.find("return x * 2") != std::string::npos);
    }

    /** A ModelNew edited by hand from a candidate: judged with the run's problem and options,
     *  stored as the user's child with its verdict; a cancel stores nothing; a candidate that
     *  is not in the project, or not of a KernelBench run, is refused with the reason. */
    void evaluate_by_hand_stores_the_users_model_new() {
        fresh_environment("kbs-hand");
        HttpTestServer server(std::vector<HttpResponse>{answer("Nothing today.")});
        fs::path project = kftest::temp_dir("kbs-hand") / "proj";
        ProcessResult run = cli(run_args(project, write_config(llm_config(server)), "1",
                                         {"--budget", "1", "--islands", "1", "--tolerance", "v0"}));
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        std::int64_t run_id = 0, parent = 0;
        {
            ProjectStore store = ProjectStore::open(project);
            run_id = run_of(store, "level1/1_Scale")->id;
            parent = store.candidates(run_id).front().id;
        }
        kb::HandEvaluation edit;
        edit.project = project;
        edit.parent = parent;
        const std::string fenced = model_new("ms=0.25", 7);
        edit.source = fenced.substr(10, fenced.size() - 10 - 4);  // the file, without the answer's fences
        edit.rationale = "by hand";
        edit.worker.script = fake_worker();
        edit.worker.device = "cpu";
        kb::HandEvaluationResult done = kb::evaluate_by_hand(edit);
        QVERIFY(!done.cancelled && done.candidate > 0);
        QCOMPARE(done.diagnosis.status, Status::Ok);
        ProjectStore store = ProjectStore::open(project);
        auto child = store.candidate(done.candidate);
        QVERIFY(child);
        QCOMPARE(child->run_id, run_id);
        QCOMPARE(child->expert, std::string("user"));
        QCOMPARE(child->parents, std::vector<std::int64_t>{parent});
        QCOMPARE(store.evaluation_of(done.candidate)->status, std::string("ok"));
        json verdicts = store.get_state(run_id, "kernelbench_verdicts").value_or(json::object());
        QCOMPARE(verdicts[std::to_string(done.candidate)].value("tolerance", std::string()), std::string("v0"));
        QVERIFY(fs::exists(project / "kernelbench" / "candidates" / ("candidate_" + std::to_string(done.candidate) + ".py")));

        const std::size_t count = store.candidates(run_id).size();
        edit.cancelled = [] { return true; };
        QVERIFY(kb::evaluate_by_hand(edit).cancelled);
        QCOMPARE(store.candidates(run_id).size(), count);
        edit.cancelled = {};
        edit.parent = 999999;
        try {
            kb::evaluate_by_hand(edit);
            QFAIL("an unknown candidate was evaluated");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("candidate 999999 is not in the project") != std::string::npos, e.what());
        }
        std::int64_t native = store.add_run("sigmoid", json{{"backend", "host"}});
        CandidateRecord c;
        c.run_id = native;
        c.task = "sigmoid";
        c.source = "x";
        edit.parent = store.add_candidate(c);
        try {
            kb::evaluate_by_hand(edit);
            QFAIL("a native candidate was evaluated as a ModelNew");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("is not a KernelBench run") != std::string::npos, e.what());
        }
    }

    /** A model that answers with the same kernel every time: its repeats are refused, and the
     *  search ends as exhausted after max_fruitless of them instead of asking for ever. */
    void repeating_model_ends_the_search() {
        fresh_environment("kbs-repeat");
        HttpTestServer server([&](const kftest::HttpRequest&, int) { return answer("The same again.\n" + model_new("ms=0.5", 1)); });
        fs::path project = kftest::temp_dir("kbs-repeat") / "proj";
        ProcessResult run = cli(run_args(project, write_config(llm_config(server)), "1", {"--budget", "10", "--islands", "1"}));
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        QVERIFY2(run.output.find("search space exhausted") != std::string::npos, run.output.c_str());
        // One evaluated kernel; the limit of answers in a row with nothing new, and the few in
        // flight when it was reached.
        QVERIFY2(server.count() >= SearchConfig{}.max_fruitless, qPrintable(QString::number(server.count())));
        QVERIFY2(server.count() <= SearchConfig{}.max_fruitless + 8, qPrintable(QString::number(server.count())));
        ProjectStore store = ProjectStore::open(project);
        QCOMPARE(static_cast<int>(store.evaluations(run_of(store, "level1/1_Scale")->id).size()), 1);
    }

    /** A KernelBench prompt template that does not render stops the command before anything runs. */
    void broken_template_stops_before_the_run() {
        fresh_environment("kbs-tpl");
        fs::path prompts = kftest::temp_dir("kbs-tpl-prompts") / "prompts";
        fs::copy(kftest::source_dir() / "resources" / "prompts", prompts, fs::copy_options::recursive);
        std::ofstream(prompts / "kernelbench" / "context.md", std::ios::app) << "{{no_such_value}}\n";
        HttpTestServer server(std::vector<HttpResponse>{answer("unused")});
        json cfg = llm_config(server);
        cfg["prompts_dir"] = prompts.string();
        ProcessResult run = cli(run_args(kftest::temp_dir("kbs-tpl") / "proj", write_config(cfg), "1"));
        QVERIFY(run.exit_code != 0);
        QVERIFY2(run.output.find("unknown placeholder {{no_such_value}}") != std::string::npos, run.output.c_str());
        QCOMPARE(server.count(), 0);
    }

    void level4_is_not_supported() {
        fresh_environment("kbs-l4");
        fs::path project = kftest::temp_dir("kbs-l4") / "proj";
        ProcessResult run = cli({"kernelbench", "run", "--kb", fake_root().string(), "--level", "4", "--kb-worker",
                                 fake_worker().string(), "--project", project.string()});
        QVERIFY2(run.exit_code == 0, run.output.c_str());
        QVERIFY2(run.output.find("level4/1_gpt2_bs1_seq1024") != std::string::npos, run.output.c_str());
        QVERIFY2(run.output.find("not supported: Level 4 problems are whole Hugging Face models") != std::string::npos, run.output.c_str());

        HttpTestServer server(std::vector<HttpResponse>{answer("unused")});
        ProcessResult llm = cli({"kernelbench", "run", "--kb", fake_root().string(), "--level", "4", "--kb-worker", fake_worker().string(),
                                 "--project", project.string(), "--llm-config", write_config(llm_config(server)).string()});
        QVERIFY2(llm.exit_code == 0, llm.output.c_str());
        QVERIFY(llm.output.find("level4/1_gpt2_bs1_seq1024: not supported") != std::string::npos);
        QCOMPARE(server.count(), 0);

        ProcessResult eval = cli({"kernelbench", "eval", "--kb", fake_root().string(), "--level", "4", "--kb-worker",
                                  fake_worker().string(), "--problem", "1", (fake_root() / "candidates" / "2_row_sum.py").string()});
        QVERIFY(eval.exit_code != 0);
        QVERIFY2(eval.output.find("not supported") != std::string::npos, eval.output.c_str());
    }
};

QTEST_GUILESS_MAIN(TestKernelBenchSearch)
#include "test_kernelbench_search.moc"
