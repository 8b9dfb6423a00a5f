#include "runner_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "case_buffers.h"
#include "kf/process.h"
#include "kf/sandbox_view.h"

namespace kf::worker {

namespace {

constexpr std::size_t kKeptOutput = 64 << 10;     // kept for the record
constexpr std::size_t kForwardedOutput = 1 << 20;  // copied to the worker's log

/** Waits for `fd` to be readable; false on time-out. */
bool wait_readable(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR) continue;
        return n > 0;
    }
}

std::vector<std::filesystem::path> library_path_dirs() {
    std::vector<std::filesystem::path> out;
    const char* lp = std::getenv("LD_LIBRARY_PATH");
    if (!lp) return out;
    std::string s = lp;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find(':', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) out.emplace_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

}  // namespace

RunnerProcess::RunnerProcess(const RunnerOptions& opt) {
    try {
        start(opt);
    } catch (...) {
        shut_down();
        throw;
    }
}

void RunnerProcess::start(const RunnerOptions& opt) {
    backend_ = opt.backend;
    load_timeout_s_ = opt.load_timeout_s;
    start_.ahead = opt.library.empty();
    asked_ = std::chrono::steady_clock::now();
    // The library is copied into a folder of its own once it is known, visible read-only to
    // this runner alone: a runner can then be started before its candidate exists.
    {
        std::error_code ec;
        const auto root = opt.stage_root.empty() ? std::filesystem::temp_directory_path(ec) : opt.stage_root;
        std::string tmpl = (root / "runner-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw DeviceFault(std::string("mkdtemp: ") + std::strerror(errno), false);
        stage_ = tmpl;
    }
    int sv[2], outp[2], info[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        throw DeviceFault(std::string("socketpair: ") + std::strerror(errno), false);
    if (pipe2(outp, O_CLOEXEC) != 0) {
        close(sv[0]);
        close(sv[1]);
        throw DeviceFault(std::string("pipe: ") + std::strerror(errno), false);
    }
    std::string why;
    bool use_bwrap = opt.sandbox && kf::bwrap_usable(&why);
    if (opt.sandbox && !use_bwrap)
        warnings_.push_back("no private file system view (" + why + "): the candidate sees the worker's files");
    std::vector<std::string> argv;
    if (use_bwrap && pipe2(info, O_CLOEXEC) == 0) {
        std::vector<std::filesystem::path> visible = library_path_dirs();
        visible.push_back(opt.worker.parent_path());
        visible.push_back(stage_);
        argv = runner_bwrap_arguments(visible, opt.backend == "cuda", 64ull << 20, 4);
        sandboxed_ = true;
    }
    argv.insert(argv.end(), {opt.worker.string(), "--runner", "--memory", std::to_string(opt.limits.memory_bytes),
                             "--file-size", std::to_string(opt.limits.file_bytes), "--backend", opt.backend, "--device",
                             std::to_string(opt.device), "--spawned-ns", std::to_string(steady_ns())});
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);

    pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
        setsid();
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(outp[1], 1);
        dup2(outp[1], 2);
        dup2(sv[1], kRunnerControlFd);
        if (info[1] >= 0) dup2(info[1], 4);
        close_range(info[1] >= 0 ? 5 : 4, ~0U, 0);
        execvp(cargv[0], cargv.data());
        _exit(127);
    }
    close(sv[1]);
    close(outp[1]);
    if (info[1] >= 0) close(info[1]);
    sock_ = sv[0];
    out_fd_ = outp[0];
    info_fd_ = info[0];
    if (pid_ < 0) {
        close(sock_);
        close(out_fd_);
        if (info_fd_ >= 0) close(info_fd_);
        sock_ = out_fd_ = info_fd_ = -1;
        throw DeviceFault(std::string("fork: ") + std::strerror(errno), false);
    }
    drain_ = std::thread([this] {
        char buf[16384];
        std::size_t forwarded = 0;
        for (;;) {
            if (!wait_readable(out_fd_, 100)) {
                if (stop_drain_) break;
                continue;
            }
            ssize_t n = read(out_fd_, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            auto len = static_cast<std::size_t>(n);
            if (forwarded < kForwardedOutput) {
                std::size_t w = std::min(len, kForwardedOutput - forwarded);
                ssize_t ignored = write(2, buf, w);
                (void)ignored;
                forwarded += w;
            }
            std::lock_guard<std::mutex> lock(out_mutex_);
            if (output_.size() < kKeptOutput) output_.append(buf, std::min(len, kKeptOutput - output_.size()));
        }
    });
    runner_pid_ = pid_;
    // Queued now, it finds Open waiting as soon as its driver is started.
    if (!opt.open_later) open_device();
    if (!opt.library.empty()) load(opt.library);
}

void RunnerProcess::open_device() {
    if (opened_ || pid_ <= 0) return;
    opened_ = true;
    (void)send_runner_message(sock_, {RunnerMsg::Open});  // one that has died is found so when awaited
}

ReceivedMessage RunnerProcess::next_message(const std::string& doing) {
    std::optional<ReceivedMessage> m = std::exchange(early_, std::nullopt);
    if (!m) {
        if (!wait_readable(sock_, load_timeout_s_ * 1000)) {
            kill_all();
            throw CandidateFault{"the library did not load within " + std::to_string(load_timeout_s_) + " s", false};
        }
        m = receive_runner_message(sock_);
    }
    if (!m) died(doing);
    if (m->header.type == RunnerMsg::DeviceError) {
        kill_all();
        throw DeviceFault("the runner's device could not be set up: " + m->payload.substr(0, 500), false);
    }
    return *m;
}

void RunnerProcess::await_setup() {
    if (set_up_) return;
    if (info_fd_ >= 0) {
        // bubblewrap names the sandboxed process's PID in this namespace.
        std::string text;
        char buf[512];
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(load_timeout_s_);
        while (text.find('}') == std::string::npos && std::chrono::steady_clock::now() < until) {
            if (!wait_readable(info_fd_, 200)) continue;
            ssize_t n = read(info_fd_, buf, sizeof buf);
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
        }
        close(info_fd_);
        info_fd_ = -1;
        auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_object() && j.contains("child-pid")) runner_pid_ = j["child-pid"].get<pid_t>();
        else died("starting the sandbox");
    }
    await_started();
    open_device();
    const ReceivedMessage confined = next_message("setting itself up");
    if (confined.header.type != RunnerMsg::Confined) forged("its confinement message");
    activity_.quiet_waits = confined.header.value == 1;
    // Figures only (runner.setup_ms and its parts): the runner could write anything here.
    const auto j = nlohmann::json::parse(confined.payload, nullptr, false);
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1e9) continue;
            const std::string name = k.size() > 3 && k.compare(k.size() - 3, 3, "_us") == 0 ? k.substr(0, k.size() - 3) : "";
            if (name == "setup") start_.setup_ms = v.get<double>() / 1000;
            else if (!name.empty() && start_.parts.size() < 12) start_.parts[name + "_ms"] = v.get<double>() / 1000;
        }
    }
    set_up_ = true;
}

