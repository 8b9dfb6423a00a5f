// HTTP chat completions through libcurl: time limits, retries with back-off, Retry-After,
// a concurrency limit per provider, cancellation, and keys kept out of every message.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <thread>

#include "kf/llm/client.h"

namespace kf::llm {

using nlohmann::json;

bool Slots::acquire(const CancelCheck& cancelled) {
    std::unique_lock lock(mu_);
    while (free_ == 0) {
        if (cancelled && cancelled()) return false;
        cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    --free_;
    ++in_use_;
    peak_ = std::max(peak_, in_use_);
    return true;
}

void Slots::release() {
    {
        std::lock_guard lock(mu_);
        ++free_;
        --in_use_;
    }
    cv_.notify_one();
}

int Slots::in_use_peak() const {
    std::lock_guard lock(mu_);
    return peak_;
}

std::string redact(std::string text, const std::string& secret) {
    if (secret.empty()) return text;
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
        text.replace(at, secret.size(), "[redacted]");
    return text;
}

double retry_after_seconds(const std::string& value) {
    std::string v = value;
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
    if (v.empty()) return -1;
    if (std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; })) {
        char* end = nullptr;
        double s = std::strtod(v.c_str(), &end);
        return end && *end == '\0' ? s : -1;
    }
    // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
    std::tm tm{};
    if (!strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S", &tm)) return -1;
    std::time_t when = timegm(&tm);
    double delta = std::difftime(when, std::time(nullptr));
    return std::max(0.0, delta);
}

std::string request_body(ProviderKind kind, const ChatRequest& req) {
    json j;
    j["model"] = req.model;
    j["max_tokens"] = req.max_tokens;
    j["temperature"] = req.temperature;
    if (kind == ProviderKind::OpenAI) {
        j["messages"] = json::array();
        if (!req.system.empty()) j["messages"].push_back({{"role", "system"}, {"content", req.system}});
        j["messages"].push_back({{"role", "user"}, {"content", req.user}});
    } else {
        if (!req.system.empty()) j["system"] = req.system;
        j["messages"] = json::array({{{"role", "user"}, {"content", req.user}}});
    }
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

std::string shorten(const std::string& s, std::size_t n) {
    std::string out;
    for (char c : s) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    return out.size() > n ? out.substr(0, n) + "..." : out;
}

std::string error_text(const json& j) {
    if (!j.is_object() || !j.contains("error")) return {};
    const json& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object()) {
        std::string msg = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : e.dump();
        std::string type = e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "";
        return type.empty() ? msg : type + ": " + msg;
    }
    return e.dump();
}

std::int64_t int_field(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<std::int64_t>() : 0;
}

std::string text_of_content(const json& c) {
    if (c.is_string()) return c.get<std::string>();
    std::string out;
    if (c.is_array())
        for (const auto& part : c)
            if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
    return out;
}

}  // namespace

bool parse_response(ProviderKind kind, const std::string& body, ChatResponse& out) {
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        out.error = "malformed JSON answer (" + std::to_string(body.size()) + " bytes): " + shorten(body, 160);
        return false;
    }
    if (std::string e = error_text(j); !e.empty()) {
        out.error = "the endpoint reported an error: " + shorten(e, 300);
        return false;
    }
    if (kind == ProviderKind::OpenAI) {
        if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() || !j["choices"][0].is_object()) {
            out.error = "answer without choices: " + shorten(body, 160);
            return false;
        }
        const json& ch = j["choices"][0];
        const json msg = ch.contains("message") ? ch["message"] : json::object();
        out.text = msg.is_object() && msg.contains("content") ? text_of_content(msg["content"]) : "";
        out.finish_reason = ch.contains("finish_reason") && ch["finish_reason"].is_string() ? ch["finish_reason"].get<std::string>() : "";
        if (msg.is_object() && msg.contains("refusal") && msg["refusal"].is_string() && !msg["refusal"].get<std::string>().empty()) {
            out.finish_reason = "refusal";
            out.text = msg["refusal"].get<std::string>();
        }
        out.truncated = out.finish_reason == "length";
        if (j.contains("usage")) {
            out.usage.input_tokens = int_field(j["usage"], "prompt_tokens");
            out.usage.output_tokens = int_field(j["usage"], "completion_tokens");
        }
    } else {
        if (!j.contains("content") || !j["content"].is_array()) {
            out.error = "answer without content: " + shorten(body, 160);
            return false;
        }
        out.text = text_of_content(j["content"]);
        out.finish_reason = j.contains("stop_reason") && j["stop_reason"].is_string() ? j["stop_reason"].get<std::string>() : "";
        out.truncated = out.finish_reason == "max_tokens";
        if (j.contains("usage")) {
            const json& u = j["usage"];
            out.usage.input_tokens = int_field(u, "input_tokens") + int_field(u, "cache_creation_input_tokens") +
                                     int_field(u, "cache_read_input_tokens");
            out.usage.output_tokens = int_field(u, "output_tokens");
        }
    }
    return true;
}

