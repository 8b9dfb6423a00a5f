#include "kf/screening.h"

#include <algorithm>
#include <sstream>

#include "kf/process.h"

namespace kf {

namespace {

struct LibraryRule {
    const char* library;  // name in rules.allowed_libraries
    const char* prefix;   // symbol prefix
    const char* label;
};

constexpr LibraryRule kLibraries[] = {
    {"cublasLt", "cublasLt", "cuBLASLt"}, {"cublas", "cublas", "cuBLAS"}, {"cudnn", "cudnn", "cuDNN"},
    {"cufft", "cufft", "cuFFT"},          {"curand", "curand", "cuRAND"}, {"cusparse", "cusparse", "cuSPARSE"},
    {nullptr, "cusolver", "cuSOLVER"},    {nullptr, "nccl", "NCCL"},      {nullptr, "cblas_", "CBLAS"},
    {nullptr, "sgemm_", "BLAS"},          {nullptr, "dgemm_", "BLAS"},    {nullptr, "mkl_", "MKL"},
};

// Calls that load code, start threads or processes, or escape the worker's control.
constexpr const char* kForbiddenCalls[] = {"dlopen", "dlmopen", "dlsym", "dlvsym", "pthread_create", "thrd_create",
                                           "fork", "vfork", "clone", "execve", "execv", "execvp", "execvpe", "execl",
                                           "execlp", "execle", "system", "popen", "posix_spawn", "posix_spawnp",
                                           "cuModuleLoad", "cuLibraryLoadFromFile"};

bool allowed(const Rules& rules, const char* library) {
    return library && std::find(rules.allowed_libraries.begin(), rules.allowed_libraries.end(), library) !=
                          rules.allowed_libraries.end();
}

}  // namespace

std::vector<std::string> forbidden_symbols(const std::vector<std::string>& symbols, const Rules& rules) {
    std::vector<std::string> out;
    for (const auto& full : symbols) {
        std::string s = full.substr(0, full.find('@'));  // strip symbol versions
        for (const auto& lib : kLibraries)
            if (s.rfind(lib.prefix, 0) == 0) {
                // cublasLt symbols also start with "cublas": the longer rule comes first.
                if (!allowed(rules, lib.library)) out.push_back(s + " (" + lib.label + " is not allowed by the task)");
                goto next;
            }
        for (const char* call : kForbiddenCalls)
            if (s == call) {
                out.push_back(s + " (candidates may not load code or start threads or processes)");
                goto next;
            }
        if (s.find("_M_start_thread") != std::string::npos) out.push_back(s + " (std::thread: candidates may not start threads)");
    next:;
    }
    return out;
}

SymbolScreen screen_symbols(const std::filesystem::path& library, const Rules& rules) {
    SymbolScreen r;
    ProcessResult p = run_process({"nm", "-D", "--undefined-only", library.string()}, std::chrono::seconds(30));
    if (p.start_failed || p.exit_code != 0) {
        r.error = p.start_failed ? p.output : "nm failed: " + p.output.substr(0, 300);
        return r;
    }
    std::vector<std::string> symbols;
    std::istringstream in(p.output);
    std::string line;
    while (std::getline(in, line)) {
        // "                 U cublasCreate_v2@libcublas.so.13" or "w __gmon_start__"
        std::istringstream ls(line);
        std::string kind, name;
        ls >> kind >> name;
        if (!name.empty()) symbols.push_back(name);
    }
    r.ran = true;
    r.undefined_symbols = symbols.size();
    r.forbidden = forbidden_symbols(symbols, rules);
    return r;
}

}  // namespace kf
