// The HTTP providers against a local server: OpenAI and Anthropic shapes, retries on 5xx,
// 429 with Retry-After, malformed and truncated answers, stalls, cancellation, the
// concurrency limit, and keys that never show in errors.
#include <QtTest>

#include <atomic>
#include <thread>

#include "http_test_server.h"
#include "kf/llm.h"
#include "testsupport.h"

using namespace kf;
using namespace kf::llm;
using kftest::HttpResponse;
using kftest::HttpTestServer;

namespace {

const char* kKey = "sk-test-SECRET-1234";

ProviderConfig provider(const HttpTestServer& s, ProviderKind kind = ProviderKind::OpenAI) {
    ProviderConfig p;
    p.name = "local";
    p.kind = kind;
    p.base_url = s.url("/v1");
    p.api_key_env = "KF_TEST_LLM_KEY";
    p.retries = 3;
    p.backoff_s = 0.05;
    p.max_backoff_s = 0.2;
    p.timeout_s = 20;
    p.stall_timeout_s = 20;
    return p;
}

ChatRequest request() {
    ChatRequest r;
    r.model = "test-model";
    r.system = "sys";
    r.user = "write a kernel";
    r.max_tokens = 100;
    return r;
}

HttpResponse ok(const std::string& body) {
    HttpResponse r;
    r.body = body;
    return r;
}

HttpResponse status(int code, const std::string& body = R"({"error":{"message":"busy","type":"server_error"}})") {
    HttpResponse r;
    r.status = code;
    r.body = body;
    return r;
}

}  // namespace

