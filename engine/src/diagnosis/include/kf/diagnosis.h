#pragma once
/**
 * The diagnosis record: one versioned, structured result per evaluation. It drives the
 * router, the prompts, the charts and the library. JSON form documented in docs/diagnosis.md.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/vocabulary.h"

namespace kf {

inline constexpr int kDiagnosisSchemaVersion = 1;

/** The furthest stage an evaluation reached. */
enum class Stage { Compile, Load, Correctness, Integrity, Timing, Profile, Done };
std::string_view to_string(Stage s);
Stage stage_from_string(std::string_view s);

enum class Severity { Error, Warning, Note };

/** One compiler message, mapped to the candidate's own file and line where possible. */
struct Diagnostic {
    std::string file;
    int line = 0;    ///< 1-based; 0 when the message names no line
    int column = 0;  ///< 1-based; 0 when unknown
    Severity severity = Severity::Error;
    std::string message;
    std::string tool;  ///< "nvcc", "ptxas", "g++", "ld"
};

/** ptxas resource usage of one kernel (CUDA backend). */
struct ResourceUsage {
    std::string kernel;  ///< mangled name as ptxas prints it
    int registers = 0;
    int shared_bytes = 0;    ///< static shared memory
    int constant_bytes = 0;  ///< cmem[0]
    int stack_bytes = 0;
    int spill_store_bytes = 0;
    int spill_load_bytes = 0;
};

struct CompileInfo {
    bool ok = false;
    bool cached = false;
    double seconds = 0;  ///< wall time of the compiler (0 when cached)
    std::string compiler;
    std::vector<Diagnostic> diagnostics;
    std::vector<ResourceUsage> resources;
    std::string log;  ///< raw compiler output, truncated
};

/** Correctness statistics for one case (primary or validation size). */
struct CaseCorrectness {
    std::string name;
    bool passed = false;
    int trials = 0;
    int trials_passed = 0;
    double max_abs_error = 0;
    double max_rel_error = 0;
    std::int64_t mismatches = 0;
    std::int64_t elements = 0;
    std::int64_t nan_count = 0;   ///< NaN in the candidate where the reference has none
    std::int64_t inf_count = 0;
    std::int64_t unwritten = 0;   ///< elements still holding the poison pattern
    bool inputs_modified = false;
    std::string modified_input;
    bool out_of_bounds_write = false;
    std::string out_of_bounds_tensor;
    // First mismatch (when mismatches > 0).
    std::string first_mismatch_tensor;
    std::int64_t first_mismatch_index = -1;
    double first_expected = 0, first_actual = 0;
};

struct Correctness {
    bool passed = false;
    int trials = 0;  ///< trials per case
    std::vector<CaseCorrectness> cases;
    double max_abs_error = 0;
    double max_rel_error = 0;
    std::int64_t mismatches = 0;
};

struct Timing {
    double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
    double spread = 0;  ///< (p90 - p10) / median
    int reps = 0, warmup = 0;
    double wall_median_ms = 0;  ///< host wall clock around call + device sync
    double reference_median_ms = 0, reference_min_ms = 0, reference_spread = 0;
    int reference_reps = 0;
    double speedup = 0;  ///< reference median / candidate median, measured side by side
    std::string case_name;
};

struct Roofline {
    double flops = 0, bytes = 0;
    double achieved_gbps = 0, achieved_gflops = 0;
    double peak_gbps = 0, peak_gflops = 0;  ///< measured on this device
    double bandwidth_fraction = 0, compute_fraction = 0;
    double arithmetic_intensity = 0, ridge_point = 0;
    double floor_ms = 0;  ///< max(bytes / peak bandwidth, flops / peak rate)
    std::string bound;    ///< memory, compute, latency
};

/** One anti-cheat check: name, outcome pass | fail | skipped, and why. */
struct IntegrityCheck {
    std::string name;
    std::string outcome;
    std::string detail;
};

struct Diagnosis {
    int schema_version = kDiagnosisSchemaVersion;
    Status status = Status::CompileError;
    Stage stage = Stage::Compile;
    std::string message;  ///< one line a person reads first
    std::string backend;
    std::string device;
    std::string task;
    CompileInfo compile;
    std::optional<Correctness> correctness;
    std::optional<Timing> timing;
    std::optional<Roofline> roofline;
    nlohmann::json profile;  ///< profiler metrics when collected, else null
    std::vector<IntegrityCheck> integrity;
    std::vector<std::string> advice;  ///< remedies for the router, e.g. "repair_compile"
    std::int64_t kernel_launches = -1;  ///< kernels the candidate launched in one call; -1 unknown
    double eval_seconds = 0;  ///< wall time of the worker's part (correctness, integrity, timing)
    /** The candidate's runner process (docs/sandbox.md, Cost): null where it ran in the
     *  worker's process; else {"ahead": started before the candidate was known, "waited_ms":
     *  what the evaluation waited for it until its library was loaded, "setup_ms": its own
     *  set-up (device, confinement)}. */
    nlohmann::json runner;
    /** Where the worker's part spent its wall time, in ms (docs/diagnosis.md): correctness,
     *  reference timing (where this evaluation timed it), the candidate's timing loop (its
     *  repetitions and per-call steps) and the check after timing; null when not reported. */
    nlohmann::json phases;
    /** Where the worker's part ran: a host name, or "slurm:<job>@<node>" (docs/cluster.md); empty: not run. */
    std::string ran_on;

    bool ok() const { return status == Status::Ok; }
    /** Speedup when correct and timed, else 0. */
    double fitness() const;
};

void to_json(nlohmann::json& j, const Diagnostic& d);
void from_json(const nlohmann::json& j, Diagnostic& d);
void to_json(nlohmann::json& j, const ResourceUsage& r);
void from_json(const nlohmann::json& j, ResourceUsage& r);
void to_json(nlohmann::json& j, const CompileInfo& c);
void from_json(const nlohmann::json& j, CompileInfo& c);
void to_json(nlohmann::json& j, const CaseCorrectness& c);
void from_json(const nlohmann::json& j, CaseCorrectness& c);
void to_json(nlohmann::json& j, const Correctness& c);
void from_json(const nlohmann::json& j, Correctness& c);
void to_json(nlohmann::json& j, const Timing& t);
void from_json(const nlohmann::json& j, Timing& t);
void to_json(nlohmann::json& j, const Roofline& r);
void from_json(const nlohmann::json& j, Roofline& r);
void to_json(nlohmann::json& j, const IntegrityCheck& c);
void from_json(const nlohmann::json& j, IntegrityCheck& c);
void to_json(nlohmann::json& j, const Diagnosis& d);
/** Throws kf::Error when the schema version is newer than this build understands. */
void from_json(const nlohmann::json& j, Diagnosis& d);

std::string_view to_string(Severity s);

}  // namespace kf
