// The engine's end of the worker protocol: one child process, time limits, restarts.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "kf/evaluator.h"
#include "kf/process.h"
#include "kf/worker_protocol.h"

namespace kf {

using nlohmann::json;

std::string describe_worker_progress(const json& p) {
    if (!p.is_object()) return "start-up";
    std::string s = p.value("stage", "");
    if (p.contains("case")) s += " of case '" + p.value("case", "") + "'";
    if (p.contains("trial")) s += ", trial " + std::to_string(p.value("trial", 0) + 1);
    if (p.contains("what")) s += " (" + p.value("what", "") + ")";
    return s;
}

Stage worker_progress_stage(const json& p) {
    if (!p.is_object()) return Stage::Load;
    std::string stage = p.value("stage", "load");
    if (stage == "baseline") return Stage::Timing;  // the KernelBench worker timing its baselines
    try {
        return stage_from_string(stage);
    } catch (const Error&) {
        return Stage::Load;
    }
}

struct WorkerClient::Impl {
    std::recursive_mutex mutex;  ///< one request at a time, whichever thread asks
    LineProcess proc;
    long long next_id = 1;
    json hello;
};

WorkerClient::WorkerClient(WorkerConfig cfg) : impl_(std::make_unique<Impl>()), cfg_(std::move(cfg)) {
    if (cfg_.worker.empty()) cfg_.worker = executable_dir() / "kfoundry-worker";
}

WorkerClient::~WorkerClient() {
    if (impl_->proc.running()) {
        impl_->proc.write_line(json{{"cmd", to_string(WorkerCommand::Shutdown)}}.dump());
        impl_->proc.stop(std::chrono::milliseconds(2000));
    }
}

bool WorkerClient::ensure_started(std::string& error) {
    if (impl_->proc.running() && !impl_->proc.eof()) return true;
    if (impl_->proc.pid() > 0 || !impl_->hello.is_null()) ++restarts_;
    impl_->proc.kill();
    impl_->hello = nullptr;
    std::vector<std::string> argv = cfg_.command;
    if (argv.empty())
        argv = {cfg_.worker.string(), "--backend", std::string(to_string(cfg_.backend)), "--device", std::to_string(cfg_.device)};
    if (!impl_->proc.start(argv, cfg_.log.empty() ? std::filesystem::path("/dev/null") : cfg_.log)) {
        error = impl_->proc.error();
        return false;
    }
    // Device initialisation (CUDA context creation) can take seconds.
    std::string id = std::to_string(impl_->next_id++);
    impl_->proc.write_line(json{{"id", id}, {"cmd", to_string(WorkerCommand::Hello)}}.dump());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (auto line = impl_->proc.read_line(deadline)) {
        json j = json::parse(*line, nullptr, false);
        if (j.is_object() && j.value("id", json()) == id) {
            if (j.contains("progress")) {
                // A relay waiting for a cluster allocation (docs/cluster.md) holds the clock.
                if (j["progress"].is_object() && j["progress"].value("hold", false))
                    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
                continue;
            }
            if (!j.value("ok", false)) {
                error = j.value("error", "the worker refused to start");
                impl_->proc.kill();
                return false;
            }
            impl_->hello = j;
            return true;
        }
    }
    impl_->proc.kill();
    error = "the worker did not answer its hello (" +
            (impl_->proc.exit_description().empty() ? std::string("no reply") : impl_->proc.exit_description()) + ")";
    return false;
}

void WorkerClient::restart() {
    std::lock_guard<std::recursive_mutex> lock(impl_->mutex);
    impl_->proc.kill();
}

json WorkerClient::hello() {
    std::lock_guard<std::recursive_mutex> lock(impl_->mutex);
    std::string error;
    if (!ensure_started(error))
        throw Error("cannot start " + (cfg_.command.empty() ? cfg_.worker.string() : cfg_.command.front()) + ": " + error);
    return impl_->hello;
}

std::string WorkerClient::Reply::ran_on(bool local_worker) const {
    std::string where = ok && body.is_object() ? body.value("ran_on", std::string()) : std::string();
    if (where.empty() && last_progress.is_object()) where = last_progress.value("ran_on", std::string());
    if (where.empty() && local_worker) where = host_name();
    return where;
}

WorkerClient::Reply WorkerClient::request(json req, std::chrono::milliseconds timeout,
                                          const std::function<void(const json&)>& on_progress,
                                          const std::function<bool()>& cancelled) {
    std::lock_guard<std::recursive_mutex> lock(impl_->mutex);
    Reply reply;
    std::string error;
    if (!ensure_started(error)) {
        reply.crashed = true;
        reply.exit = error;
        return reply;
    }
    std::string id = std::to_string(impl_->next_id++);
    req["id"] = id;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!impl_->proc.write_line(req.dump())) {
        impl_->proc.kill();
        reply.crashed = true;
        reply.exit = impl_->proc.exit_description().empty() ? "the worker closed its input" : impl_->proc.exit_description();
        return reply;
    }
    for (;;) {
        // With a cancel check, wait in short slices and look at it between them.
        auto until = deadline;
        if (cancelled) until = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
        auto line = impl_->proc.read_line(until);
        if (!line) {
            if (impl_->proc.eof() || std::chrono::steady_clock::now() >= deadline) break;
            if (cancelled && cancelled()) {
                impl_->proc.kill();
                reply.cancelled = true;
                return reply;
            }
            continue;
        }
        json j = json::parse(*line, nullptr, false);
        if (!j.is_object() || j.value("id", json()) != id) continue;  // stray output
        if (j.contains("progress")) {
            if (j["progress"].is_object() && j["progress"].value("hold", false)) {
                // The request is waiting for a (re)started cluster job: its time limit starts again.
                deadline = std::chrono::steady_clock::now() + timeout;
                continue;
            }
            reply.last_progress = j["progress"];
            if (on_progress) on_progress(j["progress"]);
            continue;
        }
        reply.ok = true;
        reply.body = std::move(j);
        bool fatal = reply.body.value("fatal", false) ||
                     (reply.body.contains("result") && reply.body["result"].value("fatal", false));
        if (fatal) impl_->proc.stop(std::chrono::milliseconds(2000));  // it exits by itself; restart next time
        return reply;
    }
    if (impl_->proc.eof()) {
        impl_->proc.stop(std::chrono::milliseconds(500));
        reply.crashed = true;
        reply.exit = impl_->proc.exit_description().empty() ? "ended without a reply" : impl_->proc.exit_description();
    } else {
        reply.timed_out = true;
        impl_->proc.kill();
    }
    return reply;
}

}  // namespace kf
