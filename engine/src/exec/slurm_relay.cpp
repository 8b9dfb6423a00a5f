// `kfoundry slurm-relay`: the engine's end of a worker that runs as a Slurm job.
//
// The engine starts the relay as if it were the worker and speaks the worker protocol on its
// stdin/stdout. The relay submits a job (sbatch) whose agent connects back over TCP, proves
// itself with a token read from a file only the user can read, and bridges the worker it
// starts. Requests the engine sends before the job runs wait in the relay, which sends
// "hold" progress lines meanwhile so that the engine's time limits start when the job does.
// A job that ends without its worker saying so (scancel, pre-emption, a node failure, the
// time limit) is a lost job: the relay resubmits it and sends the requests in flight again.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>

#include "kf/exec.h"
#include "kf/process.h"
#include "kf/worker_protocol.h"
#include "line_channel.h"
#include "slurm_jobs.h"

namespace kf {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_terminate{false};
void on_terminate(int) {
    g_terminate = true;
}

void log(const std::string& message) {
    std::cerr << "kfoundry slurm-relay: " << message << std::endl;
}

class Relay {
public:
    Relay(SlurmOptions opt, std::vector<std::string> worker, std::string kfoundry)
        : opt_(std::move(opt)), worker_(std::move(worker)), kfoundry_(std::move(kfoundry)) {}

