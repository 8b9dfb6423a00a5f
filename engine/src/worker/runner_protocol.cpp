#include "runner_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kf::worker {

bool send_runner_message(int sock, const RunnerHeader& h, const std::string& payload, int fd) {
    std::string body(sizeof h, '\0');
    std::memcpy(body.data(), &h, sizeof h);
    body += payload.substr(0, kRunnerMaxMessage - sizeof h);
    iovec iov{body.data(), body.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n >= 0) return true;
        if (errno != EINTR) return false;
    }
}

std::optional<ReceivedMessage> receive_runner_message(int sock) {
    std::vector<char> buf(kRunnerMaxMessage);
    iovec iov{buf.data(), buf.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    ReceivedMessage r;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (r.fd < 0) r.fd = fd;
            else close(fd);
        }
    }
    if (n < static_cast<ssize_t>(sizeof(RunnerHeader))) {
        if (r.fd >= 0) close(r.fd);
        return std::nullopt;
    }
    std::memcpy(&r.header, buf.data(), sizeof r.header);
    r.payload.assign(buf.data() + sizeof r.header, static_cast<std::size_t>(n) - sizeof r.header);
    return r;
}

}  // namespace kf::worker
