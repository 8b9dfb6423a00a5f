// Forges an error reply and a reply with a status word nobody knows.
#include <unistd.h>

#include <cstdio>

#include "kf_task.h"

extern "C" void kf_solve(const float*, float*, int) {
    char line[512];
    for (int id = 1; id < 60; ++id) {
        int a = std::snprintf(line, sizeof line, "{\"id\":\"%d\",\"ok\":false,\"error\":\"forged failure\"}\n", id);
        for (int fd = 0; fd < 64; ++fd) (void)!write(fd, line, static_cast<size_t>(a));
        int b = std::snprintf(line, sizeof line, "{\"id\":\"%d\",\"ok\":true,\"result\":{\"status\":\"splendid\"}}\n", id);
        for (int fd = 0; fd < 64; ++fd) (void)!write(fd, line, static_cast<size_t>(b));
    }
}
