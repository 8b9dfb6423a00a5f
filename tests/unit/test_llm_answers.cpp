// LLM experts without a network: answer parsing, SEARCH/REPLACE edits, the static screen,
// prompt templates, diagnosis rendering, configuration errors, accounting and the bandit.
#include <QtTest>

#include "kf/llm.h"
#include "testsupport.h"

using namespace kf;
using namespace kf::llm;
using nlohmann::json;

namespace {

const char* kParent = R"(#include "kf_task.h"

extern "C" void kf_solve(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
)";

json minimal_config() {
    // (URLs are set outside the raw string literals: moc reads "//" in them as a comment.)
    json j = json::parse(R"({
      "providers": [{"name": "local", "kind": "openai", "base_url": ""}],
      "models": [{"name": "m1", "provider": "local"}]
    })");
    j["providers"][0]["base_url"] = "http://127.0.0.1:8000/v1";
    return j;
}

std::string config_error(const json& j) {
    try {
        parse_llm_config(j);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

class TestLlmAnswers : public QObject {
    Q_OBJECT

private slots:
    void full_source_from_fenced_block() {
        std::string text = "I vectorised the loop.\n\n```cpp\n#include \"kf_task.h\"\nextern \"C\" void kf_solve(const float* x, float* y, int n) {}\n```\nDone.";
        ParsedAnswer a = parse_answer(text, kParent);
        QVERIFY2(a.ok, a.error.c_str());
        QCOMPARE(a.form, std::string("full"));
        QVERIFY(a.source.find("kf_solve") != std::string::npos);
        QVERIFY(a.source.find("```") == std::string::npos);
        QCOMPARE(a.rationale, std::string("I vectorised the loop. Done."));
        // cuda and bare fences; the block with kf_solve wins over a helper snippet.
        std::string two = "```\nint helper;\n```\n```cuda\n#include \"kf_task.h\"\nextern \"C\" void kf_solve() {}\n```\n";
        a = parse_answer(two, kParent);
        QVERIFY(a.ok);
        QVERIFY(a.source.find("helper") == std::string::npos);
    }

    void search_replace_edits() {
        std::string text = "Unrolled.\n<<<<<<< SEARCH\n    for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;\n=======\n"
                           "#pragma omp parallel for\n    for (int i = 0; i < n; ++i) y[i] = x[i] + x[i];\n>>>>>>> REPLACE\n";
        ParsedAnswer a = parse_answer(text, kParent);
        QVERIFY2(a.ok, a.error.c_str());
        QCOMPARE(a.form, std::string("diff"));
        QVERIFY(a.source.find("x[i] + x[i]") != std::string::npos);
        QVERIFY(a.source.find("* 2.0f") == std::string::npos);
        QVERIFY(a.source.find("extern \"C\"") != std::string::npos);
        QCOMPARE(a.rationale, std::string("Unrolled."));
        // Trailing white space differences still match, line by line.
        auto edits = edit_blocks("<<<<<<< SEARCH\nextern \"C\" void kf_solve(const float* x, float* y, int n) {   \n=======\n"
                                 "extern \"C\" void kf_solve(const float* __restrict x, float* y, int n) {\n>>>>>>> REPLACE\n");
        QCOMPARE(edits.size(), std::size_t(1));
        QVERIFY(apply_edits(kParent, edits).find("__restrict") != std::string::npos);
    }

    void edit_that_does_not_match_is_an_error() {
        std::string text = "<<<<<<< SEARCH\n    y[i] = nothing_like_this;\n=======\n    y[i] = 0;\n>>>>>>> REPLACE\n";
        ParsedAnswer a = parse_answer(text, kParent);
        QVERIFY(!a.ok);
        QVERIFY2(a.error.find("SEARCH block 1 does not match") != std::string::npos, a.error.c_str());
        a = parse_answer("<<<<<<< SEARCH\n    for\n=======\n", kParent);
        QVERIFY(!a.ok);
        QVERIFY2(a.error.find("not terminated") != std::string::npos, a.error.c_str());
    }

    void unusable_answers_have_reasons() {
        QCOMPARE(parse_answer("   \n", kParent).error, std::string("empty answer"));
        QVERIFY(parse_answer("I cannot help with that.", kParent).error.find("no code in the answer") == 0);
        QVERIFY(parse_answer("```cpp\n#include \"kf_task.h\"\nextern \"C\" void kf_so", kParent).error.find("unterminated") != std::string::npos);
        QVERIFY(parse_answer("```cpp\nint main() {}\n```", kParent).error.find("kf_solve") != std::string::npos);
    }

    void rationale_is_short() {
        std::string text(2000, 'a');
        QVERIFY(rationale_of(text).size() <= 403);
    }

    void screen_catches_cheats() {
        Rules rules;
        auto has = [](const std::vector<std::string>& v, const char* what) {
            for (const auto& s : v)
                if (s.find(what) != std::string::npos) return true;
            return false;
        };
        auto f = screen_source("#include <cublas_v2.h>\nvoid f(){ cublasSgemm(h, 0); }", rules);
        QVERIFY(has(f, "cuBLAS"));
        f = screen_source("void f(){ cudaStream_t s; cudaStreamCreate(&s); }", rules);
        QVERIFY(has(f, "creates a stream"));
        f = screen_source("void f(){ std::thread t([]{}); t.join(); }", rules);
        QVERIFY(has(f, "starts a thread"));
        f = screen_source("void f(){ pthread_create(0,0,0,0); system(\"ls\"); void* h = dlopen(\"x\", 0); }", rules);
        QVERIFY(has(f, "starts a thread"));
        QVERIFY(has(f, "starts a process"));
        QVERIFY(has(f, "loads code"));
        f = screen_source("static std::unordered_map<const float*, float> memo;\n", rules);
        QVERIFY(has(f, "keyed by pointer"));
        f = screen_source("static const float* last_x = nullptr;\n", rules);
        QVERIFY(has(f, "static pointer"));
        // Comments and allowed libraries pass; an ordinary kernel passes.
        QVERIFY(screen_source("// never call cublasSgemm or std::thread here\n/* cudaStreamCreate */\n", rules).empty());
        QVERIFY(screen_source(kParent, rules).empty());
        Rules allow;
        allow.allowed_libraries = {"cublas"};
        QVERIFY(screen_source("void f(){ cublasSgemm(h, 0); }", allow).empty());
    }

    void templates_render() {
        TemplateValues v = {{"a", "A"}, {"empty", ""}, {"full", "yes"}};
        QCOMPARE(render_template("x {{a}} {{ a }}", v), std::string("x A A"));
        QCOMPARE(render_template("[{{#empty}}hidden {{a}}{{/empty}}][{{#full}}shown {{a}}{{/full}}]", v), std::string("[][shown A]"));
        auto load = [](const std::string& name) -> std::string {
            if (name == "inc") return "<{{a}}>";
            if (name == "loop") return "{{> loop}}";
            throw Error("no template " + name);
        };
        QCOMPARE(render_template("a{{> inc}}b", v, load), std::string("a<A>b"));
        QVERIFY_THROWS_EXCEPTION(Error, render_template("{{unknown}}", v));
        QVERIFY_THROWS_EXCEPTION(Error, render_template("{{#full}}no end", v));
        QVERIFY_THROWS_EXCEPTION(Error, render_template("{{> loop}}", v, load));
    }

    void bundled_prompts_state_the_rules() {
        PromptTemplates t(kftest::source_dir() / "resources" / "prompts");
        TemplateValues v;
        for (const char* k : {"role", "role_title", "task_name", "task_title", "task_description", "op_class", "backend", "language",
                              "fence", "header", "sizes", "allowed_libraries", "tf32", "parent_id", "parent_status", "parent_fitness",
                              "parent_family", "parent_tunables", "parent_source", "diagnosis_class", "diagnosis", "library_notes",
                              "inspirations"})
            v[k] = std::string("<") + k + ">";
        QCOMPARE(role_ids().size(), std::size_t(7));
        for (const auto& id : role_ids()) {
            std::string p = t.render(id, v);
            QVERIFY2(p.find("## Rules") != std::string::npos, id.c_str());
            QVERIFY2(p.find("cudaStreamCreate") != std::string::npos, id.c_str());
            QVERIFY2(p.find("<parent_source>") != std::string::npos, id.c_str());
            QVERIFY2(p.find("<diagnosis>") != std::string::npos, id.c_str());
            QVERIFY2(p.find("<header>") != std::string::npos, id.c_str());
            QVERIFY2(p.find("<inspirations>") != std::string::npos, id.c_str());
            QVERIFY2(p.find("<library_notes>") != std::string::npos, id.c_str());
            QVERIFY2(p.find("SEARCH") != std::string::npos, id.c_str());
        }
    }

    void diagnosis_rendering() {
        Diagnosis d;
        d.status = Status::CompileError;
        d.stage = Stage::Compile;
        d.message = "does not compile";
        Diagnostic g;
        g.line = 4;
        g.column = 42;
        g.message = "'z' was not declared in this scope";
        d.compile.diagnostics.push_back(g);
        std::string r = render_diagnosis(json(d), kParent);
        QVERIFY2(r.find("line 4:42: error: 'z' was not declared") != std::string::npos, r.c_str());
        QVERIFY2(r.find("4 |     for (int i = 0; i < n; ++i)") != std::string::npos, r.c_str());

        Diagnosis w;
        w.status = Status::Incorrect;
        w.stage = Stage::Correctness;
        Correctness c;
        CaseCorrectness k;
        k.name = "odd";
        k.trials = 2;
        k.mismatches = 3;
        k.elements = 1000003;
        k.unwritten = 3;
        k.first_mismatch_tensor = "y";
        k.first_mismatch_index = 1000000;
        k.first_expected = 1.5;
        k.first_actual = -1;
        c.cases.push_back(k);
        w.correctness = c;
        w.profile = {{"sm__warps_active.avg.pct_of_peak_sustained_active", 31.5}};
        w.integrity.push_back({"inputs_unmodified", "fail", "x changed"});
        r = render_diagnosis(json(w), kParent);
        QVERIFY2(r.find("case odd: 0/2 trials passed, 3 of 1000003 elements wrong") != std::string::npos, r.c_str());
        QVERIFY2(r.find("unwritten 3") != std::string::npos, r.c_str());
        QVERIFY2(r.find("first mismatch y[1000000]: expected 1.5, got -1") != std::string::npos, r.c_str());
        QVERIFY2(r.find("sm__warps_active.avg.pct_of_peak_sustained_active = 31.5") != std::string::npos, r.c_str());
        QVERIFY2(r.find("integrity check FAILED: inputs_unmodified") != std::string::npos, r.c_str());
        QCOMPARE(render_diagnosis(json(), kParent), std::string());
    }

    void config_reads_a_full_file() {
        json j = json::parse(R"({
          "providers": [
            {"name": "openai", "kind": "openai", "base_url": "", "api_key_env": "OPENAI_API_KEY",
             "concurrency": 2, "timeout_s": 60, "retries": 2, "prices": {"gpt-4o": {"input": 2.5, "output": 10}}},
            {"name": "claude", "kind": "anthropic", "base_url": "", "api_key_env": "ANTHROPIC_API_KEY"}
          ],
          "models": [{"name": "gpt-4o", "provider": "openai", "weight": 2}, {"name": "claude-sonnet-4", "provider": "claude"}],
          "roles": {"memory": {"models": ["gpt-4o"], "max_tokens": 2000, "temperature": 0.2}, "compile": true, "fusion": false},
          "budgets": {"max_tokens": 100000, "max_cost": 5, "max_calls": 50}
        })");
        j["providers"][0]["base_url"] = "https://api.openai.com/v1/";
        j["providers"][1]["base_url"] = "https://api.anthropic.com/v1";
        LlmConfig c = parse_llm_config(j);
        QCOMPARE(c.providers.size(), std::size_t(2));
        QCOMPARE(c.providers[0].base_url, std::string("https://api.openai.com/v1"));
        QCOMPARE(c.providers[1].kind, ProviderKind::Anthropic);
        QCOMPARE(c.providers[0].prices.at("gpt-4o").output_per_mtok, 10.0);
        QCOMPARE(c.roles.size(), std::size_t(3));
        QVERIFY(!c.roles.at("fusion").enabled);
        QCOMPARE(c.roles.at("memory").models, std::vector<std::string>{"gpt-4o"});
        QCOMPARE(c.budgets.max_calls, std::int64_t(50));
        // Without "roles", every role is on.
        QCOMPARE(parse_llm_config(minimal_config()).roles.size(), std::size_t(7));
    }

    void config_errors_name_the_field() {
        json j = minimal_config();
        j["providers"][0]["timout_s"] = 3;
        QVERIFY2(config_error(j).find("providers[0].timout_s: unknown key") == 0, config_error(j).c_str());
        j = minimal_config();
        j["models"][0]["provider"] = "nowhere";
        QVERIFY2(config_error(j).find("models[0].provider: no provider named 'nowhere'") == 0, config_error(j).c_str());
        j = minimal_config();
        j["providers"][0]["base_url"] = "localhost:8000";
        QVERIFY2(config_error(j).find("providers[0].base_url:") == 0, config_error(j).c_str());
        j = minimal_config();
        j["budgets"] = {{"max_cost", -1}};
        QVERIFY2(config_error(j).find("budgets.max_cost:") == 0, config_error(j).c_str());
        j = minimal_config();
        j["roles"] = {{"poetry", true}};
        QVERIFY2(config_error(j).find("roles.poetry: unknown role") == 0, config_error(j).c_str());
        j = minimal_config();
        j["providers"][0]["kind"] = "gemini";
        QVERIFY2(config_error(j).find("providers[0].kind:") == 0, config_error(j).c_str());
        j = minimal_config();
        j["providers"][0]["api_key_env"] = "sk-abc-123";
        QVERIFY2(config_error(j).find("providers[0].api_key_env:") == 0, config_error(j).c_str());
        j = minimal_config();
        j["roles"] = json::parse(R"({"memory": {"models": ["m9"]}})");
        QVERIFY2(config_error(j).find("roles.memory.models[0]:") == 0, config_error(j).c_str());
        j = minimal_config();
        j.erase("models");
        QVERIFY2(config_error(j).find("models:") == 0, config_error(j).c_str());
        j = minimal_config();
        j["extra"] = 1;
        QVERIFY2(config_error(j).find("extra: unknown key") == 0, config_error(j).c_str());
    }

    void accounting_and_budgets() {
        Budgets b;
        b.max_tokens = 1000;
        Accounting acc(b);
        std::string why;
        QVERIFY(acc.begin_call(why));
        CallRecord r;
        r.expert = "llm:memory";
        r.model = "m1";
        r.usage = {600, 200};
        r.cost = cost_of(r.usage, {2.5, 10});
        QCOMPARE(r.cost, (600 * 2.5 + 200 * 10) / 1e6);
        acc.end_call(r);
        QVERIFY(!acc.spent());
        QVERIFY(acc.begin_call(why));
        r.expert = "llm:compile";
        acc.end_call(r);
        QVERIFY(acc.spent(&why));
        QCOMPARE(why, std::string("LLM budget spent: 1600 of 1000 tokens"));
        QVERIFY(!acc.begin_call(why));
        QCOMPARE(acc.totals().calls, std::int64_t(2));
        QCOMPARE(acc.per_expert().at("llm:memory").tokens(), std::int64_t(800));
        QCOMPARE(acc.per_model().at("m1").calls, std::int64_t(2));
        QCOMPARE(acc.to_json()["totals"]["input_tokens"].get<int>(), 1200);

        Budgets calls;
        calls.max_calls = 2;
        Accounting c(calls);
        QVERIFY(c.begin_call(why));
        QVERIFY(c.begin_call(why));
        QVERIFY(!c.begin_call(why));  // in flight counts toward the cap
        QCOMPARE(why, std::string("LLM budget spent: 2 of 2 calls"));
        Budgets money;
        money.max_cost = 0.001;
        Accounting m(money);
        QVERIFY(m.begin_call(why));
        r.cost = 0.002;
        m.end_call(r);
        QVERIFY(m.spent(&why));
        QVERIFY2(why.find("cost") != std::string::npos, why.c_str());
    }

    void bandit_learns_per_class() {
        ModelBandit b(0.3);
        std::vector<std::pair<std::string, double>> models = {{"a", 1}, {"b", 1}};
        for (int i = 0; i < 6; ++i) {
            b.reward("a", DiagnosisClass::Memory, 0.5);
            b.reward("b", DiagnosisClass::Memory, 2.0);
            b.reward("a", DiagnosisClass::Compute, 2.0);
            b.reward("b", DiagnosisClass::Compute, 0.0);
        }
        QCOMPARE(b.choose(DiagnosisClass::Memory, models), std::string("b"));
        QCOMPARE(b.choose(DiagnosisClass::Compute, models), std::string("a"));
        QCOMPARE(b.stats("b", DiagnosisClass::Memory).improvements, 6);
        // Weights are priors: with no evidence the heavier model wins.
        QCOMPARE(b.choose(DiagnosisClass::Latency, {{"a", 1}, {"b", 3}}), std::string("b"));
        QCOMPARE(model_of_rationale("[qwen2.5:32b] vectorised"), std::string("qwen2.5:32b"));
        QCOMPARE(model_of_rationale("no model"), std::string());
    }

    void role_priors_route_by_class() {
        QCOMPARE(role_specs().size(), std::size_t(7));
        auto best_for = [](const std::string& word) {
            const DiagnosisClass cls = diagnosis_class_from_string(word);
            std::string best;
            double w = -1;
            for (const auto& r : role_specs())
                if (r.priors.at(cls) > w) w = r.priors.at(cls), best = r.id;
            return best;
        };
        QCOMPARE(best_for("compile_error"), std::string("compile"));
        QCOMPARE(best_for("incorrect"), std::string("numerics"));
        QCOMPARE(best_for("memory"), std::string("memory"));
        QCOMPARE(best_for("compute"), std::string("compute"));
        QCOMPARE(best_for("occupancy"), std::string("occupancy"));
        QCOMPARE(best_for("spills"), std::string("occupancy"));
        std::string latency = best_for("latency");
        QVERIFY(latency == "warp" || latency == "fusion");
    }
};

QTEST_GUILESS_MAIN(TestLlmAnswers)
#include "test_llm_answers.moc"
