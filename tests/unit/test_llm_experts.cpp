// The LLM expert roles against a local server: prompts filled from the context, full-source
// and SEARCH/REPLACE children, refusals with reasons (cheats screened, truncated, malformed,
// empty), budgets, the model bandit, insights, and concurrent calls.
#include <QtTest>

#include <thread>

#include "http_test_server.h"
#include "kf/llm.h"
#include "kf/router.h"
#include "testsupport.h"

using namespace kf;
using namespace kf::llm;
using kftest::HttpResponse;
using kftest::HttpTestServer;
using nlohmann::json;

namespace {

const char* kGood = R"(#include "kf_task.h"

// variant: contiguous loop the compiler vectorises
extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
#pragma omp parallel for simd schedule(static)
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];
}
)";

std::string fenced(const std::string& prose, const std::string& code, const char* lang = "cpp") {
    return prose + "\n\n```" + lang + "\n" + code + "```\n";
}

HttpResponse openai(const std::string& content, const std::string& finish = "stop") {
    HttpResponse r;
    r.body = kftest::openai_answer(content, finish, 1000, 200);
    return r;
}

}  // namespace

class TestLlmExperts : public QObject {
    Q_OBJECT

private:
    Task task_;
    Member parent_;
    Member inspiration_;
    std::vector<std::string> notes_ = {"elementwise, memory: wider vector loads helped (1.4x, 3 runs)"};