void RunnerProcess::load(const std::filesystem::path& library) {
    if (loaded_) throw DeviceFault("a runner loads one library only", false);
    loaded_ = true;
    if (start_.ahead) asked_ = std::chrono::steady_clock::now();
    release();
    await_setup();
    // The runner sees the stage folder read-only; a hard link where the file system allows it.
    const std::filesystem::path staged = stage_ / library.filename();
    std::error_code ec;
    std::filesystem::create_hard_link(library, staged, ec);
    if (ec) {
        ec.clear();
        std::filesystem::copy_file(library, staged, std::filesystem::copy_options::overwrite_existing, ec);
    }
    if (ec) {
        kill_all();
        throw CandidateFault{"load_error:cannot stage " + library.string() + " for the runner: " + ec.message(), false};
    }
    before_loading(staged);
    auto m = std::optional<ReceivedMessage>(next_message("loading the library"));
    if (m->header.type == RunnerMsg::LoadError) {
        kill_all();
        throw CandidateFault{"load_error:" + m->payload, false};
    }
    if (m->header.type != RunnerMsg::Ready) forged("its ready message");
    if (!m->payload.empty()) {
        auto w = nlohmann::json::parse(m->payload, nullptr, false);
        if (w.is_array())
            for (const auto& s : w)
                if (s.is_string()) warnings_.push_back(s.get<std::string>());
    }
    stop();  // what the library's constructors started stands still until the first call
    std::filesystem::remove(staged, ec);  // mapped now: the runner needs the file no more
    start_.waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked_).count();
}

