#include "loaded_libraries.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace kf::worker {

namespace {

struct LibraryFile {
    const char* prefix;   ///< start of the file name
    const char* library;  ///< the name a task's rules allow it by; null: never allowed
    const char* label;
};

// cublasLt's files also start with "libcublas": the longer prefix comes first.
constexpr LibraryFile kLibraries[] = {
    {"libcublasLt", "cublasLt", "cuBLASLt"}, {"libcublas", "cublas", "cuBLAS"},   {"libnvblas", "cublas", "NVBLAS"},
    {"libcudnn", "cudnn", "cuDNN"},          {"libcufft", "cufft", "cuFFT"},      {"libcurand", "curand", "cuRAND"},
    {"libcusparse", "cusparse", "cuSPARSE"}, {"libcusolver", nullptr, "cuSOLVER"}, {"libnccl", nullptr, "NCCL"},
    {"libopenblas", nullptr, "OpenBLAS"},    {"libcblas", nullptr, "CBLAS"},      {"libgslcblas", nullptr, "CBLAS"},
    {"libblas", nullptr, "BLAS"},            {"libblis", nullptr, "BLIS"},        {"libmkl", nullptr, "MKL"},
    {"liblapack", nullptr, "LAPACK"},
};

}  // namespace

MappedFiles mapped_files(int pid) {
    MappedFiles out;
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    if (!in) return out;
    std::set<std::string> seen;
    for (std::string line; std::getline(in, line);) {
        out.readable = true;
        auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        std::string path = line.substr(slash);
        if (path.find(".so") != std::string::npos && seen.insert(path).second) out.paths.push_back(path);
    }
    return out;
}

std::vector<std::string> forbidden_libraries(const std::vector<std::string>& paths, const Rules& rules) {
    std::vector<std::string> out;
    for (const auto& path : paths) {
        const std::string name = std::filesystem::path(path).filename().string();
        for (const auto& lib : kLibraries) {
            if (name.rfind(lib.prefix, 0) != 0) continue;
            const bool allowed = lib.library && std::find(rules.allowed_libraries.begin(), rules.allowed_libraries.end(),
                                                          lib.library) != rules.allowed_libraries.end();
            if (!allowed) out.push_back(path + " (" + lib.label + ")");
            break;
        }
    }
    return out;
}

}  // namespace kf::worker