    LlmConfig config(const HttpTestServer& s, const std::string& kind = "openai", json budgets = json::object()) const {
        json provider = {{"name", "local"}, {"kind", kind}, {"base_url", s.url("/v1")}, {"api_key_env", "KF_TEST_LLM_KEY"},
                         {"retries", 0}, {"timeout_s", 20}};
        provider["prices"] = json::parse(R"({"m1": {"input": 1.0, "output": 4.0}})");
        json j = json::object();
        j["providers"] = json::array({provider});
        j["models"] = json::parse(R"([{"name": "m1", "provider": "local"}])");
        j["budgets"] = budgets;
        return parse_llm_config(j);
    }
    std::shared_ptr<LlmEnsemble> ensemble(const LlmConfig& c) const {
        auto e = LlmEnsemble::create(c, kftest::source_dir() / "resources" / "prompts");
        e->bind(&task_, Backend::Host);
        return e;
    }
    std::shared_ptr<Expert> role(LlmEnsemble& e, const std::string& name) const {
        for (auto& x : e.experts())
            if (x->name() == name) return x;
        return nullptr;
    }
    ProposalContext context(const json* diagnosis = nullptr) const {
        ProposalContext ctx;
        ctx.task = &task_;
        ctx.backend = Backend::Host;
        ctx.parent = &parent_;
        ctx.diagnosis_class = diagnosis_class(parent_);
        ctx.parent_diagnosis = diagnosis;
        ctx.library_notes = &notes_;
        ctx.inspirations = {&inspiration_};
        return ctx;
    }

private slots:
    void initTestCase() {
        qputenv("KF_TEST_LLM_KEY", "sk-test-SECRET-1234");
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) qunsetenv(v);
        task_ = load_task(kftest::data("tasks/scale_add"));
        parent_.id = 7;
        parent_.source = kftest::read_file(task_.references.at(Backend::Host));
        parent_.family = "reference";
        parent_.status = Status::Ok;
        parent_.bound = "memory";
        parent_.fitness = 1.0;
        inspiration_.id = 9;
        inspiration_.island = 2;
        inspiration_.fitness = 1.7;
        inspiration_.family = "scale_add/blocked";
        inspiration_.expert = "tuner";
        inspiration_.source = kftest::read_file(kftest::data("tasks/scale_add/candidates/blocked.cpp"));
    }

    void experts_for_every_role() {
        HttpTestServer s({openai("x")});
        auto e = ensemble(config(s));
        auto xs = e->experts();
        QCOMPARE(xs.size(), std::size_t(7));
        for (const auto& x : xs) {
            QVERIFY(x->name().rfind("llm:", 0) == 0);
            QVERIFY(x->blocking());
            QVERIFY(!x->priors().empty());
        }
        QCOMPARE(role(*e, "llm:compile")->priors().at(DiagnosisClass::CompileError), 0.9);
        QCOMPARE(role(*e, "llm:numerics")->priors().at(DiagnosisClass::Incorrect), 0.9);
        // Roles can be switched off.
        LlmConfig c = config(s);
        c.roles.erase("fusion");
        c.roles["warp"].enabled = false;
        QCOMPARE(LlmEnsemble::create(c, kftest::source_dir() / "resources" / "prompts")->experts().size(), std::size_t(5));
    }

    void full_source_child_and_its_prompt() {
        HttpTestServer s({openai(fenced("Used an OpenMP SIMD loop so that the compiler vectorises the update.", kGood))});
        auto e = ensemble(config(s));
        auto memory = role(*e, "llm:memory");
        Diagnosis d;
        d.status = Status::Ok;
        d.stage = Stage::Done;
        d.message = "correct; 1.0x the reference";
        Roofline rl;
        rl.bound = "memory";
        rl.achieved_gbps = 12.5;
        rl.peak_gbps = 40;
        d.roofline = rl;
        json dj = d;
        auto p = memory->propose(context(&dj));
        QVERIFY2(p, memory->refusal().c_str());
        QCOMPARE(p->expert, std::string("llm:memory"));
        QCOMPARE(p->parents, std::vector<std::int64_t>{7});
        QCOMPARE(p->family, std::string("llm/memory"));
        QVERIFY(p->source.find("omp parallel for simd") != std::string::npos);
        QVERIFY2(p->rationale.rfind("[m1] Used an OpenMP SIMD loop", 0) == 0, p->rationale.c_str());
        QVERIFY(p->tunables.empty());

        std::string prompt = kftest::user_prompt(s.requests().at(0));
        QVERIFY(prompt.find("# Role: memory access") != std::string::npos);
        QVERIFY(prompt.find(entry_header(task_, Backend::Host)) != std::string::npos);
        QVERIFY(prompt.find("z[i] = alpha * x[i] + y[i];") != std::string::npos);  // the parent
        QVERIFY(prompt.find("12.5 GB/s of 40") != std::string::npos);              // its diagnosis
        QVERIFY(prompt.find("wider vector loads helped") != std::string::npos);     // library notes
        QVERIFY(prompt.find("1.7x the reference") != std::string::npos);            // inspiration
        QVERIFY(prompt.find("#define CHUNK 4096") != std::string::npos);
        QVERIFY(prompt.find("## Rules") != std::string::npos);
        QVERIFY(prompt.find("n = 1048576") != std::string::npos);
        QVERIFY(prompt.find("{{") == std::string::npos);

        auto totals = e->accounting().totals();
        QCOMPARE(totals.calls, std::int64_t(1));
        QCOMPARE(totals.input_tokens, std::int64_t(1000));
        QCOMPARE(totals.output_tokens, std::int64_t(200));
        QCOMPARE(totals.cost, (1000 * 1.0 + 200 * 4.0) / 1e6);
        QCOMPARE(e->accounting().per_expert().at("llm:memory").calls, std::int64_t(1));
    }

    void search_replace_child_through_anthropic() {
        std::string diff = "Vectorised the loop.\n<<<<<<< SEARCH\n#pragma omp parallel for schedule(static)\n=======\n"
                           "#pragma omp parallel for simd schedule(static)\n>>>>>>> REPLACE\n";
        HttpResponse r;
        r.body = kftest::anthropic_answer(diff, "end_turn", 800, 100);
        HttpTestServer s({r});
        auto e = ensemble(config(s, "anthropic"));
        auto fusion = role(*e, "llm:fusion");
        auto p = fusion->propose(context());
        QVERIFY2(p, fusion->refusal().c_str());
        QVERIFY(p->source.find("#pragma omp parallel for simd schedule(static)") != std::string::npos);
        QCOMPARE(p->family, std::string("reference"));  // an edit keeps the parent's family
        QCOMPARE(s.requests().at(0).path, std::string("/v1/messages"));
        QCOMPARE(e->accounting().totals().tokens(), std::int64_t(900));
    }

    void refusals_have_reasons() {
        struct Case {
            HttpResponse response;
            const char* reason;
        };
        HttpResponse malformed;
        malformed.body = "{\"choices\": [";
        HttpResponse refused;
        refused.body = R"({"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}})";
        std::string bad_diff = "<<<<<<< SEARCH\nthis line is not in the parent\n=======\nx\n>>>>>>> REPLACE\n";
        std::vector<Case> cases = {
            {openai(fenced("Uses cuBLAS.", "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) { cublasSaxpy(h, n, &alpha, x, 1, z, 1); }\n")),
             "screened: cublasSaxpy (cuBLAS is not allowed by the task)"},
            {openai(fenced("Side stream.", "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) { cudaStream_t s; cudaStreamCreate(&s); }\n")),
             "screened: cudaStreamCreate (creates a stream"},
            {openai(fenced("Cache.", "#include \"kf_task.h\"\n#include <map>\nstatic std::map<const float*, float*> memo;\nextern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {}\n")),
             "screened: static std::map<const float*"},
            {openai("```cpp\n#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x", "length"), "model m1: answer cut off at the token limit"},
            {malformed, "model m1: malformed JSON answer"},
            {openai(""), "model m1: empty answer"},
            {refused, "model m1: declined"},
            {openai("Sorry, I would rather not."), "model m1: no code in the answer"},
            {openai(bad_diff), "model m1: SEARCH block 1 does not match the parent's source"},
            {openai(fenced("Same.", kftest::read_file(task_.references.at(Backend::Host)))), "the answer repeats the parent"},
        };
        for (const auto& c : cases) {
            HttpTestServer s({c.response});
            auto e = ensemble(config(s));
            auto expert = role(*e, "llm:compute");
            auto p = expert->propose(context());
            QVERIFY2(!p, c.reason);
            QVERIFY2(expert->refusal().find(c.reason) != std::string::npos, (expert->refusal() + " | expected " + c.reason).c_str());
            QCOMPARE(e->accounting().totals().calls, std::int64_t(1));  // every call is accounted, useful or not
        }
    }

    void code_that_does_not_compile_is_still_a_child() {
        // The compiler, not the expert, judges it: the search then routes it to compile repair.
        std::string broken = "#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                             "    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i] + undeclared_value;\n}\n";
        HttpTestServer s({openai(fenced("Added a correction term.", broken))});
        auto e = ensemble(config(s));
        auto p = role(*e, "llm:warp")->propose(context());
        QVERIFY(p);
        QVERIFY(p->source.find("undeclared_value") != std::string::npos);
    }

    void budget_cap_refuses_and_stops_the_run() {
        HttpTestServer s([](const kftest::HttpRequest&, int i) {
            return openai(fenced("variant", std::string(kGood) + "// " + std::to_string(i) + "\n"));
        });
        auto e = ensemble(config(s, "openai", {{"max_calls", 2}}));
        RunControl control;
        e->watch(&control);
        auto memory = role(*e, "llm:memory");
        QVERIFY(memory->propose(context()));
        QVERIFY(!control.stop_requested());
        QVERIFY(memory->propose(context()));
        QVERIFY(control.stop_requested());  // the last allowed call spent the budget
        std::string why;
        QVERIFY(e->budget_spent(&why));
        QCOMPARE(why, std::string("LLM budget spent: 2 of 2 calls"));
        QVERIFY(!memory->propose(context()));
        QCOMPARE(memory->refusal(), std::string("LLM budget spent: 2 of 2 calls"));
        QCOMPARE(s.count(), 2);

        // A token budget.
        HttpTestServer t({openai(fenced("v", kGood))});
        auto te = ensemble(config(t, "openai", {{"max_tokens", 1000}}));
        auto tm = role(*te, "llm:memory");
        QVERIFY(tm->propose(context()));
        QVERIFY(!tm->propose(context()));
        QVERIFY2(tm->refusal().find("LLM budget spent: 1200 of 1000 tokens") == 0, tm->refusal().c_str());
    }

    void cancelled_ensemble_refuses() {
        HttpTestServer s({openai(fenced("v", kGood))});
        auto e = ensemble(config(s));
        e->cancel();
        auto x = role(*e, "llm:memory");
        QVERIFY(!x->propose(context()));
        QVERIFY(x->refusal().find("cancelled") == 0);
        QCOMPARE(s.count(), 0);
    }

    /**
     * A proposal cancelled while it waits for the provider's only slot (its call reserved,
     * nothing sent) is not a call. The one in flight when the run stopped was sent, and counts.
     */
    void call_cancelled_before_sending_is_not_counted() {
        HttpTestServer s([](const kftest::HttpRequest&, int) {
            HttpResponse r = openai(fenced("slow", kGood));
            r.delay_ms = 4000;
            return r;
        });
        LlmConfig c = config(s);
        c.providers[0].concurrency = 1;
        auto e = ensemble(c);
        auto memory = role(*e, "llm:memory");
        std::thread first([&] { memory->propose(context()); });
        QTRY_COMPARE_WITH_TIMEOUT(s.count(), 1, 3000);
        auto waiting = role(*e, "llm:compute");
        std::thread second([&] { waiting->propose(context()); });
        // The second has reserved its call and waits for the slot the first holds.
        QTRY_COMPARE_WITH_TIMEOUT(e->accounting().in_flight(), std::int64_t(2), 3000);
        e->cancel();
        first.join();
        second.join();
        QCOMPARE(s.count(), 1);
        QCOMPARE(e->accounting().totals().calls, std::int64_t(1));
        QCOMPARE(static_cast<int>(e->accounting().calls().size()), 1);
        QCOMPARE(e->accounting().calls().front().outcome, std::string("cancelled"));
        std::string why;
        QVERIFY(!e->budget_spent(&why));
    }

    void concurrent_proposals() {
        HttpTestServer s([](const kftest::HttpRequest&, int i) {
            HttpResponse r = openai(fenced("variant", std::string(kGood) + "// " + std::to_string(i) + "\n"));
            r.delay_ms = 100;
            return r;
        });
        auto e = ensemble(config(s));
        auto memory = role(*e, "llm:memory");
        std::vector<std::thread> ts;
        std::atomic<int> children{0};
        for (int i = 0; i < 6; ++i)
            ts.emplace_back([&] {
                ProposalContext ctx = context();
                if (memory->propose(ctx)) ++children;
            });
        for (auto& t : ts) t.join();
        QCOMPARE(children.load(), 6);
        QCOMPARE(e->accounting().totals().calls, std::int64_t(6));
    }

    void rewards_feed_the_model_bandit() {
        HttpTestServer s({openai("x")});
        json j = json::object();
        j["providers"] = json::array({json{{"name", "local"}, {"kind", "openai"}, {"base_url", s.url("/v1")}}});
        j["models"] = json::parse(R"([{"name": "a", "weight": 1}, {"name": "b", "weight": 1}])");
        auto e = LlmEnsemble::create(parse_llm_config(j), kftest::source_dir() / "resources" / "prompts");
        SearchEvent ev;
        ev.kind = EventKind::Evaluated;
        ev.data = {{"expert", "llm:memory"}, {"rationale", "[b] wider loads"}, {"parent_class", "memory"}, {"gain", 1.8}};
        for (int i = 0; i < 4; ++i) e->observe(ev);
        ev.data["rationale"] = "[a] nothing";
        ev.data["gain"] = 0.7;
        for (int i = 0; i < 4; ++i) e->observe(ev);
        ev.data["expert"] = "tuner";  // not an LLM child: ignored
        e->observe(ev);
        QCOMPARE(e->bandit().stats("b", DiagnosisClass::Memory).improvements, 4);
        QCOMPARE(e->bandit().stats("a", DiagnosisClass::Memory).tries, 4);
        QCOMPARE(e->bandit().choose(DiagnosisClass::Memory, e->models_for("memory")), std::string("b"));
        e->reward("a", DiagnosisClass::Compute, 3.0);
        QCOMPARE(e->bandit().stats("a", DiagnosisClass::Compute).improvements, 1);
    }

    void insight_is_stored_as_proposed() {
        HttpTestServer s({openai("CONDITION: an elementwise loop over contiguous floats that is memory-bound\n"
                                 "ACTION: use an OpenMP SIMD loop so the compiler emits vector loads and stores")});
        auto e = ensemble(config(s));
        auto lib_path = kftest::temp_dir("llm-insight") / "library.db";
        ExperienceLibrary lib = ExperienceLibrary::open(lib_path);
        InsightRequest req;
        req.expert = "llm:memory";
        req.model = "m1";
        req.op_class = "elementwise";
        req.diagnosis_class = DiagnosisClass::Memory;
        req.parent_source = parent_.source;
        req.child_source = kGood;
        req.rationale = "SIMD loop";
        req.gain = 1.4;
        req.run_id = "3";
        req.candidate_id = "17";
        std::string why;
        auto in = e->request_insight(req, &lib, &why);
        QVERIFY2(in, why.c_str());
        QVERIFY(in->id > 0);
        auto stored = lib.insights({});
        QCOMPARE(stored.size(), std::size_t(1));
        QCOMPARE(stored[0].status, std::string("proposed"));
        QCOMPARE(stored[0].condition.bound, std::string("memory"));
        QCOMPARE(stored[0].condition.op_class, std::string("elementwise"));
        QCOMPARE(stored[0].expert, std::string("llm:memory"));
        QVERIFY(stored[0].action.find("-> use an OpenMP SIMD loop") != std::string::npos);
        QCOMPARE(stored[0].provenance.candidate_ids, std::vector<std::string>{"17"});
        QVERIFY(kftest::user_prompt(s.requests().at(0)).find("1.400x faster") != std::string::npos);
        // JSON answers work too; an answer without one is no insight.
        HttpTestServer j({openai(R"({"condition": "rows fit in cache", "action": "one thread per row"})"), openai("No idea.")});
        auto je = ensemble(config(j));
        auto in2 = je->request_insight(req, nullptr, &why);
        QVERIFY(in2);
        QCOMPARE(in2->action, std::string("rows fit in cache -> one thread per row"));
        QVERIFY(!je->request_insight(req, nullptr, &why));
        QVERIFY(why.find("no insight") != std::string::npos);
    }

    /** What a stopped run had spent and learnt, added back on resume: budgets count it. */
    void accounting_and_bandit_restore() {
        Accounting before(Budgets{0, 0, 5});
        CallRecord r;
        r.expert = "llm:memory";
        r.model = "m1";
        r.usage = {1000, 200};
        r.cost = 0.5;
        std::string why;
        for (int i = 0; i < 3; ++i) {
            QVERIFY(before.begin_call(why));
            before.end_call(r);
        }
        Accounting after(Budgets{0, 0, 5});
        after.restore(before.to_json());
        QCOMPARE(after.totals().calls, std::int64_t(3));
        QCOMPARE(after.totals().input_tokens, std::int64_t(3000));
        QCOMPARE(after.totals().cost, 1.5);
        QCOMPARE(after.per_expert().at("llm:memory").calls, std::int64_t(3));
        QCOMPARE(after.per_model().at("m1").output_tokens, std::int64_t(600));
        QVERIFY(after.begin_call(why));
        after.end_call(r);
        QVERIFY(after.begin_call(why));
        after.end_call(r);
        QVERIFY(!after.begin_call(why));  // 3 before the stop + 2 after = the cap of 5
        QCOMPARE(why, std::string("LLM budget spent: 5 of 5 calls"));
        after.restore(json("not a record"));  // ignored
        QCOMPARE(after.totals().calls, std::int64_t(5));

        ModelBandit bandit;
        bandit.reward("m1", DiagnosisClass::Memory, 2.0);
        bandit.reward("m1", DiagnosisClass::Memory, 0.5);
        ModelBandit resumed;
        resumed.restore(bandit.to_json());
        QCOMPARE(resumed.stats("m1", DiagnosisClass::Memory).tries, 2);
        QCOMPARE(resumed.stats("m1", DiagnosisClass::Memory).improvements, 1);
        QCOMPARE(resumed.stats("m1", DiagnosisClass::Memory).reward_sum, bandit.stats("m1", DiagnosisClass::Memory).reward_sum);
        QVERIFY(resumed.to_json() == bandit.to_json());
    }

    void broken_template_is_reported_at_creation() {
        auto dir = kftest::temp_dir("llm-prompts");
        for (const auto& f : std::filesystem::directory_iterator(kftest::source_dir() / "resources" / "prompts"))
            if (f.is_regular_file()) std::filesystem::copy_file(f.path(), dir / f.path().filename());  // not kernelbench/
        kftest::write_file(dir / "memory.md", "{{> context}} {{no_such_value}}");
        HttpTestServer s({openai("x")});
        LlmConfig c = config(s);
        c.prompts_dir = dir;
        try {
            LlmEnsemble::create(c, {});
            QFAIL("no error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("memory.md: unknown placeholder {{no_such_value}}") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestLlmExperts)
#include "test_llm_experts.moc"