struct HttpProvider::Attempt {
    CURLcode code = CURLE_OK;
    long status = 0;
    std::string body;
    std::string retry_after;
    std::string curl_error;
    bool cancelled = false;
    curl_off_t uploaded = 0;  ///< bytes of the request sent
};

namespace {

constexpr std::size_t kMaxBody = 16u << 20;

struct Transfer {
    const CancelCheck* cancelled = nullptr;
    bool was_cancelled = false;
    std::string* body = nullptr;
    std::string* retry_after = nullptr;
    double stall_s = 0;
    bool stalled = false;
    curl_off_t uploaded = 0;
    curl_off_t last_bytes = 0;
    std::chrono::steady_clock::time_point last_change = std::chrono::steady_clock::now();
};

int on_progress(void* p, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
    auto* t = static_cast<Transfer*>(p);
    t->uploaded = std::max(t->uploaded, ulnow);
    if (t->cancelled && *t->cancelled && (*t->cancelled)()) {
        t->was_cancelled = true;
        return 1;
    }
    // CURLOPT_LOW_SPEED_* averages over several seconds; once the answer has started, a
    // pause longer than the stall limit ends the attempt precisely.
    auto now = std::chrono::steady_clock::now();
    if (dlnow != t->last_bytes) {
        t->last_bytes = dlnow;
        t->last_change = now;
    } else if (dlnow > 0 && t->stall_s > 0 && std::chrono::duration<double>(now - t->last_change).count() > t->stall_s) {
        t->stalled = true;
        return 1;
    }
    return 0;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* p) {
    auto* t = static_cast<Transfer*>(p);
    if (t->body->size() + size * n > kMaxBody) return 0;
    t->body->append(data, size * n);
    return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* p) {
    auto* t = static_cast<Transfer*>(p);
    std::string line(data, size * n);
    const std::string name = "retry-after:";
    if (line.size() > name.size()) {
        std::string head = line.substr(0, name.size());
        std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (head == name) *t->retry_after = line.substr(name.size());
    }
    return size * n;
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool transient(CURLcode c) {
    switch (c) {
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR:
            return true;
        default:
            return false;
    }
}

/** Sleeps up to `seconds`, waking early when cancelled; false when cancelled. */
bool pause_for(double seconds, const CancelCheck& cancelled) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (cancelled && cancelled()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return !(cancelled && cancelled());
}

}  // namespace

HttpProvider::HttpProvider(ProviderConfig cfg) : cfg_(std::move(cfg)), slots_(cfg_.concurrency) {
    global_init();
    if (!cfg_.api_key.empty()) {
        key_ = cfg_.api_key;
    } else if (!cfg_.api_key_env.empty()) {
        const char* v = std::getenv(cfg_.api_key_env.c_str());
        if (!v || !*v)
            throw ConfigError("providers." + cfg_.name + ".api_key_env",
                              "the environment variable " + cfg_.api_key_env + " is not set");
        key_ = v;
    }
}

std::string HttpProvider::redact(std::string text) const { return llm::redact(std::move(text), key_); }

HttpProvider::Attempt HttpProvider::attempt(const std::string& url, const std::string& body, const CancelCheck& cancelled) const {
    Attempt a;
    CURL* curl = curl_easy_init();
    if (!curl) {
        a.code = CURLE_FAILED_INIT;
        return a;
    }
    Transfer t;
    t.cancelled = &cancelled;
    t.body = &a.body;
    t.retry_after = &a.retry_after;
    t.stall_s = cfg_.stall_timeout_s;
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    std::string auth;
    if (cfg_.kind == ProviderKind::OpenAI) {
        if (!key_.empty()) auth = "Authorization: Bearer " + key_;
    } else {
        if (!key_.empty()) auth = "x-api-key: " + key_;
        headers = curl_slist_append(headers, ("anthropic-version: " + cfg_.anthropic_version).c_str());
    }
    if (!auth.empty()) headers = curl_slist_append(headers, auth.c_str());
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kernel-foundry");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(cfg_.connect_timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(cfg_.timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(std::ceil(cfg_.stall_timeout_s))));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    a.code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.status);
    a.curl_error = errbuf;
    a.cancelled = t.was_cancelled;
    a.uploaded = t.uploaded;
    if (t.stalled) a.code = CURLE_OPERATION_TIMEDOUT;
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    // Wipe the copy of the key in the header text.
    std::fill(auth.begin(), auth.end(), '\0');
    return a;
}

ChatResponse HttpProvider::complete(const ChatRequest& req, const CancelCheck& cancelled) {
    const auto t0 = std::chrono::steady_clock::now();
    ChatResponse out;
    auto finish = [&]() -> ChatResponse {
        out.error = redact(out.error);
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
    };
    if ((cancelled && cancelled()) || !slots_.acquire(cancelled)) {
        out.cancelled = true;
        out.sent = false;
        out.error = "cancelled";
        return finish();
    }
    struct Release {
        Slots& s;
        ~Release() { s.release(); }
    } release{slots_};
    const std::string url = cfg_.base_url + (cfg_.kind == ProviderKind::OpenAI ? "/chat/completions" : "/messages");
    const std::string body = request_body(cfg_.kind, req);
    thread_local std::mt19937_64 rng{std::random_device{}()};
    for (int k = 0; k <= cfg_.retries; ++k) {
        out.attempts = k + 1;
        Attempt a = attempt(url, body, cancelled);
        out.http_status = static_cast<int>(a.status);
        if (a.cancelled) {
            out.cancelled = true;
            out.sent = k > 0 || a.uploaded > 0 || a.status != 0;
            out.error = "cancelled";
            return finish();
        }
        bool retry = false;
        double wait = -1;
        if (a.code != CURLE_OK) {
            retry = transient(a.code);
            if (a.code == CURLE_OPERATION_TIMEDOUT) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "timed out (limits: connect %.0f s, no data for %.0f s, %.0f s in all)",
                              cfg_.connect_timeout_s, cfg_.stall_timeout_s, cfg_.timeout_s);
                out.error = buf;
            } else {
                out.error = std::string("request failed: ") + curl_easy_strerror(a.code) +
                            (a.curl_error.empty() ? "" : " (" + a.curl_error + ")");
            }
        } else if (a.status >= 200 && a.status < 300) {
            out.error.clear();
            out.ok = parse_response(cfg_.kind, a.body, out);
            return finish();
        } else {
            json j = json::parse(a.body, nullptr, false);
            std::string detail = j.is_discarded() ? shorten(a.body, 200) : shorten(error_text(j).empty() ? a.body : error_text(j), 200);
            out.error = "HTTP " + std::to_string(a.status) + (detail.empty() ? "" : ": " + detail);
            if (a.status == 429) {
                retry = true;
                wait = retry_after_seconds(a.retry_after);
            } else if (a.status >= 500 || a.status == 408) {
                retry = true;
            }
        }
        if (!retry || k == cfg_.retries) break;
        if (wait < 0) {
            double base = std::min(cfg_.max_backoff_s, cfg_.backoff_s * std::pow(2.0, k));
            wait = base * std::uniform_real_distribution<double>(0.5, 1.5)(rng);
        }
        wait = std::min(wait, 300.0);
        if (!pause_for(wait, cancelled)) {
            out.cancelled = true;
            out.error = "cancelled";
            return finish();
        }
    }
    if (out.attempts > 1) out.error += " (after " + std::to_string(out.attempts) + " attempts)";
    return finish();
}

}  // namespace kf::llm