class TestLlmProviders : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        qputenv("KF_TEST_LLM_KEY", kKey);
        // The local server must be reached directly, whatever the environment says.
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) qunsetenv(v);
    }

    void openai_request_and_answer() {
        HttpTestServer s({ok(kftest::openai_answer("hello", "stop", 120, 30))});
        HttpProvider p(provider(s));
        ChatResponse r = p.complete(request(), {});
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.text, std::string("hello"));
        QCOMPARE(r.finish_reason, std::string("stop"));
        QCOMPARE(r.usage.input_tokens, std::int64_t(120));
        QCOMPARE(r.usage.output_tokens, std::int64_t(30));
        auto reqs = s.requests();
        QCOMPARE(reqs.size(), std::size_t(1));
        QCOMPARE(reqs[0].path, std::string("/v1/chat/completions"));
        QCOMPARE(reqs[0].headers["authorization"], std::string("Bearer ") + kKey);
        auto body = nlohmann::json::parse(reqs[0].body);
        QCOMPARE(body["model"].get<std::string>(), std::string("test-model"));
        QCOMPARE(body["messages"][0]["role"].get<std::string>(), std::string("system"));
        QCOMPARE(body["messages"][1]["content"].get<std::string>(), std::string("write a kernel"));
        QCOMPARE(body["max_tokens"].get<int>(), 100);
    }

    void anthropic_request_and_answer() {
        HttpTestServer s({ok(kftest::anthropic_answer("hi there", "end_turn", 200, 40))});
        HttpProvider p(provider(s, ProviderKind::Anthropic));
        ChatResponse r = p.complete(request(), {});
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.text, std::string("hi there"));
        QCOMPARE(r.usage.input_tokens, std::int64_t(200));
        QCOMPARE(r.usage.output_tokens, std::int64_t(40));
        auto reqs = s.requests();
        QCOMPARE(reqs[0].path, std::string("/v1/messages"));
        QCOMPARE(reqs[0].headers["x-api-key"], std::string(kKey));
        QVERIFY(!reqs[0].headers["anthropic-version"].empty());
        auto body = nlohmann::json::parse(reqs[0].body);
        QCOMPARE(body["system"].get<std::string>(), std::string("sys"));
        QCOMPARE(body["messages"][0]["role"].get<std::string>(), std::string("user"));
    }

    void truncation_by_token_limit_is_reported() {
        HttpTestServer s({ok(kftest::openai_answer("```cpp\nint", "length"))});
        ChatResponse r = HttpProvider(provider(s)).complete(request(), {});
        QVERIFY(r.ok);
        QVERIFY(r.truncated);
        HttpTestServer a({ok(kftest::anthropic_answer("```cpp\nint", "max_tokens"))});
        r = HttpProvider(provider(a, ProviderKind::Anthropic)).complete(request(), {});
        QVERIFY(r.truncated);
    }

    void server_errors_are_retried() {
        HttpTestServer s({status(500), status(502), ok(kftest::openai_answer("third time"))});
        ChatResponse r = HttpProvider(provider(s)).complete(request(), {});
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.text, std::string("third time"));
        QCOMPARE(r.attempts, 3);
        QCOMPARE(s.count(), 3);
        // Retries run out: the last error is reported with the number of attempts.
        HttpTestServer down({status(503)});
        ProviderConfig pc = provider(down);
        pc.retries = 1;
        r = HttpProvider(pc).complete(request(), {});
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("HTTP 503") == 0, r.error.c_str());
        QVERIFY2(r.error.find("after 2 attempts") != std::string::npos, r.error.c_str());
        // A client error is not retried.
        HttpTestServer bad({status(400, R"({"error":{"message":"bad model"}})")});
        r = HttpProvider(provider(bad)).complete(request(), {});
        QVERIFY(!r.ok);
        QCOMPARE(bad.count(), 1);
        QVERIFY2(r.error.find("bad model") != std::string::npos, r.error.c_str());
    }

    void too_many_requests_honours_retry_after() {
        HttpResponse limited = status(429, R"({"error":{"message":"rate limited"}})");
        limited.headers = {{"Retry-After", "1"}};
        HttpTestServer s({limited, ok(kftest::openai_answer("after the wait"))});
        auto t0 = std::chrono::steady_clock::now();
        ChatResponse r = HttpProvider(provider(s)).complete(request(), {});
        double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.attempts, 2);
        QVERIFY2(waited >= 0.95, std::to_string(waited).c_str());  // backoff alone would be 0.05 s
        QCOMPARE(retry_after_seconds(" 7 "), 7.0);
        QVERIFY(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0);
        QVERIFY(retry_after_seconds("soon") < 0);
    }

    void malformed_json_is_an_error() {
        HttpTestServer s({ok("{\"choices\": [ {\"message\": ")});
        ChatResponse r = HttpProvider(provider(s)).complete(request(), {});
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("malformed JSON") != std::string::npos, r.error.c_str());
        HttpTestServer e({ok(R"({"object":"list","data":[]})")});
        r = HttpProvider(provider(e)).complete(request(), {});
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("without choices") != std::string::npos, r.error.c_str());
    }

    void truncated_transfer_is_retried_then_reported() {
        HttpResponse cut = ok(kftest::openai_answer("this body is cut in the middle of its JSON"));
        cut.truncate = true;
        HttpTestServer s({cut, ok(kftest::openai_answer("whole"))});
        ChatResponse r = HttpProvider(provider(s)).complete(request(), {});
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.text, std::string("whole"));
        QCOMPARE(r.attempts, 2);
        HttpTestServer always({cut});
        ProviderConfig pc = provider(always);
        pc.retries = 0;
        r = HttpProvider(pc).complete(request(), {});
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("request failed") == 0, r.error.c_str());
    }

    void stalled_answer_times_out() {
        HttpResponse stalled = ok(kftest::openai_answer("slow"));
        stalled.stall_ms = 6000;
        HttpTestServer s({stalled});
        ProviderConfig pc = provider(s);
        pc.stall_timeout_s = 1;
        pc.timeout_s = 30;
        pc.retries = 0;
        auto t0 = std::chrono::steady_clock::now();
        ChatResponse r = HttpProvider(pc).complete(request(), {});
        double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("timed out") == 0, r.error.c_str());
        QVERIFY2(took < 5.5, std::to_string(took).c_str());
        // The total limit ends a response that never starts.
        HttpResponse late = ok(kftest::openai_answer("late"));
        late.delay_ms = 6000;
        HttpTestServer t({late});
        pc = provider(t);
        pc.timeout_s = 1;
        pc.retries = 0;
        r = HttpProvider(pc).complete(request(), {});
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("timed out") == 0, r.error.c_str());
    }

    void cancellation_stops_a_call_in_flight() {
        HttpResponse late = ok(kftest::openai_answer("late"));
        late.delay_ms = 8000;
        HttpTestServer s({late});
        std::atomic<bool> stop{false};
        bool in_flight = false;
        std::thread canceller([&] {
            // Cancelled once the server has the request and holds its answer back.
            in_flight = s.wait_for_requests(1, std::chrono::seconds(5));
            stop = true;
        });
        auto t0 = std::chrono::steady_clock::now();
        ChatResponse r = HttpProvider(provider(s)).complete(request(), [&] { return stop.load(); });
        double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        canceller.join();
        QVERIFY2(in_flight, "the request never reached the server");
        QVERIFY(r.cancelled);
        QCOMPARE(r.error, std::string("cancelled"));
        QVERIFY2(took < 4, std::to_string(took).c_str());
        // Cancelled while waiting out a back-off: no further attempt.
        HttpResponse limited = status(429);
        limited.headers = {{"Retry-After", "30"}};
        HttpTestServer l({limited});
        stop = false;
        bool limited_answered = false;
        std::thread c2([&] {
            // Cancelled once the 429 is answered: the client waits out its 30 s.
            limited_answered = l.wait_for_answers(1, std::chrono::seconds(5));
            stop = true;
        });
        r = HttpProvider(provider(l)).complete(request(), [&] { return stop.load(); });
        c2.join();
        QVERIFY2(limited_answered, "the server did not answer the first request");
        QVERIFY(r.cancelled);
        QCOMPARE(l.count(), 1);
    }

    void concurrency_is_limited_per_provider() {
        HttpResponse slow = ok(kftest::openai_answer("ok"));
        slow.delay_ms = 300;
        HttpTestServer s({slow});
        ProviderConfig pc = provider(s);
        pc.concurrency = 2;
        HttpProvider p(pc);
        std::vector<std::thread> ts;
        std::atomic<int> good{0};
        for (int i = 0; i < 6; ++i)
            ts.emplace_back([&] {
                if (p.complete(request(), {}).ok) ++good;
            });
        for (auto& t : ts) t.join();
        QCOMPARE(good.load(), 6);
        QCOMPARE(s.count(), 6);
        QCOMPARE(p.peak_concurrency(), 2);
    }

    void key_never_shows_in_errors() {
        // A server that echoes the request (with its Authorization header) in an error.
        HttpTestServer s([](const kftest::HttpRequest& req, int) {
            HttpResponse r;
            r.status = 401;
            r.body = nlohmann::json{{"error", {{"message", "invalid key " + req.headers.at("authorization")}}}}.dump();
            return r;
        });
        ChatResponse r = HttpProvider(provider(s)).complete(request(), {});
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("HTTP 401") == 0, r.error.c_str());
        QVERIFY2(r.error.find(kKey) == std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("[redacted]") != std::string::npos, r.error.c_str());
        QCOMPARE(redact("a sk-x b sk-x", "sk-x"), std::string("a [redacted] b [redacted]"));
    }

    void missing_key_variable_is_a_config_error() {
        HttpTestServer s({ok("{}")});
        ProviderConfig pc = provider(s);
        pc.api_key_env = "KF_TEST_LLM_KEY_NOT_SET";
        try {
            HttpProvider p(pc);
            QFAIL("no error");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("KF_TEST_LLM_KEY_NOT_SET is not set") != std::string::npos, e.what());
        }
        // A local server without a key.
        HttpTestServer open({ok(kftest::openai_answer("free"))});
        pc = provider(open);
        pc.api_key_env.clear();
        ChatResponse r = HttpProvider(pc).complete(request(), {});
        QVERIFY(r.ok);
        QVERIFY(open.requests()[0].headers.count("authorization") == 0);
    }

    void connection_refused_is_retried_then_reported() {
        int port;
        {
            HttpTestServer gone({ok("{}")});
            port = gone.port();
        }
        ProviderConfig pc;
        pc.name = "gone";
        pc.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
        pc.retries = 2;
        pc.backoff_s = 0.01;
        ChatResponse r = HttpProvider(pc).complete(request(), {});
        QVERIFY(!r.ok);
        QCOMPARE(r.attempts, 3);
        QVERIFY2(r.error.find("request failed") == 0, r.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLlmProviders)
#include "test_llm_providers.moc"