bool RunnerProcess::setting_up() {
    if (set_up_ || loaded_ || pid_ <= 0 || early_) return false;
    if (!started_) {
        if (!wait_readable(sock_, 0)) return true;
        auto m = receive_runner_message(sock_);
        if (!m) return false;  // it has ended: await_setup() finds so
        if (m->header.type != RunnerMsg::Started) {
            early_ = std::move(*m);  // an error at start: for await_setup() to report
            return false;
        }
        started_ = true;
    }
    // Its Confined message (or its end) is waiting: it is set up and blocks until load().
    return !wait_readable(sock_, 0);
}

bool RunnerProcess::hold() {
    // Not opened, it waits before its device (or is still starting its driver), with nothing
    // of its own on the device.
    if (!opened_ || !held_.empty() || !setting_up()) return false;
    // Top down, so that no process escapes by starting another; again until nothing new
    // appears (bubblewrap starts its init, the init the runner).
    std::vector<pid_t> seen;
    for (bool more = true; more;) {
        more = false;
        std::vector<pid_t> all{pid_};
        for (std::size_t i = 0; i < all.size(); ++i)
            for (pid_t c : children_of(all[i])) all.push_back(c);
        for (pid_t p : all) {
            if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
            ::kill(p, SIGSTOP);
            seen.push_back(p);
            more = true;
            auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            ThreadCensus c = take_census(p);
            while (c.readable && !c.all_stopped && std::chrono::steady_clock::now() < until) {
                usleep(50);
                c = take_census(p);
            }
        }
    }
    held_ = std::move(seen);
    return true;
}

void RunnerProcess::await_started() {
    if (started_ || set_up_ || pid_ <= 0) return;
    if (next_message("starting its driver").header.type != RunnerMsg::Started) forged("its started message");
    started_ = true;
}

void RunnerProcess::finish_setup() {
    release();
    await_setup();  // opens it where it is not opened yet
}

void RunnerProcess::release() {
    for (auto it = held_.rbegin(); it != held_.rend(); ++it) ::kill(*it, SIGCONT);
    held_.clear();
}

void RunnerProcess::before_loading(const std::filesystem::path& library) {
    if (sandboxed_) {
        // bubblewrap names its init (the PID namespace's first process); the runner is its
        // child. Stopping the init would leave the runner running while the judge looks.
        const pid_t child = only_child(runner_pid_);
        if (child <= 0) {
            activity_.note = "the runner could not be told apart from bubblewrap's init";
            warnings_.push_back(activity_.note + ": it is not stopped while the judge looks and its threads are not counted");
            runner_pid_ = -1;
        } else {
            runner_pid_ = child;
        }
    }
    if (runner_pid_ > 0) {
        // The runner waits for Load: its threads now are its own (OpenMP's pool, the driver's).
        ThreadCensus c = take_census(runner_pid_);
        if (c.readable) {
            activity_.measured = true;
            activity_.baseline_threads = activity_.max_threads = c.threads;
        } else {
            activity_.note = "the runner's threads could not be listed (/proc)";
        }
        cpu_ = ProcessCpuClock(runner_pid_);
    }
    if (!send_runner_message(sock_, {RunnerMsg::Load}, library.string())) died("being told to load the library");
}

RunnerProcess::~RunnerProcess() { shut_down(); }

void RunnerProcess::shut_down() {
    release();
    if (sock_ >= 0 && pid_ > 0) send_runner_message(sock_, {RunnerMsg::Exit});
    kill_all();
    if (info_fd_ >= 0) close(info_fd_);
    info_fd_ = -1;
    if (!stage_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(stage_, ec);
        stage_.clear();
    }
    stop_drain_ = true;
    if (drain_.joinable()) drain_.join();
    if (out_fd_ >= 0) close(out_fd_);
    if (sock_ >= 0) close(sock_);
    out_fd_ = sock_ = -1;
}

void RunnerProcess::forged(const std::string& expected) {
    kill_all();
    throw CandidateFault{"the candidate wrote on the runner's control channel instead of " + expected +
                             " (a forged message); its process was stopped",
                         false, true};
}

