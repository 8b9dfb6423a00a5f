#pragma once
/**
 * Compiling candidates: nvcc (CUDA backend) or the host C++ compiler (host backend) to a
 * shared object, in parallel, cached by content hash. Compiler output becomes structured
 * Diagnostics mapped to the candidate's own file and lines; ptxas resource usage is read at
 * compile time.
 */
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
    double timeout_s = 180;
};

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
/** Parses `ptxas -v` output ("Used N registers, ... bytes smem", "bytes stack frame, ... spill"). */
std::vector<ResourceUsage> parse_ptxas_usage(std::string_view output);

/** SHA-256 of data, as lower-case hex. */
std::string sha256_hex(std::string_view data);

/** The compiler for a backend: CUDA $KF_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc; host $KF_CXX, else g++. */
std::string compiler_program(Backend b);
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
