#pragma once
/**
 * Profiler-grade diagnosis (docs/profiling.md): Nsight Compute (`ncu`) run by the engine on a
 * one-shot worker invocation, its raw CSV parsed into per-kernel rows, a bound classifier
 * (memory, compute, latency, occupancy, launch_overhead) with the evidence it used, and
 * remedies for the router. Everything here except run_ncu is a pure function of its inputs.
 */
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"
#include "kf/error.h"
#include "kf/task.h"

namespace kf {

/** A malformed or truncated ncu CSV, or an ncu run that produced no usable data. */
class ProfileError : public Error {
public:
    using Error::Error;
};

/** The name of the NVTX push/pop range the worker wraps each profiled candidate call in. */
inline constexpr const char* kProfileRange = "kf_candidate";

/** Stall reasons read from smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio. */
const std::vector<std::string>& stall_reasons();
/** The metric names the engine asks ncu for (FIELD.md, sm_90), in a fixed order. */
const std::vector<std::string>& profile_metrics();
std::string stall_metric(const std::string& reason);

/** ncu's raw page as a table: column names, their units, one row of strings per launch. */
struct NcuTable {
    std::vector<std::string> columns;
    std::vector<std::string> units;  ///< empty strings where ncu printed none
    std::vector<std::vector<std::string>> rows;
    int column(std::string_view name) const;  ///< -1 when absent
};

/**
 * Parses `ncu --csv --page raw` output. Lines before the header row (==PROF==, ==WARNING==,
 * anything the profiled program printed) and "==" lines after it are skipped. Throws
 * ProfileError for a missing header, a missing units row, an unterminated quote or a row
 * whose field count differs from the header's (truncated output).
 */
NcuTable parse_ncu_csv(std::string_view text);

/**
 * A number as ncu prints it: thousands separators ("1,234.5"), surrounding spaces; NaN for
 * "n/a", "" and anything else that is not a number.
 */
double parse_ncu_number(std::string_view s);
/** "(256, 1, 1)" -> {256, 1, 1}; zeros when it cannot be read. */
std::array<std::int64_t, 3> parse_dim3(std::string_view s);

struct StallShare {
    std::string reason;
    double ratio = 0;  ///< warps stalled for this reason per issued instruction
    double share = 0;  ///< ratio / sum of all reasons' ratios
};

/** One kernel of the candidate (launches with the same name, grid and block merged). */
struct KernelProfile {
    std::string name;
    std::array<std::int64_t, 3> grid{0, 0, 0}, block{0, 0, 0};
    int launches = 0;           ///< launches per candidate call
    double duration_us = 0;     ///< mean duration of one launch (gpu__time_duration.sum)
    double total_us = 0;        ///< launches x duration_us: this kernel's time per call
    // Percentages (0-100); NaN when ncu did not report them.
    double sm_pct = 0, memory_pct = 0, dram_pct = 0;
    double achieved_occupancy_pct = 0, theoretical_occupancy_pct = 0;
    double l1_hit_pct = 0, l2_hit_pct = 0;
    double registers_per_thread = 0, shared_static_bytes = 0, shared_dynamic_bytes = 0;
    /** Blocks per SM allowed by each resource: registers, shared_mem, warps, blocks. */
    std::map<std::string, double> occupancy_limits;
    std::vector<StallShare> stalls;  ///< largest share first, zero ratios left out
    std::map<std::string, double> metrics;  ///< every metric column, mean over the launches
    /** The resource that limits occupancy most ("registers", "shared_mem", ...), or "". */
    std::string occupancy_limiter() const;
};

struct ProfileSummary {
    int kernels = 0;                ///< distinct kernels
    int launches = 0;               ///< launches per candidate call
    double total_duration_us = 0;   ///< sum of the kernels' time per call
    std::string dominant;           ///< the kernel with the largest share of that time
    double dominant_share = 0;
    // Duration-weighted means over the kernels (percent).
    double sm_pct = 0, memory_pct = 0, dram_pct = 0;
};

struct ProfileData {
    std::vector<KernelProfile> kernels;  ///< largest time per call first
    ProfileSummary summary;
    int runs = 1;  ///< profiled candidate calls the rows came from
};

/** Per-kernel rows and the summary from a parsed table of `runs` profiled calls. */
ProfileData profile_from_table(const NcuTable& table, int runs = 1);
/** parse_ncu_csv + profile_from_table. Throws ProfileError. */
ProfileData profile_from_csv(std::string_view text, int runs = 1);

/** Bound classes: memory, compute, latency, occupancy, launch_overhead. */
struct BoundVerdict {
    std::string bound;
    std::string source;                 ///< "profile" or "roofline" (or "" when neither)
    std::vector<std::string> evidence;  ///< e.g. "dram 87% of peak"
};

/** Thresholds of the classifier (docs/profiling.md). */
struct BoundThresholds {
    double saturated_pct = 60;           ///< SOL at or above: memory / compute bound
    double occupancy_gap = 0.5;          ///< achieved below this fraction of theoretical
    double low_theoretical_pct = 50;     ///< theoretical occupancy at or below, limited by registers/smem
    int launch_overhead_launches = 3;    ///< at least this many launches per call...
    double launch_overhead_us = 5;       ///< ...each shorter than this on average
};

/** From profiler metrics. */
BoundVerdict classify_bound(const ProfileData& p, const BoundThresholds& t = {});
/** From the roofline (time-based) numbers and the launch count when there is no profile. */
BoundVerdict classify_bound(const Roofline& r, std::int64_t kernel_launches, double median_ms,
                            const BoundThresholds& t = {});

/** A remedy token (the Diagnosis::advice vocabulary, docs/diagnosis.md) and the metrics behind it. */
struct Remedy {
    std::string remedy;
    std::string why;
};
std::vector<Remedy> advise_from_profile(const ProfileData& p, const BoundVerdict& v);

/** The `profile` object of the diagnosis (docs/diagnosis.md) for collected data. */
nlohmann::json profile_to_json(const ProfileData& p, const BoundVerdict& v, const std::vector<Remedy>& advice);
/**
 * {"available": false, "reason": ..., "code": ...}. Codes: backend (host backend), no_profiler
 * (ncu not found), permission (ERR_NVGPUCTRPERM), not_profiled (the candidate did not pass),
 * candidate (it faulted or failed to load under the profiler), compile, timeout, no_kernels,
 * failed (anything else: unreadable output, the worker died).
 */
nlohmann::json profile_unavailable(const std::string& reason, const std::string& code = "failed");

/**
 * Folds a profile object into a diagnosis: sets d.profile; when the profile is available,
 * roofline.bound takes the profiler's class (the time-based one stays in
 * profile.roofline_bound) and the advice becomes the profile's remedies followed by any
 * spill advice; when it is not, the object gets the roofline-based class and evidence.
 */
void apply_profile(Diagnosis& d, nlohmann::json profile);

/** Where ncu is: $KF_NCU, else `ncu` on PATH, else /usr/local/cuda/bin/ncu; empty with `why`. */
std::filesystem::path find_ncu(std::string& why);

/** One ncu run over a target program (the worker in its one-shot profile mode). */
struct NcuInvocation {
    std::filesystem::path ncu;
    std::vector<std::string> target;   ///< the program and its arguments
    std::vector<std::string> metrics = profile_metrics();
    std::string range = kProfileRange;  ///< NVTX push/pop range that selects the kernels
    int runs = 1;                       ///< profiled calls the target makes (to merge rows)
    int max_launches = 200;             ///< --launch-count
    std::chrono::milliseconds timeout{std::chrono::seconds(120)};
    std::filesystem::path keep_output;  ///< when set, ncu's raw output is written there
};

/** The ncu command line (for logs and docs). */
std::vector<std::string> ncu_command(const NcuInvocation& inv);

/**
 * Runs ncu with a time limit (its process group is killed on overrun) and returns the
 * profile object: available with kernels, summary, bound, evidence and advice, or
 * unavailable with the reason (no ncu, counters not permitted (ERR_NVGPUCTRPERM), timeout,
 * no kernel in the range, unreadable output). Metrics the device does not know are dropped
 * and the run retried once; they are listed in `missing_metrics`. Never throws.
 */
nlohmann::json run_ncu(const NcuInvocation& inv);

/** One compiled candidate to profile through the worker's one-shot mode (docs/worker-protocol.md). */
struct ProfileRequest {
    std::filesystem::path ncu;       ///< empty: find_ncu()
    std::filesystem::path worker;    ///< kfoundry-worker
    Backend backend = Backend::Cuda;
    int device = 0;
    std::filesystem::path task_dir;
    std::filesystem::path library;   ///< the compiled candidate (shared object)
    std::string case_name;           ///< empty: the primary case
    int warmup = 2;                  ///< unprofiled calls first
    int runs = 1;                    ///< profiled calls, each inside the NVTX range
    std::uint64_t seed = 1;
    int max_launches = 200;
    double timeout_s = 120;
    std::filesystem::path keep_output;  ///< when set, ncu's raw output is written there
};

/**
 * Writes the request file, runs ncu over `kfoundry-worker --profile-request FILE` and
 * returns the profile object; a candidate that faults under the profiler, a worker that
 * dies, or no CUDA backend give {"available": false, "reason", "code"}. Never throws.
 */
nlohmann::json profile_library(const ProfileRequest& req);

}  // namespace kf
