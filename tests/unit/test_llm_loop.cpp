// The whole loop on the host backend with LLM experts beside the built-in ones, served by a
// local server: children proposed, screened, compiled and evaluated; a compile error repaired
// by the compile-repair role; tokens accounted; the LLM budget stopping the run; and the API
// key absent from every file the run wrote.
#include <QtTest>

#include <atomic>
#include <fstream>
#include <set>

#include "http_test_server.h"
#include "kf/evolution.h"
#include "kf/llm.h"
#include "kf/process.h"
#include "kf/router.h"
#include "kf/store.h"
#include "testsupport.h"

using namespace kf;
using namespace kf::llm;
using kftest::HttpResponse;
using kftest::HttpTestServer;
using nlohmann::json;

namespace {

const char* kKey = "sk-test-SECRET-1234";

std::string good_source(const std::string& note) {
    return "#include \"kf_task.h\"\n\n// " + note +
           "\nextern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
           "#pragma omp parallel for simd schedule(static)\n"
           "    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];\n}\n";
}

const char* kBroken = "#include \"kf_task.h\"\n\n"
                      "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                      "#pragma omp parallel for\n"
                      "    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i] * undeclared_scale;\n}\n";

HttpResponse answer(const std::string& text) {
    HttpResponse r;
    r.body = kftest::openai_answer(text, "stop", 1000, 250);
    return r;
}

/** A scripted model: the first optimisation answer does not compile, the second cheats, the
 *  third is an edit, later ones full sources; compile repair fixes; insights are two lines. */
struct ScriptedModel {
    std::atomic<int> optimisations{0};
    std::atomic<int> repairs{0};
    std::atomic<int> insights{0};

    HttpResponse operator()(const kftest::HttpRequest& req, int) {
        std::string prompt = kftest::user_prompt(req);
        if (prompt.find("State the reusable lesson") != std::string::npos) {
            ++insights;
            return answer("CONDITION: a memory-bound elementwise loop\nACTION: let the compiler vectorise it with omp simd");
        }
        if (prompt.find("# Role: compile repair") != std::string::npos) {
            ++repairs;
            return answer("Removed the undeclared scale.\n```cpp\n" + good_source("repaired " + std::to_string(repairs)) + "```\n");
        }
        int k = optimisations++;
        if (k == 0) return answer("Scaled the second operand.\n```cpp\n" + std::string(kBroken) + "```\n");
        if (k == 1)
            return answer("Let cuBLAS do it.\n```cpp\n#include \"kf_task.h\"\n#include <cublas_v2.h>\nextern \"C\" void kf_solve(const float* x, "
                          "const float* y, float* z, int n, float alpha) { cublasSaxpy(nullptr, n, &alpha, x, 1, z, 1); }\n```\n");
        if (k == 2)
            return answer("Vectorised the loop.\n<<<<<<< SEARCH\n#pragma omp parallel for schedule(static)\n=======\n"
                          "#pragma omp parallel for simd schedule(static)\n>>>>>>> REPLACE\n");
        return answer("A SIMD loop, variant " + std::to_string(k) + ".\n```cpp\n" + good_source("variant " + std::to_string(k)) + "```\n");
    }
};

/** Files under `dir` (recursively) whose bytes contain `needle`. */
std::vector<std::string> files_containing(const std::filesystem::path& dir, const std::string& needle) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) return out;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (ec || !it->is_regular_file(ec)) continue;
        std::ifstream in(it->path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (bytes.find(needle) != std::string::npos) out.push_back(it->path().string());
    }
    return out;
}

}  // namespace

class TestLlmLoop : public QObject {
    Q_OBJECT

private:
    std::filesystem::path cache_, data_home_;
    Task task_;