void RunnerProcess::kill_all() {
    if (pid_ <= 0) return;
    if (runner_pid_ > 0) ::kill(runner_pid_, SIGKILL);
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    // Under bubblewrap the runner is not this process's child: wait (a while) until it is gone,
    // so that what it held (device memory above all) is free before the judge goes on.
    for (int i = 0; i < 2000 && runner_pid_ > 0 && !process_gone(runner_pid_); ++i) usleep(1000);
    pid_ = -1;
    runner_pid_ = -1;
}

void RunnerProcess::died(const std::string& while_doing) {
    std::string how;
    if (pid_ > 0) {
        int status = 0;
        // It closed its end: give it a moment to finish dying, then make sure.
        pid_t r = 0;
        for (int i = 0; i < 100 && (r = waitpid(pid_, &status, WNOHANG)) == 0; ++i) usleep(10000);
        if (r == pid_) {
            int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
            if (sandboxed_ && WIFEXITED(status) && WEXITSTATUS(status) > 128) {
                sig = WEXITSTATUS(status) - 128;
                const char* name = sigabbrev_np(sig);
                how = "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
            } else {
                how = describe_wait_status(status);
            }
            pid_ = -1;
            if (sig == SIGSYS) {
                // The filter ends the runner with SIGSYS only for fork, clone and exec (sandbox.h).
                kill_all();
                throw CandidateFault{"the candidate tried to start a process (fork, clone or exec): the sandbox's "
                                     "system-call filter ended it",
                                     false, true, "spawned_work"};
            }
        }
        kill_all();
    }
    throw CandidateFault{"the candidate's process ended" + (how.empty() ? std::string() : " (" + how + ")") +
                             " while " + while_doing,
                         false};
}

void RunnerProcess::bind(const Arena& arena, const std::vector<long long>& sizes, const std::vector<double>& params,
                         const std::vector<std::vector<std::size_t>>& set_offsets, bool remap) {
    thaw();
    nlohmann::json j = {{"sizes", sizes}, {"params", params}, {"sets", set_offsets}};
    if ((remap && !send_runner_message(sock_, {RunnerMsg::Arena, 0, arena.capacity()}, {}, arena.fd())) ||
        !send_runner_message(sock_, {RunnerMsg::Case}, j.dump()))
        died("receiving its tensors");
    // Its answer to an arm says it has mapped them.
    arm();
    count();
    if (backend_ == "cuda" && !mapped_once_ && last_threads_ > activity_.baseline_threads) {
        // The driver may start a thread when it first maps shared memory; the candidate has
        // not been called yet. (A thread its library's constructors started is let through.)
        activity_.baseline_threads = last_threads_;
    }
    mapped_once_ = true;
}

std::optional<ReceivedMessage> RunnerProcess::exchange(RunnerMsg type, std::size_t index, const std::string& doing,
                                                       double& wall_ms, std::uint64_t value) {
    // Anything waiting before the call was sent by the library on its own (a reply forged
    // ahead of time, so that a later call seems to return at once).
    if (wait_readable(sock_, 0)) {
        if (!receive_runner_message(sock_)) died("waiting to be called");
        forged("silence between calls");
    }
    const long long cpu0 = let_run();
    auto t0 = std::chrono::steady_clock::now();
    resume();  // only where a caller left it stopped (thaw() is the rule): then inside the clock
    if (!send_runner_message(sock_, {type, static_cast<std::uint32_t>(index), value})) died(doing);
    auto m = receive_runner_message(sock_);
    auto t1 = std::chrono::steady_clock::now();
    last_cpu_ms_ = cpu0 >= 0 ? static_cast<double>(cpu_.ns() - cpu0) / 1e6 : -1;
    wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (!m) died("running the candidate");
    if (m->header.type == RunnerMsg::Fault) {
        if (m->header.value == 1) {
            // A device fault ends the runner's context only; the judge's own context is intact.
            kill_all();
            throw CandidateFault{"the candidate faulted on the device: " + m->payload.substr(0, 500), false};
        }
        throw CandidateFault{"the candidate threw: " + m->payload.substr(0, 500), false};
    }
    return m;
}

