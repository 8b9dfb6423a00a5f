#pragma once
/**
 * Chat completions over HTTP (libcurl): the OpenAI-compatible API (OpenAI, vLLM, Ollama,
 * llama.cpp server) and the Anthropic Messages API. Each provider limits its requests in
 * flight, bounds every attempt (connect, total, stall), retries 429 / 5xx / timeouts /
 * connection errors with exponential back-off and jitter (honouring Retry-After), and gives
 * up at once when cancelled. Its key is read from the environment and never appears in an
 * error message.
 */
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "kf/llm/config.h"

namespace kf::llm {

struct Usage {
    std::int64_t input_tokens = 0;   ///< prompt_tokens (OpenAI) / input_tokens (Anthropic)
    std::int64_t output_tokens = 0;  ///< completion_tokens / output_tokens
    std::int64_t total() const { return input_tokens + output_tokens; }
};

struct ChatRequest {
    std::string model;
    std::string system;
    std::string user;
    int max_tokens = 4096;
    double temperature = 0.7;
};

struct ChatResponse {
    bool ok = false;            ///< an answer arrived and was understood (its text may still be empty)
    std::string text;
    std::string finish_reason;  ///< as the endpoint says: stop, length, end_turn, max_tokens, ...
    bool truncated = false;     ///< stopped by the token limit
    Usage usage;
    std::string error;          ///< why not ok (redacted)
    int http_status = 0;        ///< of the last attempt
    int attempts = 0;
    bool cancelled = false;
    /**
     * False only when the request was abandoned before any byte of it left for the endpoint
     * (cancelled while waiting for a slot or while connecting): such a request is not a call.
     */
    bool sent = true;
    /** Not sent: an LLM budget is spent (`error` then says which, in the words of to_string(StopReason)). */
    bool budget_spent = false;
    double seconds = 0;
};

/** Returns true when the request should be abandoned (a run stopping). */
using CancelCheck = std::function<bool()>;

/** A counting semaphore: at most `count` holders at once. */
class Slots {
public:
    explicit Slots(int count) : free_(count) {}
    /** Waits for a slot; false (without one) when cancelled first. */
    bool acquire(const CancelCheck& cancelled);
    void release();
    int in_use_peak() const;

private:
    mutable std::mutex mu_;
    std::condition_variable cv_;
    int free_;
    int in_use_ = 0;
    int peak_ = 0;
};

class Provider {
public:
    virtual ~Provider() = default;
    virtual const std::string& name() const = 0;
    /** Thread-safe; never throws for network or protocol failures (they are in the response). */
    virtual ChatResponse complete(const ChatRequest& req, const CancelCheck& cancelled) = 0;
};

/** An OpenAI-compatible or Anthropic endpoint. */
class HttpProvider final : public Provider {
public:
    /**
     * The key is cfg.api_key when set, else read from cfg.api_key_env; throws ConfigError when
     * that variable is unset or empty.
     */
    explicit HttpProvider(ProviderConfig cfg);
    const std::string& name() const override { return cfg_.name; }
    ChatResponse complete(const ChatRequest& req, const CancelCheck& cancelled) override;
    const ProviderConfig& config() const { return cfg_; }
    /** Most requests that were in flight at once (for tests of the concurrency limit). */
    int peak_concurrency() const { return slots_.in_use_peak(); }

private:
    struct Attempt;
    Attempt attempt(const std::string& url, const std::string& body, const CancelCheck& cancelled) const;
    std::string redact(std::string text) const;

    ProviderConfig cfg_;
    std::string key_;
    Slots slots_;
};

/** The JSON body of a request for a provider kind (exposed for tests). */
std::string request_body(ProviderKind kind, const ChatRequest& req);
/** Reads an endpoint's JSON answer into `out` (text, finish reason, usage); false with out.error when malformed. */
bool parse_response(ProviderKind kind, const std::string& body, ChatResponse& out);
/** Seconds to wait from a Retry-After value (delta-seconds or an HTTP date); negative when unreadable. */
double retry_after_seconds(const std::string& value);
/** `text` with every occurrence of `secret` (when not empty) replaced by "[redacted]". */
std::string redact(std::string text, const std::string& secret);

}  // namespace kf::llm
