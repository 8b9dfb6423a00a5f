#include "kf/process.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kf {

namespace {

std::vector<char*> to_argv(const std::vector<std::string>& args) {
    std::vector<char*> out;
    for (const auto& a : args) out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

constexpr std::size_t kMaxLineBytes = 64u << 20;

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
}

// The child starts its own process group so that a kill reaches everything it spawned.
void child_setup(const std::filesystem::path& cwd) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
}

/** Lowers one limit (soft and hard) in the child; a limit already lower is kept. */
void lower_limit(int resource, std::uint64_t value) {
    if (value == 0) return;
    rlimit rl{};
    if (getrlimit(resource, &rl) != 0) return;
    rlim_t v = static_cast<rlim_t>(value);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < v) v = rl.rlim_max;
    rl.rlim_cur = rl.rlim_max = v;
    setrlimit(resource, &rl);
}

void apply_limits(const ProcessLimits& limits) {
    lower_limit(RLIMIT_AS, limits.address_space_bytes);
    lower_limit(RLIMIT_FSIZE, limits.file_size_bytes);
    lower_limit(RLIMIT_CPU, limits.cpu_seconds);
    if (limits.nice > 0) {
        errno = 0;
        const int now = getpriority(PRIO_PROCESS, 0);
        if (errno == 0) setpriority(PRIO_PROCESS, 0, std::min(19, now + limits.nice));
    }
}

}  // namespace

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char* name = sigabbrev_np(sig);
        return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
    }
    return "unknown status " + std::to_string(status);
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& cwd, std::size_t max_output, const ProcessLimits& limits) {
    ProcessResult r;
    auto t0 = std::chrono::steady_clock::now();
    int fds[2];
    if (argv.empty() || pipe2(fds, O_CLOEXEC) != 0) {
        r.start_failed = true;
        r.output = argv.empty() ? "no program given" : std::string("pipe: ") + std::strerror(errno);
        return r;
    }
    int err_pipe[2];  // reports exec failure
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        close(fds[0]);
        close(fds[1]);
        r.start_failed = true;
        r.output = std::string("pipe: ") + std::strerror(errno);
        return r;
    }
    auto args = to_argv(argv);
    pid_t pid = fork();
    if (pid == 0) {
        child_setup(cwd);
        apply_limits(limits);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execvp(args[0], args.data());
        int e = errno;
        ssize_t ignored = write(err_pipe[1], &e, sizeof e);
        (void)ignored;
        _exit(127);
    }
    close(fds[1]);
    close(err_pipe[1]);
    if (pid < 0) {
        close(fds[0]);
        close(err_pipe[0]);
        r.start_failed = true;
        r.output = std::string("fork: ") + std::strerror(errno);
        return r;
    }
    setpgid(pid, pid);
    int exec_errno = 0;
    if (read(err_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
        r.start_failed = true;
        r.output = "cannot run '" + argv[0] + "': " + std::strerror(exec_errno);
    }
    close(err_pipe[0]);

    auto deadline = t0 + timeout;
    char buf[65536];
    for (;;) {
        pollfd p{fds[0], POLLIN, 0};
        int left = remaining_ms(deadline);
        int n = poll(&p, 1, left);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) {
            r.timed_out = true;
            break;
        }
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (r.output.size() < max_output)
            r.output.append(buf, std::min<std::size_t>(static_cast<std::size_t>(got), max_output - r.output.size()));
    }
    close(fds[0]);
    if (r.timed_out) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!r.timed_out && !r.start_failed) {
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

LineProcess::~LineProcess() { kill(); }

bool LineProcess::start(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file) {
    kill();
    eof_ = false;
    buffer_.clear();
    error_.clear();
    exit_description_.clear();
    int to_child[2], from_child[2], err_pipe[2];
    if (argv.empty() || pipe2(to_child, O_CLOEXEC) != 0) {
        error_ = "cannot create a pipe";
        return false;
    }
    if (pipe2(from_child, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        error_ = "cannot create a pipe";
        return false;
    }
    auto args = to_argv(argv);
    pid_t pid = fork();
    if (pid == 0) {
        child_setup({});
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        if (!stderr_file.empty()) {
            int fd = open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) dup2(fd, 2);
        }
        execvp(args[0], args.data());
        int e = errno;
        ssize_t ignored = write(err_pipe[1], &e, sizeof e);
        (void)ignored;
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    close(err_pipe[1]);
    if (pid < 0) {
        close(to_child[1]);
        close(from_child[0]);
        close(err_pipe[0]);
        error_ = std::string("fork: ") + std::strerror(errno);
        return false;
    }
    setpgid(pid, pid);
    int exec_errno = 0;
    bool failed = read(err_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    close(err_pipe[0]);
    pid_ = pid;
    in_fd_ = to_child[1];
    out_fd_ = from_child[0];
    if (failed) {
        error_ = "cannot run '" + argv[0] + "': " + std::strerror(exec_errno);
        kill();
        return false;
    }
    return true;
}

void LineProcess::reap(bool block) {
    if (pid_ <= 0) return;
    int status = 0;
    pid_t r;
    do r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == pid_) {
        exit_description_ = describe_wait_status(status);
        pid_ = -1;
    } else if (r < 0) {
        pid_ = -1;
    }
}

bool LineProcess::running() {
    reap(false);
    return pid_ > 0;
}

bool LineProcess::write_line(const std::string& line) {
    if (in_fd_ < 0) return false;
    std::string data = line + "\n";
    const char* p = data.data();
    std::size_t left = data.size();
    // SIGPIPE would kill the engine if the worker died: ignore it for this write.
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    bool ok = true;
    while (left > 0) {
        ssize_t n = ::write(in_fd_, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = false;
            break;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    sigaction(SIGPIPE, &old, nullptr);
    return ok;
}

std::optional<std::string> LineProcess::read_line(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        auto nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            std::string line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return line;
        }
        if (out_fd_ < 0 || eof_) return std::nullopt;
        pollfd p{out_fd_, POLLIN, 0};
        int n = poll(&p, 1, remaining_ms(deadline));
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) return std::nullopt;
        char buf[65536];
        ssize_t got = ::read(out_fd_, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            eof_ = true;
            return std::nullopt;
        }
        buffer_.append(buf, static_cast<std::size_t>(got));
        // A line longer than any reply is not a reply: stop reading this process.
        if (buffer_.size() > kMaxLineBytes && buffer_.find('\n') == std::string::npos) {
            buffer_.clear();
            eof_ = true;
            exit_description_ = "it wrote a line longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB";
            return std::nullopt;
        }
    }
}

void LineProcess::kill() {
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        reap(true);
    }
    if (in_fd_ >= 0) close(in_fd_);
    if (out_fd_ >= 0) close(out_fd_);
    in_fd_ = out_fd_ = -1;
}

int LineProcess::stop(std::chrono::milliseconds grace) {
    if (in_fd_ >= 0) {
        close(in_fd_);
        in_fd_ = -1;
    }
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
        reap(false);
        if (pid_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill();
    return 0;
}

std::filesystem::path executable_dir() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::current_path() : p.parent_path();
}

std::string host_name() {
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
    return buf;
}

}  // namespace kf