CallTime RunnerProcess::call(std::size_t index) {
    double wall = 0;
    auto m = exchange(RunnerMsg::Call, index, "being called", wall);
    if (m->header.type != RunnerMsg::Done || m->header.index != index || !m->payload.empty()) forged("the reply to a call");
    CallTime t;
    t.wall_ms = wall;
    t.event_ms = backend_ == "cuda" ? std::min(wall, static_cast<double>(m->header.value) / 1e6) : wall;
    t.cpu_ms = last_cpu_ms_;
    return t;
}

void RunnerProcess::arm() {
    double wall = 0;
    auto m = exchange(RunnerMsg::Arm, 0, "being armed", wall);
    if (m->header.type != RunnerMsg::Armed || !m->payload.empty()) forged("the reply to an arm");
}

LaunchReport RunnerProcess::account(std::size_t index, int late_work_ms) {
    double wall = 0;
    auto m = exchange(RunnerMsg::Account, index, "being called", wall, static_cast<std::uint64_t>(std::max(late_work_ms, 0)));
    if (m->header.type != RunnerMsg::Launches || m->header.index != index) forged("the launch report");
    auto j = nlohmann::json::parse(m->payload, nullptr, false);
    if (!j.is_object()) forged("a launch report");
    LaunchReport r;
    try {
        r.supported = j.at("supported").get<bool>();
        r.kernels = j.at("kernels").get<std::int64_t>();
        r.kernels_other_streams = j.at("kernels_other_streams").get<std::int64_t>();
        r.kernel_names = j.at("kernel_names").get<std::vector<std::string>>();
        r.modules_loaded = j.value("modules_loaded", std::int64_t{0});
        r.note = j.at("note").get<std::string>();
    } catch (const nlohmann::json::exception&) {
        forged("a launch report");
    }
    return r;
}

void RunnerProcess::stop() {
    if (frozen_ || runner_pid_ <= 0) return;
    ::kill(runner_pid_, SIGSTOP);
    frozen_ = true;
}

void RunnerProcess::resume() {
    if (!frozen_ || runner_pid_ <= 0) return;
    ::kill(runner_pid_, SIGCONT);
    frozen_ = false;
}

long long RunnerProcess::let_run() {
    if (!cpu_.valid()) return -1;
    // CPU time since freeze() saw it stand still was used while it should have been stopped.
    const long long now = cpu_.ns();
    if (stopped_ns_ >= 0) {
        const double idle = now > stopped_ns_ ? static_cast<double>(now - stopped_ns_) / 1e6 : 0.0;
        activity_.idle_cpu_ms += idle;
        activity_.idle_cpu_max_ms = std::max(activity_.idle_cpu_max_ms, idle);
        ++activity_.stops;
    }
    stopped_ns_ = -1;
    if (call_start_ns_ < 0) call_start_ns_ = now;
    return now;
}

void RunnerProcess::record(const ThreadCensus& c) {
    if (!activity_.measured || !c.readable) return;
    last_threads_ = c.threads;
    activity_.max_threads = std::max(activity_.max_threads, c.threads);
    activity_.max_children = std::max(activity_.max_children, c.children);
    ++activity_.calls;
}

void RunnerProcess::count() {
    if (runner_pid_ > 0) record(take_census(runner_pid_));
}

void RunnerProcess::thaw() {
    let_run();
    resume();
}

void RunnerProcess::freeze() {
    if (runner_pid_ <= 0) return;
    stop();
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    ThreadCensus c = take_census(runner_pid_);
    while (c.readable && !c.all_stopped && std::chrono::steady_clock::now() < until) {
        usleep(50);
        c = take_census(runner_pid_);
    }
    record(c);
    if (cpu_.valid()) {
        // A thread shows as stopped a moment before the scheduler last charges it: the clock
        // is read until it stands still.
        long long now = cpu_.ns();
        for (int i = 0; i < 100; ++i) {
            usleep(20);
            const long long again = cpu_.ns();
            if (again == now) break;
            now = again;
        }
        if (call_start_ns_ >= 0 && now >= call_start_ns_)
            activity_.call_cpu_ms += static_cast<double>(now - call_start_ns_) / 1e6;
        call_start_ns_ = -1;
        stopped_ns_ = now;
        activity_.cpu_measured = true;
    }
}

RunnerActivity RunnerProcess::activity() const { return activity_; }

std::string RunnerProcess::output() {
    std::lock_guard<std::mutex> lock(out_mutex_);
    return output_;
}

}  // namespace kf::worker
