#pragma once
// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) for tests of HTTP clients: each
// request is answered by a handler (or a script of responses, the last one repeating),
// on its own thread; every request is recorded, and tests may wait until a number of them
// were received or answered. Header-only, POSIX sockets.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kftest {

struct HttpRequest {
    std::string method, path, body;
    std::map<std::string, std::string> headers;  ///< names in lower case
    std::string raw;                              ///< the request as received (head and body)
};

struct HttpResponse {
    int status = 200;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    int delay_ms = 0;          ///< before anything is sent
    int stall_ms = 0;          ///< after the head and half the body, before the rest
    bool truncate = false;     ///< announce the full length, send half the body, close
    std::string content_type = "application/json";
};

class HttpTestServer {
public:
    using Handler = std::function<HttpResponse(const HttpRequest&, int index)>;

    explicit HttpTestServer(Handler handler) : handler_(std::move(handler)) { start(); }
    explicit HttpTestServer(std::vector<HttpResponse> script)
        : handler_([script](const HttpRequest&, int i) { return script[std::min<std::size_t>(i, script.size() - 1)]; }) {
        start();
    }
    ~HttpTestServer() { stop(); }
    HttpTestServer(const HttpTestServer&) = delete;
    HttpTestServer& operator=(const HttpTestServer&) = delete;

    int port() const { return port_; }
    std::string url(const std::string& path = "/v1") const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
    std::vector<HttpRequest> requests() const {
        std::lock_guard lock(mu_);
        return requests_;
    }
    int count() const {
        std::lock_guard lock(mu_);
        return static_cast<int>(requests_.size());
    }
    /** Requests answered: the answer sent (as far as scripted) and the connection closed. */
    int answered() const {
        std::lock_guard lock(mu_);
        return answered_;
    }
    /** Waits until `n` requests were received (count()); false if not within `deadline`. */
    bool wait_for_requests(int n, std::chrono::milliseconds deadline) const {
        std::unique_lock lock(mu_);
        return changed_.wait_for(lock, deadline, [&] { return static_cast<int>(requests_.size()) >= n; });
    }
    /** Waits until `n` requests were answered (answered()); false if not within `deadline`. */
    bool wait_for_answers(int n, std::chrono::milliseconds deadline) const {
        std::unique_lock lock(mu_);
        return changed_.wait_for(lock, deadline, [&] { return answered_ >= n; });
    }
    /** Most requests being answered at once. */
    int peak_concurrency() const { return peak_; }