    int run() {
        std::error_code ec;
        std::filesystem::create_directories(opt_.spool_dir, ec);
        listen_fd_ = exec::listen_any(port_);
        token_ = exec::random_token();
        std::string error;
        if (listen_fd_ < 0)
            failed_ = "cannot listen for the job's connection";
        else if (!submit(error))
            failed_ = error;
        if (!failed_.empty()) log(failed_);
        exec::LineReader engine(STDIN_FILENO);
        for (;;) {
            if (g_terminate) return finish();
            pollfd fds[3];
            nfds_t n = 0;
            int engine_at = -1, listen_at = -1, agent_at = -1;
            fds[n] = {STDIN_FILENO, POLLIN, 0};
            engine_at = static_cast<int>(n++);
            if (agent_fd_ < 0 && listen_fd_ >= 0) {
                fds[n] = {listen_fd_, POLLIN, 0};
                listen_at = static_cast<int>(n++);
            }
            if (agent_fd_ >= 0) {
                fds[n] = {agent_fd_, POLLIN, 0};
                agent_at = static_cast<int>(n++);
            }
            int rc = ::poll(fds, n, 1000);
            if (rc > 0 && fds[engine_at].revents) {
                bool open = engine.fill();
                while (auto line = engine.next()) on_engine_line(*line);
                if (!open) return finish();
            }
            if (rc > 0 && listen_at >= 0 && fds[listen_at].revents) accept_agent();
            if (rc > 0 && agent_at >= 0 && fds[agent_at].revents) {
                bool open = agent_.fill();
                while (auto line = agent_.next()) on_agent_line(*line);
                if (!open && agent_closed()) return exit_code_;
            }
            if (done_) return exit_code_;
            watch_job();
        }
    }

private:
    /** Writes the job's script and connection file, and submits it. */
    bool submit(std::string& error) {
        remove_files();
        ++submissions_;
        const std::string stem = "kf-relay-" + std::to_string(::getpid()) + "-" + std::to_string(submissions_);
        connect_file_ = opt_.spool_dir / (stem + ".json");
        script_file_ = opt_.spool_dir / (stem + ".sh");
        std::vector<std::string> addresses;
        if (!opt_.connect_host.empty())
            addresses.push_back(opt_.connect_host);
        else {
            addresses.push_back(host_name());
            for (const auto& a : exec::local_addresses()) addresses.push_back(a);
            addresses.push_back("127.0.0.1");
        }
        json connect = {{"addresses", addresses}, {"port", port_}, {"token", token_}, {"worker", worker_}};
        {
            // Readable by the user alone: the token is what lets a job speak for the worker.
            int fd = ::open(connect_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (fd < 0 || !exec::write_line(fd, connect.dump())) {
                if (fd >= 0) ::close(fd);
                error = "cannot write " + connect_file_.string();
                return false;
            }
            ::close(fd);
        }
        {
            std::ofstream script(script_file_);
            script << "#!/bin/sh\n# A Kernel Foundry evaluation worker (docs/cluster.md).\nexec "
                   << exec::shell_quote(kfoundry_) << " slurm-agent " << exec::shell_quote(connect_file_.string())
                   << "\n";
            if (!script) {
                error = "cannot write " + script_file_.string();
                return false;
            }
        }
        ::chmod(script_file_.c_str(), 0700);
        exec::Submission s = exec::submit_job(opt_, script_file_, "kf-worker");
        if (s.job.empty()) {
            error = "sbatch refused the worker job: " + s.error;
            return false;
        }
        job_ = s.job;
        job_state_ = "PENDING";
        last_check_ = Clock::now();
        log("submitted job " + job_);
        return true;
    }

    void remove_files() {
        std::error_code ec;
        if (!connect_file_.empty()) std::filesystem::remove(connect_file_, ec);
        if (!script_file_.empty()) std::filesystem::remove(script_file_, ec);
    }

    void emit(const json& j) {
        if (!exec::write_line(STDOUT_FILENO, j.dump())) {
            // The engine is gone: nothing to serve any more.
            g_terminate = true;
        }
    }

    void hold_all(const std::string& what) {
        for (const auto& r : in_flight_)
            emit({{"id", r.id}, {"progress", {{"stage", "queued"}, {"what", what}, {"hold", true}}}});
        last_hold_ = Clock::now();
    }

    void fail_all(const std::string& error) {
        for (const auto& r : in_flight_) emit({{"id", r.id}, {"ok", false}, {"error", error}});
        in_flight_.clear();
    }

    void on_engine_line(const std::string& line) {
        json j = json::parse(line, nullptr, false);
        if (!j.is_object()) return;
        const json id = j.value("id", json());
        const bool shutdown = parse_worker_command(j.value("cmd", "")) == WorkerCommand::Shutdown;
        if (shutdown) shutting_down_ = true;
        if (!failed_.empty()) {
            emit({{"id", id}, {"ok", shutdown}, {"error", failed_}});
            if (shutdown) done_ = true;
            return;
        }
        in_flight_.push_back({id, line});
        if (agent_fd_ >= 0) {
            exec::write_line(agent_fd_, line);  // a broken connection shows as end of stream
            if (!shutdown) emit({{"id", id}, {"progress", where()}});
        } else if (!shutdown) {
            emit({{"id", id},
                  {"progress",
                   {{"stage", "queued"},
                    {"what", "waiting for Slurm job " + job_ + " (" + job_state_ + ")"},
                    {"hold", true}}}});
        }
    }

    /** The progress line that tells the engine where a request runs. */
    json where() const {
        return {{"stage", "load"}, {"what", "Slurm job " + job_ + " on " + job_host_}, {"ran_on", ran_on_}};
    }

    void accept_agent() {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) return;
        exec::LineReader reader(fd);
        std::optional<std::string> hello;
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        while (!hello && Clock::now() < deadline) {
            if (!exec::wait_readable(fd, std::chrono::milliseconds(200))) continue;
            bool open = reader.fill();
            hello = reader.next();
            if (!open) break;
        }
        json h = hello ? json::parse(*hello, nullptr, false) : json();
        if (!h.is_object() || h.value("token", "") != token_ || h.value("job", "") != job_) {
            // A stranger, or a job of an earlier submission that started late.
            log("refused a connection" +
                (h.is_object() ? " from job " + h.value("job", std::string("?")) : std::string()));
            ::close(fd);
            return;
        }
        agent_fd_ = fd;
        agent_ = reader;
        worker_exit_ = json();
        job_host_ = h.value("host", "?");
        ran_on_ = "slurm:" + job_ + "@" + job_host_;
        job_state_ = "RUNNING";
        log("job " + job_ + " runs on " + job_host_);
        for (const auto& r : in_flight_) {
            exec::write_line(agent_fd_, r.line);
            emit({{"id", r.id}, {"progress", where()}});
        }
    }

    void on_agent_line(const std::string& line) {
        json j = json::parse(line, nullptr, false);
        if (!j.is_object()) return;
        if (j.value("kf_relay", "") == "exit") {
            worker_exit_ = j;
            return;
        }
        if (auto p = j.find("progress"); p != j.end()) {
            if (p->is_object()) (*p)["ran_on"] = ran_on_;
            emit(j);
            return;
        }
        j["ran_on"] = ran_on_;
        const json id = j.value("id", json());
        for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it)
            if (it->id == id) {
                in_flight_.erase(it);
                break;
            }
        losses_ = 0;
        emit(j);
    }

