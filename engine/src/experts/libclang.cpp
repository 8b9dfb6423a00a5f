// Loading libclang at run time (libclang.h): dlopen of the first library that opens, every
// function resolved with dlsym, and the directory of clang's own headers found beside it.
#include "libclang.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#ifdef KF_HAVE_CLANG_C
#include <dlfcn.h>
#endif

namespace kf {

std::vector<std::string> libclang_candidates() {
    if (const char* env = std::getenv("KF_LIBCLANG"); env && *env) return {env};
    return {"libclang-14.so.1", "libclang.so.1", "libclang-15.so.1", "libclang.so"};
}

#ifdef KF_HAVE_CLANG_C

namespace {

namespace fs = std::filesystem;

/** The directory of clang's headers (<dir>/include/stddef.h) for the library at `lib`. */
std::string find_resource_dir(const fs::path& lib) {
    std::error_code ec;
    fs::path real = fs::canonical(lib, ec);
    if (ec) real = lib;
    // The major version from the name (libclang-14.so.1), else from an llvm-<N> directory.
    std::string major;
    for (const fs::path& p : {real, lib}) {
        std::string s = p.string();
        for (const std::string key : {"libclang-", "llvm-"}) {
            auto at = s.rfind(key);
            if (at == std::string::npos) continue;
            std::size_t i = at + key.size(), j = i;
            while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
            if (j > i && major.empty()) major = s.substr(i, j - i);
        }
    }
    std::vector<fs::path> roots = {real.parent_path() / "clang", real.parent_path().parent_path() / "lib" / "clang"};
    if (!major.empty()) roots.push_back(fs::path("/usr/lib/llvm-" + major) / "lib" / "clang");
    for (const fs::path& root : roots) {
        if (!fs::is_directory(root, ec)) continue;
        for (const auto& entry : fs::directory_iterator(root, ec)) {
            std::string version = entry.path().filename().string();
            bool matches = major.empty() || version == major || version.rfind(major + ".", 0) == 0;
            if (matches && fs::exists(entry.path() / "include" / "stddef.h", ec)) return entry.path().string();
        }
    }
    return {};
}

template <typename F>
bool resolve(void* handle, const char* name, F& out, std::string& missing) {
    out = reinterpret_cast<F>(dlsym(handle, name));
    if (!out) missing += std::string(missing.empty() ? "" : ", ") + name;
    return out != nullptr;
}

std::unique_ptr<Libclang> open_one(const std::string& name, std::string& why) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = dlerror();
        why = e ? e : name + ": cannot be opened";
        return nullptr;
    }
    auto api = std::make_unique<Libclang>();
    std::string missing;
#define KF_RESOLVE(field, symbol) resolve(handle, #symbol, api->field, missing)
    KF_RESOLVE(createIndex, clang_createIndex);
    KF_RESOLVE(disposeIndex, clang_disposeIndex);
    KF_RESOLVE(parseTranslationUnit2, clang_parseTranslationUnit2);
    KF_RESOLVE(disposeTranslationUnit, clang_disposeTranslationUnit);
    KF_RESOLVE(getTranslationUnitCursor, clang_getTranslationUnitCursor);
    KF_RESOLVE(getNumDiagnostics, clang_getNumDiagnostics);
    KF_RESOLVE(getDiagnostic, clang_getDiagnostic);
    KF_RESOLVE(getDiagnosticSeverity, clang_getDiagnosticSeverity);
    KF_RESOLVE(getDiagnosticSpelling, clang_getDiagnosticSpelling);
    KF_RESOLVE(getDiagnosticLocation, clang_getDiagnosticLocation);
    KF_RESOLVE(disposeDiagnostic, clang_disposeDiagnostic);
    KF_RESOLVE(visitChildren, clang_visitChildren);
    KF_RESOLVE(getCursorKind, clang_getCursorKind);
    KF_RESOLVE(getCursorKindSpelling, clang_getCursorKindSpelling);
    KF_RESOLVE(getCursorSpelling, clang_getCursorSpelling);
    KF_RESOLVE(getCString, clang_getCString);
    KF_RESOLVE(disposeString, clang_disposeString);
    KF_RESOLVE(getCursorExtent, clang_getCursorExtent);
    KF_RESOLVE(getCursorLocation, clang_getCursorLocation);
    KF_RESOLVE(getRangeStart, clang_getRangeStart);
    KF_RESOLVE(getRangeEnd, clang_getRangeEnd);
    KF_RESOLVE(getExpansionLocation, clang_getExpansionLocation);
    KF_RESOLVE(locationIsFromMainFile, clang_Location_isFromMainFile);
    KF_RESOLVE(tokenize, clang_tokenize);
    KF_RESOLVE(disposeTokens, clang_disposeTokens);
    KF_RESOLVE(getTokenSpelling, clang_getTokenSpelling);
    KF_RESOLVE(getTokenKind, clang_getTokenKind);
    KF_RESOLVE(getTokenExtent, clang_getTokenExtent);
    KF_RESOLVE(isCursorDefinition, clang_isCursorDefinition);
    KF_RESOLVE(isExpression, clang_isExpression);
    KF_RESOLVE(cursorGetNumArguments, clang_Cursor_getNumArguments);
    KF_RESOLVE(cursorGetArgument, clang_Cursor_getArgument);
    KF_RESOLVE(getCursorType, clang_getCursorType);
    KF_RESOLVE(getCanonicalType, clang_getCanonicalType);
    KF_RESOLVE(getTypeSpelling, clang_getTypeSpelling);
    KF_RESOLVE(getArrayElementType, clang_getArrayElementType);
    KF_RESOLVE(getArraySize, clang_getArraySize);
    KF_RESOLVE(getPointeeType, clang_getPointeeType);
    KF_RESOLVE(typeGetSizeOf, clang_Type_getSizeOf);
    KF_RESOLVE(cursorEvaluate, clang_Cursor_Evaluate);
    KF_RESOLVE(evalResultGetKind, clang_EvalResult_getKind);
    KF_RESOLVE(evalResultGetAsDouble, clang_EvalResult_getAsDouble);
    KF_RESOLVE(evalResultGetAsLongLong, clang_EvalResult_getAsLongLong);
    KF_RESOLVE(evalResultDispose, clang_EvalResult_dispose);
    KF_RESOLVE(getCursorReferenced, clang_getCursorReferenced);
#undef KF_RESOLVE
    if (!missing.empty()) {
        why = name + " lacks " + missing;
        dlclose(handle);
        return nullptr;
    }
    Dl_info info{};
    std::string path = name;
    if (dladdr(reinterpret_cast<void*>(api->createIndex), &info) && info.dli_fname) path = info.dli_fname;
    api->path = path;
    api->resource_dir = find_resource_dir(path);
    return api;
}

}  // namespace

const Libclang* load_libclang(std::string* why) {
    struct Loaded {
        std::unique_ptr<Libclang> api;
        std::string why;
    };
    static std::mutex mutex;
    static std::map<std::vector<std::string>, Loaded> loaded;  // per candidate list: KF_LIBCLANG may change
    std::vector<std::string> names = libclang_candidates();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = loaded.find(names);
    if (it == loaded.end()) {
        Loaded l;
        for (const auto& name : names) {
            std::string one;
            l.api = open_one(name, one);
            if (l.api) break;
            l.why += (l.why.empty() ? "" : "; ") + one;
        }
        it = loaded.emplace(names, std::move(l)).first;
    }
    if (!it->second.api && why) *why = "libclang not found (" + it->second.why + ")";
    return it->second.api.get();
}

#else

const Libclang* load_libclang(std::string* why) {
    if (why) *why = "libclang not found (built without clang-c/Index.h)";
    return nullptr;
}

#endif

}  // namespace kf
