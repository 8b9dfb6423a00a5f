// `kfoundry slurm-agent`: what a worker job runs. Connects back to the relay that submitted
// it, starts the worker, and copies bytes both ways until one side ends. When the worker ends
// by itself the agent tells the relay how ("kf_relay": "exit"); when the job is being ended
// (scancel, pre-emption, the time limit: SIGTERM) or the relay is gone, it stops the worker
// and says nothing, which the relay reads as a lost job.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

#include "kf/exec.h"
#include "kf/process.h"
#include "line_channel.h"

namespace kf {

namespace {

using nlohmann::json;

std::atomic<bool> g_ending{false};
void on_end(int) {
    g_ending = true;
}

void log(const std::string& message) {
    std::cerr << "kfoundry slurm-agent: " << message << std::endl;
}

/** The worker, in its own process group, with pipes for its stdin and stdout. */
struct Child {
    pid_t pid = -1;
    int in = -1, out = -1;

    bool start(const std::vector<std::string>& argv) {
        int to[2], from[2];
        if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0) return false;
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        pid = ::fork();
        if (pid == 0) {
            ::setpgid(0, 0);
            std::signal(SIGPIPE, SIG_DFL);
            std::signal(SIGTERM, SIG_DFL);
            ::dup2(to[0], 0);
            ::dup2(from[1], 1);
            ::execvp(args[0], args.data());
            _exit(127);
        }
        ::close(to[0]);
        ::close(from[1]);
        in = to[1];
        out = from[0];
        if (pid < 0) return false;
        ::setpgid(pid, pid);
        return true;
    }
    int wait() {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        pid = -1;
        return status;
    }
    /** After its stdout closed: its exit status, killing it if it lingers more than 5 s. */
    int wait_after_close() {
        for (int i = 0; i < 100; ++i) {
            int status = 0;
            pid_t r = ::waitpid(pid, &status, WNOHANG);
            if (r == pid) {
                pid = -1;
                return status;
            }
            if (r < 0 && errno != EINTR) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        return wait();
    }
    void kill() {
        if (pid > 0) {
            ::kill(-pid, SIGKILL);
            ::kill(pid, SIGKILL);
            wait();
        }
    }
};

enum class Copy { Ok, ReadEnd, WriteFailed };

Copy copy(int from, int to) {
    char buf[65536];
    ssize_t n;
    do n = ::read(from, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return Copy::ReadEnd;
    std::size_t done = 0;
    while (done < static_cast<std::size_t>(n)) {
        ssize_t w = ::write(to, buf + done, static_cast<std::size_t>(n) - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return Copy::WriteFailed;
        done += static_cast<std::size_t>(w);
    }
    return Copy::Ok;
}

}  // namespace

int slurm_agent_main(const std::filesystem::path& connect_file) {
    std::signal(SIGPIPE, SIG_IGN);
    struct sigaction sa {};
    sa.sa_handler = on_end;  // no SA_RESTART: poll() returns at once
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);

    json cfg;
    {
        std::ifstream in(connect_file);
        cfg = in ? json::parse(in, nullptr, false) : json();
    }
    if (!cfg.is_object()) {
        // The relay removes its files when it ends or replaces this job: nothing to serve.
        log("no connection file " + connect_file.string() + " (the engine that submitted this job has moved on)");
        return 0;
    }
    const char* job_env = std::getenv("SLURM_JOB_ID");
    const std::string job = job_env ? job_env : "";
    const int port = cfg.value("port", 0);
    int sock = -1;
    std::string errors;
    for (const auto& address : cfg.value("addresses", std::vector<std::string>{})) {
        std::string error;
        sock = exec::connect_to(address, port, std::chrono::seconds(5), error);
        if (sock >= 0) break;
        errors += (errors.empty() ? "" : "; ") + error;
    }
    if (sock < 0) {
        log("cannot reach the engine: " + errors);
        return 1;
    }
    exec::write_line(sock, json{{"token", cfg.value("token", "")}, {"job", job}, {"host", host_name()}}.dump());

    const auto argv = cfg.value("worker", std::vector<std::string>{});
    Child worker;
    if (argv.empty() || !worker.start(argv)) {
        log("cannot start the worker");
        exec::write_line(
            sock,
            json{{"kf_relay", "exit"}, {"code", 127}, {"signal", 0}, {"description", "the worker could not be started"}}
                .dump());
        ::close(sock);
        return 1;
    }
    log("job " + job + " on " + host_name() + ": worker " + std::to_string(worker.pid) + " started");
    for (;;) {
        if (g_ending) {
            log("ending (signal): the worker is stopped and the engine will resubmit");
            worker.kill();
            ::close(sock);
            return 0;
        }
        pollfd fds[2] = {{sock, POLLIN, 0}, {worker.out, POLLIN, 0}};
        int rc = ::poll(fds, 2, 1000);
        if (rc <= 0) continue;
        // A worker that stopped reading has ended or is ending: its stdout says which.
        if (fds[0].revents && copy(sock, worker.in) == Copy::ReadEnd) {
            log("the engine closed the connection: stopping the worker");
            worker.kill();
            ::close(sock);
            return 0;
        }
        Copy out = fds[1].revents ? copy(worker.out, sock) : Copy::Ok;
        if (out == Copy::WriteFailed) {
            log("the connection to the engine broke: stopping the worker");
            worker.kill();
            ::close(sock);
            return 0;
        }
        if (out == Copy::ReadEnd) {
            const int status = worker.wait_after_close();
            const bool by_signal = WIFSIGNALED(status);
            const int sig = by_signal ? WTERMSIG(status) : 0;
            // Slurm signals every process of an ending job: a worker killed that way is the
            // job's end, not the candidate's doing. Give our own signal a moment to arrive.
            if (sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP)
                for (int i = 0; i < 20 && !g_ending; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (g_ending) {
                log("ending (signal) as the worker was killed");
                ::close(sock);
                return 0;
            }
            const std::string description = describe_wait_status(status);
            log("the worker ended: " + description);
            exec::write_line(sock, json{{"kf_relay", "exit"},
                                        {"code", WIFEXITED(status) ? WEXITSTATUS(status) : -1},
                                        {"signal", sig},
                                        {"description", description}}
                                       .dump());
            ::close(sock);
            return 0;
        }
    }
}

}  // namespace kf
