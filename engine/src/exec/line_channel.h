#pragma once
// Line-oriented I/O over file descriptors (pipes and TCP sockets) for the Slurm relay and
// agent, which wait on several of them at once with poll().
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kf::exec {

/** Reads lines from a file descriptor it does not own; feed it when poll() says readable. */
class LineReader {
public:
    explicit LineReader(int fd = -1) : fd_(fd) {}
    int fd() const { return fd_; }
    /** Reads what is available (one read()); false at end of stream or on an error. */
    bool fill();
    /** The next complete line (without its newline), if one is buffered. */
    std::optional<std::string> next();
    bool eof() const { return eof_; }

private:
    int fd_;
    std::string buffer_;
    bool eof_ = false;
};

/** Writes all of `line` and a newline (blocking); false when the other end is gone. */
bool write_line(int fd, const std::string& line);

/** A TCP socket listening on every interface, on a port the system picks. -1 on failure (errno). */
int listen_any(int& port);
/** Connects to host:port within `timeout` (IPv4 or IPv6); -1 on failure, `error` says why. */
int connect_to(const std::string& host, int port, std::chrono::milliseconds timeout, std::string& error);
/** This host's non-loopback IPv4 addresses, in interface order. */
std::vector<std::string> local_addresses();
/** Waits until fd is readable or the time is up; true when readable (or closed). */
bool wait_readable(int fd, std::chrono::milliseconds timeout);
/** 32 random bytes as hex, from /dev/urandom. */
std::string random_token();
/** A word quoted for /bin/sh. */
std::string shell_quote(const std::string& word);

}  // namespace kf::exec
