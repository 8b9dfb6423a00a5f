#pragma once
/**
 * Child processes with time limits. Anything that can crash or hang (a compiler, a
 * candidate kernel) runs in a child process; these are the two ways the engine starts one.
 */
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace kf {

struct ProcessResult {
    int exit_code = -1;     ///< exit status, or -1 when killed by a signal / timed out
    int signal = 0;         ///< terminating signal, if any
    bool timed_out = false;
    bool start_failed = false;
    std::string output;     ///< stdout and stderr interleaved (truncated at max_output)
    double seconds = 0;
};

/**
 * Resource limits set in the child (setrlimit, setpriority) before it starts the program;
 * they are inherited by everything it starts. 0 leaves a limit as the parent has it.
 */
struct ProcessLimits {
    std::uint64_t address_space_bytes = 0;  ///< RLIMIT_AS: virtual memory of each process
    std::uint64_t file_size_bytes = 0;      ///< RLIMIT_FSIZE: largest file a process may write (SIGXFSZ beyond)
    std::uint64_t cpu_seconds = 0;          ///< RLIMIT_CPU: CPU time of each process (SIGXCPU / SIGKILL beyond)
    int nice = 0;  ///< added to the child's niceness (setpriority; capped at 19): it yields the processors to others
};

/**
 * Runs argv[0] (searched in PATH) with stdout+stderr captured, killing its whole process
 * group after `timeout`. Never throws for a failing program; start failures are reported.
 * Output beyond `max_output` bytes is read and dropped.
 */
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& cwd = {}, std::size_t max_output = 1 << 20,
                          const ProcessLimits& limits = {});

/**
 * A long-lived child speaking line-oriented text over stdin/stdout (the worker).
 * stderr is inherited or sent to a file. Not thread-safe: one owner.
 */
class LineProcess {
public:
    LineProcess() = default;
    ~LineProcess();
    LineProcess(const LineProcess&) = delete;
    LineProcess& operator=(const LineProcess&) = delete;

    /** Starts the program; returns false (with error()) when it cannot be started. */
    bool start(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file = {});
    bool running();
    /** Writes one line (a newline is appended). False when the pipe is closed. */
    bool write_line(const std::string& line);
    /**
     * Reads one line, waiting at most until the deadline. nullopt on timeout or end of
     * stream; eof() tells which.
     */
    std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);
    bool eof() const { return eof_; }
    /** Kills the process group (SIGKILL) and reaps it. */
    void kill();
    /** Closes stdin and waits up to `grace` for exit, then kills. Returns the exit status. */
    int stop(std::chrono::milliseconds grace);
    /** Exit description once the process has ended, e.g. "killed by signal 11 (SIGSEGV)". */
    std::string exit_description() const { return exit_description_; }
    pid_t pid() const { return pid_; }
    const std::string& error() const { return error_; }

private:
    void reap(bool block);
    pid_t pid_ = -1;
    int in_fd_ = -1, out_fd_ = -1;
    std::string buffer_;
    bool eof_ = false;
    std::string error_;
    std::string exit_description_;
};

/** Text such as "exit code 3" or "signal 11 (SIGSEGV)" for a waitpid status. */
std::string describe_wait_status(int status);

/** Directory of the running executable (for finding the worker and bundled resources). */
std::filesystem::path executable_dir();

/** This machine's host name (gethostname), "localhost" when it has none. */
std::string host_name();

}  // namespace kf
