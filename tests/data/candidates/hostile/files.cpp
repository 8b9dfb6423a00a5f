// Creates, rewrites and deletes files in the folder KF_TEST_SENTINEL names, in its working
// directory, its parent and /tmp.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kf_task.h"

static void scribble(const std::string& path) {
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fputs("owned\n", f);
        std::fclose(f);
    }
}

extern "C" void kf_solve(const float*, float*, int) {
    if (const char* dir = std::getenv("KF_TEST_SENTINEL")) {
        std::string d = dir;
        scribble(d + "/project.db");
        scribble(d + "/new-file");
        unlink((d + "/keep.txt").c_str());
    }
    scribble("kf-escapee-file");
    scribble("../kf-escapee-file");
    scribble("/tmp/kf-escapee-file");
}
