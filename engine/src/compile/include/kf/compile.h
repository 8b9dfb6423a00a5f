#pragma once
/**
 * Compiling candidates: nvcc (CUDA backend) or the host C++ compiler (host backend) to a
 * shared object, in parallel, cached by content hash. Compiler output becomes structured
 * Diagnostics mapped to the candidate's own file and lines; ptxas resource usage is read at
 * compile time.
 */
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kf/diagnosis.h"
#include "kf/task.h"

namespace kf {

/**
 * Resource limits of one compile (docs/compile.md). 0 picks the default; the limits in
 * force are part of the cache key, since a compile that hit one fails the same way again.
 */
struct CompileLimits {
    std::uint64_t memory_bytes = 0;   ///< RLIMIT_AS of each compiler process: 8 GiB (CUDA: nvcc, cicc, ptxas), 4 GiB (host)
    std::uint64_t file_bytes = 0;     ///< RLIMIT_FSIZE: the largest file the compiler may write; 256 MiB
    std::uint64_t library_bytes = 0;  ///< the largest shared object accepted; 64 MiB
    std::size_t output_bytes = 0;     ///< compiler output (stdout+stderr) kept; 1 MiB
};

/** Everything that determines a compiled library; hashed (with the compiler's version) as the cache key. */
struct CompileRequest {
    Backend backend = Backend::Host;
    std::string source;                     ///< the candidate (tunables already instantiated)
    std::string source_name;                ///< file name in diagnostics; default candidate.cu / candidate.cpp
    std::string header;                     ///< kf_task.h: entry_header(task, backend)
    std::string glue;                       ///< entry_glue(task, backend, source_name)
    std::string arch = "sm_90";             ///< CUDA only
    std::vector<std::string> libraries;     ///< extra libraries allowed by the task, e.g. "cublas"
    std::vector<std::string> extra_flags;
    /** Folders of headers the candidate may include (the task's, the project's): -I, read-only in the sandbox. */
    std::vector<std::filesystem::path> include_dirs;
    double timeout_s = 180;  ///< wall time; each compiler process also gets as many seconds of CPU time (RLIMIT_CPU)
    CompileLimits limits;
};

/** `req.limits` with every 0 replaced by the backend's default. */
CompileLimits effective_limits(const CompileRequest& req);

struct CompileResult {
    bool ok = false;
    std::filesystem::path library;  ///< the shared object (in the cache) when ok
    std::string key;                ///< content hash (hex)
    CompileInfo info;
};

/** Parses nvcc / g++ / ptxas / ld output into diagnostics. `source_name` is the candidate's file name. */
std::vector<Diagnostic> parse_compiler_output(std::string_view output, std::string_view source_name);
/**
 * As above, and realigns nvcc's columns with the real lines of `files` (file name → text):
 * nvcc echoes the preprocessed line (`__device__` becomes `__attribute__((device))`), so its
 * caret is off wherever a macro precedes it on the line.
 */
std::vector<Diagnostic> parse_compiler_output(std::string_view output, std::string_view source_name,
                                              const std::map<std::string, std::string>& files);
/**
 * Refuses file names a candidate may not use, before it is compiled: `#include`,
 * `#include_next`, `#import`, `#embed`, `#pragma GCC dependency`, `_Pragma("...")`,
 * `__has_include`, `__has_include_next` and `__has_embed` naming an absolute path (/dev,
 * /proc, /sys included), a name containing "..", or a name computed by a macro; and the
 * assembler's `.incbin` / `.include`. Line continuations and comments are taken into
 * account. One error Diagnostic (tool "kfoundry") per offending line, naming the include;
 * empty when the source is acceptable.
 */
std::vector<Diagnostic> screen_includes(std::string_view source, std::string_view source_name);

/**
 * Compiler output with the quoted source lines, caret lines and quoted tokens withheld for
 * messages about files that are neither in `scratch` (the candidate, kf_task.h, the glue)
 * nor under one of `system_roots` (system and toolkit headers): they could quote a file the
 * candidate had no right to read.
 */
std::string withhold_outside_quotes(std::string_view output, const std::filesystem::path& scratch,
                                    const std::vector<std::filesystem::path>& system_roots);

/** Parses `ptxas -v` output ("Used N registers, ... bytes smem", "bytes stack frame, ... spill"). */
std::vector<ResourceUsage> parse_ptxas_usage(std::string_view output);

/** The compiler for a backend: CUDA $KF_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc; host $KF_CXX, else g++. */
std::string compiler_program(Backend b);
/**
 * The installation the compiler belongs to, from its real path: <root>/bin/<compiler> gives
 * <root> (/usr for g++, /usr/local/cuda-13.0 for nvcc); read-only in the compile sandbox.
 * Empty when the compiler is not found.
 */
std::filesystem::path compiler_root(Backend b);
/** candidate.cu (CUDA) or candidate.cpp (host): the source name when a request gives none. */
std::string default_source_name(Backend b);
/** kf_glue.cu (CUDA) or kf_glue.cpp (host): the file the compiler is given. */
std::string glue_file_name(Backend b);

/** The compiler command for a request (argv), given the folder holding its files. */
std::vector<std::string> compiler_command(const CompileRequest& req, const std::filesystem::path& workdir);

/**
 * A content-addressed cache of compiled candidates under `dir` (default:
 * $XDG_CACHE_HOME/kernel-foundry/compile). Entries are written to a temporary folder and
 * renamed into place, so a crash never leaves a half-written entry. Thread-safe.
 */
class CompileCache {
public:
    explicit CompileCache(std::filesystem::path dir = default_dir());
    static std::filesystem::path default_dir();
    const std::filesystem::path& dir() const { return dir_; }

    /** Compiles, or returns the cached result for an identical request. */
    CompileResult compile(const CompileRequest& req);
    std::string key_of(const CompileRequest& req);

private:
    /** `<compiler> --version` output, run once per backend; part of the key. */
    std::string compiler_identity(Backend b);
    CompileResult build(const CompileRequest& req, const std::string& key);
    std::filesystem::path dir_;
    std::mutex mutex_;
    std::map<int, std::string> identities_;
    /** Compiles in progress, so that identical requests at the same time compile once. */
    std::map<std::string, std::shared_future<CompileResult>> in_flight_;
};

/** Runs compiles on a fixed number of threads (default: all cores). */
class CompilePool {
public:
    explicit CompilePool(CompileCache& cache, unsigned threads = 0);
    ~CompilePool();
    std::future<CompileResult> submit(CompileRequest req);
    unsigned threads() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kf