    EvaluatorConfig host_config() const {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache_ / "compile";
        return cfg;
    }
    static EvalOptions quick_eval() {
        EvalOptions o;
        o.min_time_ms = 20;
        o.min_reps = 3;
        o.warmup = 1;
        o.trials = 1;
        o.timeout_s = 120;
        return o;
    }
    json config_json(const HttpTestServer& s, int max_calls) const {
        json provider = {{"name", "local"}, {"kind", "openai"}, {"base_url", s.url("/v1")}, {"api_key_env", "KF_TEST_LLM_KEY"},
                         {"retries", 1}, {"backoff_s", 0.05}, {"timeout_s", 60}, {"concurrency", 2}};
        provider["prices"] = json::parse(R"({"m1": {"input": 3.0, "output": 15.0}})");
        json j = json::object();
        j["providers"] = json::array({provider});
        j["models"] = json::parse(R"([{"name": "m1", "provider": "local"}])");
        j["budgets"] = json{{"max_calls", max_calls}};
        return j;
    }
    std::shared_ptr<LlmEnsemble> ensemble(const HttpTestServer& s, int max_calls) const {
        auto e = LlmEnsemble::create(parse_llm_config(config_json(s, max_calls)), kftest::source_dir() / "resources" / "prompts");
        e->bind(&task_, Backend::Host);
        return e;
    }
    static std::vector<std::vector<std::string>> llm_islands() {
        return {{"llm:memory", "llm:compute", "llm:fusion", "llm:warp", "llm:occupancy", "llm:compile", "llm:numerics"}};
    }

private slots:
    void initTestCase() {
        cache_ = kftest::temp_dir("llm-loop-cache");
        data_home_ = kftest::temp_dir("llm-loop-data");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((cache_ / "compile").string()));
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(data_home_.string()));
        qputenv("KF_TEST_LLM_KEY", kKey);
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) qunsetenv(v);
        task_ = load_task(kftest::data("tasks/scale_add"));
    }

    /** kf::evolve with EvolveOptions::llm: the LLM experts, their budget, the insights and the store. */
    void search_with_llm_experts_and_a_budget_cap() {
        ScriptedModel model;
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        auto ens = ensemble(server, 6);
        auto project = kftest::temp_dir("llm-loop-project");
        ProjectStore store = ProjectStore::create(project, "p");
        const auto library_path = data_home_ / "kernel-foundry" / "library.db";
        Evaluator ev(host_config());

        EvolveOptions opt;
        opt.search.budget = 20;
        opt.search.islands.islands = 1;
        opt.search.seed = 5;
        opt.search.island_experts = llm_islands();
        opt.eval = quick_eval();
        opt.seed_library = kftest::source_dir() / "resources" / "library" / "seed.json";
        opt.experience_library = library_path;
        opt.llm = ens;
        std::vector<SearchEvent> events;
        EvolveOutcome out = evolve(task_, ev, store, opt, [&](const SearchEvent& e) { events.push_back(e); });
        const SearchResult& result = out.result;
        const std::int64_t run = out.run_id;
        const SearchConfig cfg = opt.search;
        ExperienceLibrary lib = ExperienceLibrary::open(library_path);

        // The LLM budget ended the run, with its reason.
        std::string why;
        QVERIFY2(ens->budget_spent(&why), to_string(result.stop_reason).c_str());
        QCOMPARE(why, std::string("LLM budget spent: 6 of 6 calls"));
        QVERIFY2(result.evaluations < cfg.budget, to_string(result.stop_reason).c_str());
        // Stopped by the spent budget after the batch in flight (or, when the last allowed call
        // was a refusal, because every expert then refused), and the store says it was stopped.
        QVERIFY2(result.stop_reason.kind == StopKind::LlmCalls || result.stop_reason.kind == StopKind::Exhausted,
                 to_string(result.stop_reason).c_str());
        QCOMPARE(store.run(run)->state, RunState::Stopped);
        QCOMPARE(store.run(run)->stop_reason, to_string(result.stop_reason));
        // The usage went out as events and is kept with the run.
        QVERIFY(std::any_of(events.begin(), events.end(), [](const SearchEvent& e) { return e.kind == EventKind::LlmUsage; }));
        QCOMPARE((*store.get_state(run, "llm"))["usage"]["totals"].value("calls", std::int64_t{0}), std::int64_t(6));
        bool refused_for_budget = false, screened = false;
        for (const auto& e : events) {
            if (e.kind == EventKind::Refused && e.message.find("LLM budget spent") != std::string::npos) refused_for_budget = true;
            if (e.kind == EventKind::Refused && e.message.find("screened: cublas") != std::string::npos) screened = true;
        }
        QVERIFY(screened);  // the cheat never reached the compiler
        Q_UNUSED(refused_for_budget);

        // Children of the LLM experts were compiled and evaluated: one did not compile, others ran correctly.
        // The stop drops the children still waiting to compile: they stay in the store
        // unevaluated, for a resume.
        int llm_ok = 0, llm_compile_errors = 0, llm_waiting = 0;
        std::set<std::int64_t> unevaluated;
        for (std::int64_t id : store.unevaluated(run)) unevaluated.insert(id);
        std::string children;  // what the LLM experts wrote, for the messages below
        for (const auto& c : store.candidates(run)) {
            if (c.expert.rfind("llm:", 0) != 0) continue;
            QVERIFY(c.source.find("cublas") == std::string::npos);
            auto e = store.evaluation_of(c.id);
            children += c.expert + " " + (e ? e->status : std::string("unevaluated")) + " (" + c.rationale.substr(0, 40) + "); ";
            if (!e) {
                QVERIFY(unevaluated.count(c.id));
                ++llm_waiting;
                continue;
            }
            if (e->status_value() == Status::Ok) ++llm_ok;
            if (e->status_value() == Status::CompileError) ++llm_compile_errors;
            QVERIFY2(c.rationale.rfind("[m1] ", 0) == 0, c.rationale.c_str());
        }
        QVERIFY2(llm_compile_errors == 1, children.c_str());
        QVERIFY2(llm_ok + llm_waiting >= 2, children.c_str());
        // Resumed without LLM experts, the run evaluates what the stop left waiting: the LLM
        // children other than the broken one run correctly.
        EvolveOptions again = opt;
        again.resume = true;
        again.llm = nullptr;
        EvolveOutcome resumed = evolve(task_, ev, store, again);
        QCOMPARE(resumed.run_id, run);
        QVERIFY(resumed.resumed);
        llm_ok = 0;
        for (const auto& c : store.candidates(run)) {
            if (c.expert.rfind("llm:", 0) != 0) continue;
            auto e = store.evaluation_of(c.id);
            QVERIFY2(e, c.rationale.c_str());
            if (e->status_value() == Status::Ok) ++llm_ok;
        }
        QVERIFY2(llm_ok >= 2, children.c_str());

        // Tokens and money per call, per expert and per run.
        auto totals = ens->accounting().totals();
        QCOMPARE(totals.calls, std::int64_t(6));
        QCOMPARE(totals.input_tokens, std::int64_t(6000));
        QCOMPARE(totals.output_tokens, std::int64_t(1500));
        QCOMPARE(totals.cost, (6000 * 3.0 + 1500 * 15.0) / 1e6);
        std::int64_t per_expert = 0;
        for (const auto& [name, t] : ens->accounting().per_expert()) per_expert += t.calls;
        QCOMPARE(per_expert, std::int64_t(6));
        QCOMPARE(static_cast<int>(ens->accounting().calls().size()), 6);
        QCOMPARE(server.count(), 6);
        if (model.insights > 0) QVERIFY(!lib.insights({}).empty());

        // Follow-up: the compile-repair role fixes the child that did not compile.
        std::optional<CandidateRecord> broken;
        for (const auto& c : store.candidates(run))
            if (c.source.find("undeclared_scale") != std::string::npos) broken = c;
        QVERIFY(broken);
        json diagnosis = store.evaluation_of(broken->id)->diagnosis;
        QCOMPARE(diagnosis.value("status", ""), std::string("compile_error"));
        Member parent;
        parent.id = broken->id;
        parent.source = broken->source;
        parent.family = broken->family;
        parent.expert = broken->expert;
        parent.status = Status::CompileError;
        auto repair_ens = ensemble(server, 0);
        std::shared_ptr<Expert> repair;
        for (auto& x : repair_ens->experts())
            if (x->name() == "llm:compile") repair = x;
        QVERIFY(repair);
        ProposalContext ctx;
        ctx.task = &task_;
        ctx.backend = Backend::Host;
        ctx.parent = &parent;
        ctx.diagnosis_class = diagnosis_class(parent);
        ctx.parent_diagnosis = &diagnosis;
        QCOMPARE(ctx.diagnosis_class, std::optional<DiagnosisClass>(DiagnosisClass::CompileError));
        auto fixed = repair->propose(ctx);
        QVERIFY2(fixed, repair->refusal().c_str());
        std::string prompt = kftest::user_prompt(server.requests().back());
        QVERIFY2(prompt.find("undeclared_scale") != std::string::npos, prompt.c_str());
        QVERIFY2(prompt.find("error: ") != std::string::npos, prompt.c_str());
        QVERIFY2(prompt.find("5 |     for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i] * undeclared_scale;") != std::string::npos,
                 prompt.c_str());
        Diagnosis d = ev.evaluate(task_, {fixed->source, "repaired"}, quick_eval());
        QVERIFY2(d.ok(), d.message.c_str());
        QVERIFY(model.repairs.load() >= 1);

        // The key is nowhere in what the run wrote.
        store = ProjectStore::open(project);  // flushes nothing new; the WAL is scanned as well
        for (const auto& dir : {project, data_home_, cache_}) {
            auto hits = files_containing(dir, kKey);
            QVERIFY2(hits.empty(), hits.empty() ? "" : hits.front().c_str());
        }
        for (const auto& e : events) QVERIFY(e.message.find(kKey) == std::string::npos && e.data.dump().find(kKey) == std::string::npos);
    }

    /** kf::evolve with EvolveOptions::experts holding the LLM experts beside the built-in ones. */
    void evolve_with_llm_experts() {
        ScriptedModel model;
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        auto ens = ensemble(server, 4);
        auto project = kftest::temp_dir("llm-evolve-project");
        ProjectStore store = ProjectStore::create(project, "p");
        Evaluator ev(host_config());
        EvolveOptions opt;
        opt.search.budget = 10;
        opt.search.islands.islands = 1;
        opt.search.seed = 9;
        opt.search.island_experts = llm_islands();
        opt.eval = quick_eval();
        opt.seed_library = kftest::source_dir() / "resources" / "library" / "seed.json";
        opt.experience_library = data_home_ / "kernel-foundry" / "library.db";
        opt.experts = ens->experts();
        RunControl control;
        opt.control = &control;
        ens->watch(&control);
        EvolveOutcome out = evolve(task_, ev, store, opt, [&](const SearchEvent& e) { ens->observe(e); },
                                   [&] { return ens->budget_spent(); });
        QVERIFY2(server.count() > 0, "no LLM expert was called");
        int llm_children = 0;
        for (const auto& c : store.candidates(out.run_id)) llm_children += c.expert.rfind("llm:", 0) == 0;
        QVERIFY(llm_children >= 1);
        QVERIFY(ens->accounting().totals().calls >= 1);
        for (const auto& dir : {project, data_home_}) {
            auto hits = files_containing(dir, kKey);
            QVERIFY2(hits.empty(), hits.empty() ? "" : hits.front().c_str());
        }
    }

    /**
     * kf::evolve with EvolveOptions::llm: a run stopped after a few LLM calls and resumed
     * with a fresh ensemble keeps its call count against the budget and its bandit statistics.
     */
    void resumed_run_keeps_llm_usage_and_bandit() {
        ScriptedModel model;
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        auto project = kftest::temp_dir("llm-resume-project");
        ProjectStore store = ProjectStore::create(project, "p");
        Evaluator ev(host_config());
        auto options = [&](std::shared_ptr<LlmEnsemble> ens, bool resume) {
            EvolveOptions opt;
            opt.search.budget = 40;
            opt.search.islands.islands = 1;
            opt.search.seed = 11;
            opt.search.island_experts = llm_islands();
            opt.eval = quick_eval();
            opt.seed_library = kftest::source_dir() / "resources" / "library" / "seed.json";
            opt.resume = resume;
            opt.llm = std::move(ens);
            return opt;
        };

        // First run: stopped by the user once an LLM child was evaluated.
        auto first = ensemble(server, 10);
        std::vector<SearchEvent> usage_events;
        int llm_evaluated = 0;
        EvolveOutcome one = evolve(task_, ev, store, options(first, false),
                                   [&](const SearchEvent& e) {
                                       if (e.kind == EventKind::LlmUsage) usage_events.push_back(e);
                                       if (e.kind == EventKind::Evaluated && e.data.value("expert", "").rfind("llm:", 0) == 0) ++llm_evaluated;
                                   },
                                   [&] { return llm_evaluated >= 1; });
        const std::int64_t calls_before = first->accounting().totals().calls;
        const json bandit_before = first->bandit().to_json();
        QVERIFY2(calls_before >= 1 && calls_before < 10, std::to_string(calls_before).c_str());
        QCOMPARE(store.run(one.run_id)->state, RunState::Stopped);
        QVERIFY2(!bandit_before.empty(), bandit_before.dump().c_str());
        QVERIFY(!usage_events.empty());
        QCOMPARE(usage_events.back().data["totals"].value("calls", std::int64_t{0}), calls_before);
        auto saved = store.get_state(one.run_id, "llm");
        QVERIFY(saved);
        QCOMPARE((*saved)["usage"]["totals"].value("calls", std::int64_t{0}), calls_before);
        // The server records a request on its own thread, which may lag a call cancelled at the stop.
        QTRY_COMPARE_WITH_TIMEOUT(server.count(), static_cast<int>(calls_before), 3000);

        // Resumed with a fresh ensemble (a new process): the budget counts the calls already
        // made, and the bandit starts from what the first part learnt.
        auto second = ensemble(server, 10);
        std::optional<json> bandit_at_start;
        std::int64_t calls_at_start = -1;
        EvolveOutcome two = evolve(task_, ev, store, options(second, true), {}, [&] {
            if (!bandit_at_start) {
                bandit_at_start = second->bandit().to_json();
                calls_at_start = second->accounting().totals().calls;
            }
            return false;
        });
        QVERIFY(two.resumed);
        QCOMPARE(two.run_id, one.run_id);
        QVERIFY(bandit_at_start);
        QVERIFY2(calls_at_start >= calls_before, std::to_string(calls_at_start).c_str());
        for (auto c = bandit_before.begin(); c != bandit_before.end(); ++c)
            for (auto m = c->begin(); m != c->end(); ++m)
                QVERIFY2(second->bandit().stats(m.key(), diagnosis_class_from_string(c.key())).tries >= m->value("tries", 0), second->bandit().to_json().dump().c_str());
        std::string why;
        QVERIFY2(second->budget_spent(&why), to_string(two.result.stop_reason).c_str());
        QCOMPARE(why, std::string("LLM budget spent: 10 of 10 calls"));
        QCOMPARE(second->accounting().totals().calls, std::int64_t(10));
        QCOMPARE(server.count(), 10);  // 10 calls over both parts of the run, not 10 more
        QCOMPARE(store.run(two.run_id)->state, RunState::Stopped);
        auto kept = store.get_state(two.run_id, "llm");
        QVERIFY(kept);
        QCOMPARE((*kept)["usage"]["totals"].value("calls", std::int64_t{0}), std::int64_t(10));
        auto hits = files_containing(project, kKey);
        QVERIFY2(hits.empty(), hits.empty() ? "" : hits.front().c_str());
    }

    /** A key given in memory (as the app does from the OS keyring) wins over the environment. */
    void key_in_memory() {
        HttpTestServer server([&](const kftest::HttpRequest&, int) { return answer("ok"); });
        json j = config_json(server, 0);
        j["providers"][0]["api_key_env"] = "KF_TEST_LLM_KEY_UNSET";
        qunsetenv("KF_TEST_LLM_KEY_UNSET");
        QVERIFY_THROWS_EXCEPTION(ConfigError, LlmEnsemble::create(parse_llm_config(j), kftest::source_dir() / "resources" / "prompts"));
        LlmConfig cfg = parse_llm_config(j);
        cfg.providers[0].api_key = "sk-in-memory-5678";
        auto ens = LlmEnsemble::create(cfg, kftest::source_dir() / "resources" / "prompts");
        ChatRequest req;
        req.user = "hello";
        ChatResponse r = ens->call("llm:memory", "m1", req);
        QVERIFY2(r.ok, r.error.c_str());
        QVERIFY(server.requests().back().raw.find("sk-in-memory-5678") != std::string::npos);
        // A key never belongs in the file.
        j["providers"][0]["api_key"] = "sk-in-file";
        try {
            parse_llm_config(j);
            QFAIL("a key in the file was accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(e.field(), std::string("providers[0].api_key"));
        }
    }

    /** kfoundry evolve --llm-config, and without it. */
    void cli_llm_config() {
        ScriptedModel model;
        HttpTestServer server([&](const kftest::HttpRequest& r, int i) { return model(r, i); });
        auto dir = kftest::temp_dir("llm-cli");
        kftest::write_file(dir / "llm.json", config_json(server, 3).dump(2));
        auto run = [&](std::vector<std::string> extra, const std::string& project) {
            std::vector<std::string> args = {kftest::cli_path().string(), "evolve", kftest::data("tasks/scale_add").string(),
                                             "--project", (dir / project).string(), "--backend", "host", "--budget", "4",
                                             "--islands", "1", "--trials", "1", "--min-time", "20", "--no-library"};
            args.insert(args.end(), extra.begin(), extra.end());
            return run_process(args, std::chrono::minutes(4));
        };
        ProcessResult with = run({"--llm-config", (dir / "llm.json").string()}, "with");
        kftest::write_file(dir / "with.log", with.output);
        // Improved (0), or not over four evaluations (6: no improvement); never an error.
        QVERIFY2(with.exit_code == 0 || with.exit_code == 4 || with.exit_code == 6, with.output.c_str());
        QVERIFY2(with.output.find("LLM experts: 7 roles") != std::string::npos, with.output.c_str());
        QVERIFY2(with.output.find("LLM usage:") != std::string::npos, with.output.c_str());
        ProcessResult without = run({}, "without");
        QVERIFY2(without.output.find("no LLM experts configured: built-in experts only") != std::string::npos, without.output.c_str());
        // A bad configuration is a usage error naming the field.
        kftest::write_file(dir / "bad.json", "{\"providers\": [{\"name\": \"x\", \"kind\": \"openai\", \"base_url\": \"ftp://h\"}], \"models\": [{\"name\": \"m\"}]}");
        ProcessResult bad = run({"--llm-config", (dir / "bad.json").string()}, "bad");
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.output.find("providers[0].base_url") != std::string::npos, bad.output.c_str());
        auto hits = files_containing(dir, kKey);
        QVERIFY2(hits.empty(), hits.empty() ? "" : hits.front().c_str());
    }
};

QTEST_GUILESS_MAIN(TestLlmLoop)
#include "test_llm_loop.moc"
