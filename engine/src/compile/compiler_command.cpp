// Which compiler builds a candidate and with which flags. Both backends compile the glue
// file, which #includes kf_task.h and the candidate by name, into one shared object.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "kf/compile.h"

namespace kf {

namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
}

/** The first executable `name` in $PATH, or "" when there is none. */
std::string find_in_path(const std::string& name) {
    std::string path = env_or_empty("PATH");
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t colon = path.find(':', start);
        std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!dir.empty()) {
            std::filesystem::path candidate = std::filesystem::path(dir) / name;
            if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
        }
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return {};
}

}  // namespace

std::string compiler_program(Backend b) {
    if (b == Backend::Cuda) {
        if (auto v = env_or_empty("KF_NVCC"); !v.empty()) return v;
        if (auto v = find_in_path("nvcc"); !v.empty()) return v;
        // The toolkit's default location is often not on PATH (e.g. in a desktop session).
        return "/usr/local/cuda/bin/nvcc";
    }
    if (auto v = env_or_empty("KF_CXX"); !v.empty()) return v;
    return "g++";
}

CompileLimits effective_limits(const CompileRequest& req) {
    constexpr std::uint64_t MiB = 1024 * 1024, GiB = 1024 * MiB;
    CompileLimits l = req.limits;
    // nvcc, cicc and ptxas reserve much more address space than they touch.
    if (l.memory_bytes == 0) l.memory_bytes = req.backend == Backend::Cuda ? 8 * GiB : 4 * GiB;
    if (l.file_bytes == 0) l.file_bytes = 256 * MiB;
    if (l.library_bytes == 0) l.library_bytes = 64 * MiB;
    if (l.output_bytes == 0) l.output_bytes = 1 * MiB;
    return l;
}

std::filesystem::path compiler_root(Backend b) {
    namespace fs = std::filesystem;
    fs::path program = compiler_program(b);
    if (!program.is_absolute()) program = find_in_path(program.string());
    std::error_code ec;
    fs::path real = program.empty() ? fs::path() : fs::canonical(program, ec);
    if (real.empty() || ec) return {};
    // <root>/bin/<compiler>: the toolkit's headers and tools live under <root>.
    fs::path root = real.parent_path().parent_path();
    return root == root.root_path() ? real.parent_path() : root;
}

std::string default_source_name(Backend b) { return b == Backend::Cuda ? "candidate.cu" : "candidate.cpp"; }

std::string glue_file_name(Backend b) { return b == Backend::Cuda ? "kf_glue.cu" : "kf_glue.cpp"; }

std::vector<std::string> compiler_command(const CompileRequest& req, const std::filesystem::path& workdir) {
    std::vector<std::string> cmd;
    const std::string glue = (workdir / glue_file_name(req.backend)).string();
    const std::string out = (workdir / "candidate.so").string();
    if (req.backend == Backend::Cuda) {
        // -cudart shared: the worker and the candidate must share one CUDA runtime (streams,
        // context). -Xptxas -v reports registers/spills; -lineinfo lets profilers map to lines.
        cmd = {compiler_program(req.backend), "-std=c++17", "-O3", "-arch=" + req.arch, "-shared",
               "-Xcompiler", "-fPIC", "-cudart", "shared", "-Xptxas", "-v", "-lineinfo",
               "-I" + workdir.string(), glue, "-o", out};
    } else {
        cmd = {compiler_program(req.backend), "-std=c++17", "-O3", "-march=native", "-fopenmp", "-fPIC",
               "-shared", "-I" + workdir.string(), glue, "-o", out};
    }
    for (const auto& dir : req.include_dirs) cmd.push_back("-I" + dir.string());
    // Undefined symbols are deliberately not an error here (no -Wl,--no-undefined): they are
    // screened when the library is loaded, where the message can name the missing symbol.
    for (const auto& lib : req.libraries) cmd.push_back("-l" + lib);
    for (const auto& flag : req.extra_flags) cmd.push_back(flag);
    return cmd;
}

}  // namespace kf
