#pragma once
/**
 * The native task format: a folder holding `task.json` (the manifest), a CUDA reference and
 * a host C++ reference, each defining the typed entry point `kf_solve`. See docs/task-format.md.
 */
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kf/computation.h"
#include "kf/dtype.h"
#include "kf/expr.h"

namespace kf {

enum class Backend { Cuda, Host };
std::string_view to_string(Backend b);
std::optional<Backend> backend_from_string(std::string_view s);

/** How a tensor's elements are drawn for each trial. */
struct InitSpec {
    std::string dist = "uniform";  ///< uniform, normal, randint, bernoulli, constant
    double a = -1.0;               ///< low / mean / low / p / value
    double b = 1.0;                ///< high / std / high (exclusive) / - / -
};

struct Tolerance {
    double atol = 1e-5;
    double rtol = 1e-5;
};

enum class TensorRole { Input, Output };

struct TensorSpec {
    std::string name;
    TensorRole role = TensorRole::Input;
    DType dtype = DType::F32;
    std::vector<Expr> shape;  ///< one expression of the sizes per dimension
    InitSpec init;            ///< inputs only
    Tolerance tolerance;      ///< outputs only (the task's tolerance unless overridden)
};

struct ParamSpec {
    std::string name;
    DType dtype = DType::F32;  ///< f32, f64, i32 or i64
    double value = 0;
};

struct Rules {
    std::vector<std::string> allowed_libraries;  ///< e.g. "cublas"; empty: none
    bool allow_tf32 = false;
    bool allow_tensor_cores = true;  ///< tensor-core instructions at the task's own precision
};

struct TaskCase {
    std::string name;
    bool primary = false;
    std::vector<Backend> backends;  ///< empty: every backend
    std::map<std::string, std::int64_t> sizes;
    std::map<std::string, double> params;  ///< overrides of the params' default values
    bool runs_on(Backend b) const;
};

struct Task {
    std::filesystem::path dir;
    std::filesystem::path manifest;
    int format = 1;
    std::string name, title, description, op_class;
    std::vector<std::string> size_names;
    DType size_type = DType::I32;  ///< i32 or i64: the C type of the size arguments
    std::vector<TensorSpec> tensors;
    std::vector<ParamSpec> params;
    Tolerance tolerance;
    Expr flops, bytes;
    Rules rules;
    std::vector<TaskCase> cases;
    std::map<Backend, std::filesystem::path> references;  ///< absolute paths
    std::vector<std::string> tags;
    /** What the task computes, as declared in the manifest (docs/task-format.md); may be absent. */
    std::optional<Computation> computation;

    bool supports(Backend b) const { return references.count(b) != 0; }
    /** The primary case for a backend followed by the validation cases that run on it. */
    std::vector<const TaskCase*> cases_for(Backend b) const;
    const TaskCase& primary_case(Backend b) const;
    const TaskCase* find_case(const std::string& name) const;

    std::map<std::string, double> variables(const TaskCase& c) const;
    std::vector<std::int64_t> shape_of(const TensorSpec& t, const TaskCase& c) const;
    std::int64_t elements_of(const TensorSpec& t, const TaskCase& c) const;
    double flops_of(const TaskCase& c) const;
    double bytes_of(const TaskCase& c) const;
    double param_value(const ParamSpec& p, const TaskCase& c) const;
};

/** Loads and validates a task folder (or its task.json); throws TaskError(file, field, reason). */
Task load_task(const std::filesystem::path& dir_or_manifest);

/** Task folders (those holding a task.json) under root, sorted by path. */
std::vector<std::filesystem::path> find_task_dirs(const std::filesystem::path& root);

/** Resolves a task argument: a folder or manifest path, or a name under the bundled tasks
 * (kf::bundled_tasks_dir: "softmax" or "level1/softmax"). nullopt when nothing matches. */
std::optional<std::filesystem::path> resolve_task(const std::string& arg);

/** The typed entry-point header shown to users and included by candidates. */
std::string entry_header(const Task& task, Backend backend);

/**
 * The glue translation unit compiled with a candidate: it includes the header and the
 * candidate file, then defines `kf_entry`, the untyped trampoline the worker calls.
 */
std::string entry_glue(const Task& task, Backend backend, const std::string& candidate_file);

/** A signature with whitespace runs collapsed to one space: how pattern signatures are compared. */
std::string normalize_signature(const std::string& signature);
/** The `extern "C" void kf_solve(...);` declaration of a task's entry point, on one line. */
std::string entry_signature(const Task& task, Backend backend);

/** Name of the exported trampoline and its signature. */
inline constexpr const char* kEntrySymbol = "kf_entry";
using EntryFn = void (*)(void* const* tensors, const long long* sizes, const double* params, void* stream);

}  // namespace kf