    /** The job's connection closed. True when the relay is to exit (its worker ended by itself). */
    bool agent_closed() {
        ::close(agent_fd_);
        agent_fd_ = -1;
        if (worker_exit_.is_object()) {
            // The worker ended by itself (a shutdown, a fatal device error, a crash): end the
            // same way, so that the engine sees what a local worker would have shown it.
            log("the worker in job " + job_ + " ended: " + worker_exit_.value("description", std::string("?")));
            remove_files();
            const int sig = worker_exit_.value("signal", 0);
            if (sig > 0) {
                rlimit none{0, 0};
                ::setrlimit(RLIMIT_CORE, &none);
                std::signal(sig, SIG_DFL);
                std::raise(sig);
            }
            exit_code_ = worker_exit_.value("code", 0);
            return true;
        }
        job_lost("the connection to job " + job_ + " on " + job_host_ + " was lost");
        return done_;
    }

    void job_lost(const std::string& why) {
        if (agent_fd_ >= 0) {
            ::close(agent_fd_);
            agent_fd_ = -1;
        }
        exec::cancel_job(job_);
        if (shutting_down_) {
            done_ = true;
            return;
        }
        ++losses_;
        log(why);
        if (losses_ > opt_.max_requeues) {
            failed_ =
                "the Slurm worker job was lost " + std::to_string(losses_) + " times in a row (last: " + why + ")";
            fail_all(failed_);
            job_.clear();
            return;
        }
        std::string error;
        if (!submit(error)) {
            failed_ = "cannot resubmit the worker job: " + error;
            fail_all(failed_);
            job_.clear();
            return;
        }
        hold_all(why + "; resubmitted as job " + job_);
    }

    /** Follows the job with squeue: often while it waits, now and then while it runs. */
    void watch_job() {
        if (job_.empty()) return;
        const auto now = Clock::now();
        if (agent_fd_ < 0 && !in_flight_.empty() && now - last_hold_ >= std::chrono::seconds(15))
            hold_all("waiting for Slurm job " + job_ + " (" + job_state_ + ")");
        const auto every = agent_fd_ < 0 ? std::chrono::seconds(2) : std::chrono::seconds(30);
        if (now - last_check_ < every) return;
        last_check_ = now;
        std::string state = exec::job_state(job_);
        if (state != "UNKNOWN") job_state_ = state;
        if (agent_fd_ < 0 && (!exec::job_alive(state) || state == "COMPLETING")) {
            // A job that connects after its state was read is still accepted before this check.
            if (exec::wait_readable(listen_fd_, std::chrono::milliseconds(0))) return;
            job_lost("job " + job_ + " ended (" + state + ") before it connected");
        } else if (agent_fd_ >= 0 && !exec::job_alive(state)) {
            job_lost("job " + job_ + " is " + state);
        }
    }

    /** The engine closed our input: stop the worker and its job, and exit. */
    int finish() {
        if (agent_fd_ >= 0) {
            // The agent stops its worker when the connection closes; wait for it briefly.
            ::shutdown(agent_fd_, SHUT_WR);
            const auto deadline = Clock::now() + std::chrono::seconds(3);
            while (Clock::now() < deadline) {
                if (!exec::wait_readable(agent_fd_, std::chrono::milliseconds(100))) continue;
                if (!agent_.fill()) break;
                while (agent_.next()) {
                }
            }
            ::close(agent_fd_);
            agent_fd_ = -1;
        }
        if (!job_.empty() && exec::job_alive(exec::job_state(job_))) exec::cancel_job(job_);
        remove_files();
        return 0;
    }

    struct Request {
        json id;
        std::string line;
    };

    SlurmOptions opt_;
    std::vector<std::string> worker_;
    std::string kfoundry_;
    int listen_fd_ = -1, port_ = 0;
    std::string token_;
    std::string job_, job_state_, job_host_, ran_on_;
    int agent_fd_ = -1;
    exec::LineReader agent_;
    json worker_exit_;
    std::vector<Request> in_flight_;
    int losses_ = 0, submissions_ = 0, exit_code_ = 0;
    bool shutting_down_ = false, done_ = false;
    std::string failed_;
    std::filesystem::path connect_file_, script_file_;
    Clock::time_point last_check_ = Clock::now(), last_hold_ = Clock::now();
};

}  // namespace

int slurm_relay_main(const std::string& config_json) {
    json config = json::parse(config_json, nullptr, false);
    if (!config.is_object() || !config.contains("worker")) {
        log("expects its configuration as one JSON argument (it is started by the engine)");
        return 2;
    }
    std::signal(SIGPIPE, SIG_IGN);
    struct sigaction sa {};
    sa.sa_handler = on_terminate;
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
    Relay relay(SlurmOptions::from_json(config.value("slurm", json::object())),
                config["worker"].get<std::vector<std::string>>(), config.value("kfoundry", std::string("kfoundry")));
    return relay.run();
}

}  // namespace kf
