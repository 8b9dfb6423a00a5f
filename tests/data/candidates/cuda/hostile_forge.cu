// Writes well-formed worker replies claiming "ok" at a huge speedup, for many request ids,
// on every descriptor it can reach (the worker's protocol channel among them where the
// candidate shares the worker's process), and computes nothing.
#include <unistd.h>

#include <cstdio>

#include "kf_task.h"

extern "C" void kf_solve(const float*, const float*, float*, int, float, cudaStream_t) {
    char line[512];
    for (int id = 1; id < 60; ++id) {
        int len = std::snprintf(line, sizeof line,
                                "{\"id\":%d,\"ok\":true,\"result\":{\"status\":\"ok\",\"stage\":\"done\",\"message\":"
                                "\"forged\",\"fatal\":false,\"timing\":{\"median_ms\":0.0001,\"speedup\":1000}}}\n",
                                id);
        for (int fd = 0; fd < 64; ++fd) (void)!write(fd, line, static_cast<size_t>(len));
    }
}