    void stop() {
        {
            std::lock_guard lock(mu_);
            if (stopping_.exchange(true)) return;
        }
        changed_.notify_all();  // responses held back (delay_ms, stall_ms) are cut short
        if (accept_thread_.joinable()) accept_thread_.join();
        std::vector<std::thread> ts;
        {
            std::lock_guard lock(mu_);
            ts.swap(threads_);
        }
        for (auto& t : ts) t.join();
        if (fd_ >= 0) ::close(fd_);
    }

private:
    void start() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        ::listen(fd_, 64);
        socklen_t len = sizeof addr;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        accept_thread_ = std::thread([this] { accept_loop(); });
    }

    void accept_loop() {
        while (!stopping_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) continue;
            std::lock_guard lock(mu_);
            threads_.emplace_back([this, c] { serve(c); });
        }
    }

    /** Holds a response back for `ms`, the endpoint's scripted slowness; false when the
     *  server stops meanwhile. */
    bool hold_back(int ms) {
        std::unique_lock lock(mu_);
        return !changed_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_.load(); });
    }

    static bool send_all(int c, const std::string& s) {
        std::size_t off = 0;
        while (off < s.size()) {
            ssize_t n = ::send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
            if (n <= 0) return false;
            off += static_cast<std::size_t>(n);
        }
        return true;
    }

    void serve(int c) {
        HttpRequest req;
        std::string buf;
        char tmp[8192];
        std::size_t head_end = std::string::npos;
        std::size_t need = 0;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        bool continued = false;
        while (std::chrono::steady_clock::now() < deadline && !stopping_) {
            pollfd p{c, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
            if (n <= 0) break;
            buf.append(tmp, static_cast<std::size_t>(n));
            if (head_end == std::string::npos && (head_end = buf.find("\r\n\r\n")) != std::string::npos) {
                std::string head = buf.substr(0, head_end);
                std::size_t line_end = head.find("\r\n");
                std::string first = head.substr(0, line_end);
                req.method = first.substr(0, first.find(' '));
                req.path = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
                std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
                while (pos < head.size()) {
                    std::size_t e = head.find("\r\n", pos);
                    if (e == std::string::npos) e = head.size();
                    std::string line = head.substr(pos, e - pos);
                    auto colon = line.find(':');
                    if (colon != std::string::npos) {
                        std::string name = line.substr(0, colon);
                        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                        std::string value = line.substr(colon + 1);
                        while (!value.empty() && value.front() == ' ') value.erase(value.begin());
                        req.headers[name] = value;
                    }
                    pos = e + 2;
                }
                need = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
                if (!continued && req.headers.count("expect")) {
                    send_all(c, "HTTP/1.1 100 Continue\r\n\r\n");
                    continued = true;
                }
            }
            if (head_end != std::string::npos && buf.size() >= head_end + 4 + need) break;
        }
        if (head_end == std::string::npos) {
            ::close(c);
            return;
        }
        req.body = buf.substr(head_end + 4, need);
        req.raw = buf;
        int index;
        {
            std::lock_guard lock(mu_);
            index = static_cast<int>(requests_.size());
            requests_.push_back(req);
        }
        changed_.notify_all();
        int now = ++active_;
        for (int p = peak_; now > p && !peak_.compare_exchange_weak(p, now);) {
        }
        HttpResponse r = handler_(req, index);
        const bool answering = r.delay_ms == 0 || hold_back(r.delay_ms);
        if (answering) {
            std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + (r.status < 300 ? "OK" : "Error") + "\r\n";
            head += "Content-Type: " + r.content_type + "\r\nContent-Length: " + std::to_string(r.body.size()) +
                    "\r\nConnection: close\r\n";
            for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
            head += "\r\n";
            std::size_t half = r.body.size() / 2;
            if (r.truncate) {
                send_all(c, head + r.body.substr(0, half));
            } else if (r.stall_ms > 0) {
                if (send_all(c, head + r.body.substr(0, half)) && hold_back(r.stall_ms))
                    send_all(c, r.body.substr(half));
            } else {
                send_all(c, head + r.body);
            }
        }
        --active_;
        ::shutdown(c, SHUT_RDWR);
        ::close(c);
        if (answering) {
            {
                std::lock_guard lock(mu_);
                ++answered_;
            }
            changed_.notify_all();
        }
    }

    Handler handler_;
    int fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> active_{0};
    std::atomic<int> peak_{0};
    std::thread accept_thread_;
    mutable std::mutex mu_;
    /** Signalled when a request is received or answered, and when the server stops. */
    mutable std::condition_variable changed_;
    std::vector<std::thread> threads_;
    std::vector<HttpRequest> requests_;
    int answered_ = 0;
};

/** An OpenAI chat-completions answer. */
inline std::string openai_answer(const std::string& content, const std::string& finish = "stop", int in = 100, int out = 50) {
    std::string esc;
    for (char c : content) {
        switch (c) {
            case '"': esc += "\\\""; break;
            case '\\': esc += "\\\\"; break;
            case '\n': esc += "\\n"; break;
            case '\t': esc += "\\t"; break;
            case '\r': break;
            default: esc += c;
        }
    }
    return R"({"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":")" + esc +
           R"("},"finish_reason":")" + finish + R"("}],"usage":{"prompt_tokens":)" + std::to_string(in) +
           R"(,"completion_tokens":)" + std::to_string(out) + R"(,"total_tokens":)" + std::to_string(in + out) + "}}";
}

/** The text of the first user message of a chat request's JSON body; empty when there is none. */
inline std::string user_prompt(const HttpRequest& r) {
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_discarded() || !j.contains("messages")) return {};
    for (const auto& m : j["messages"])
        if (m.value("role", std::string()) == "user" && m.contains("content") && m["content"].is_string())
            return m["content"].get<std::string>();
    return {};
}

/** An Anthropic Messages answer. */
inline std::string anthropic_answer(const std::string& content, const std::string& stop = "end_turn", int in = 100, int out = 50) {
    std::string esc;
    for (char c : content) {
        switch (c) {
            case '"': esc += "\\\""; break;
            case '\\': esc += "\\\\"; break;
            case '\n': esc += "\\n"; break;
            case '\t': esc += "\\t"; break;
            case '\r': break;
            default: esc += c;
        }
    }
    return R"({"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":")" + esc +
           R"("}],"stop_reason":")" + stop + R"(","usage":{"input_tokens":)" + std::to_string(in) + R"(,"output_tokens":)" +
           std::to_string(out) + "}}";
}

}  // namespace kftest
