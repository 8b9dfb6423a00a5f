// Nsight Compute's raw CSV page (`ncu --csv --page raw`) into per-kernel rows
// (docs/profiling.md). Written to fail with a clear ProfileError, never to crash, on
// truncated or malformed output.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "kf/profile.h"
#include "kf/text.h"

namespace kf {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* kDuration = "gpu__time_duration.sum";
const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const char* kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const char* kMemory = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
const char* kAchieved = "sm__warps_active.avg.pct_of_peak_sustained_active";
const char* kTheoretical = "sm__maximum_warps_per_active_cycle_pct";
const char* kRegisters = "launch__registers_per_thread";
const char* kSmemStatic = "launch__shared_mem_per_block_static";
const char* kSmemDynamic = "launch__shared_mem_per_block_dynamic";
const char* kL1Hit = "l1tex__t_sector_hit_rate.pct";
const char* kL2Hit = "lts__t_sector_hit_rate.pct";
const char* kGridSize = "launch__grid_size";
const char* kBlockSize = "launch__block_size";
const char* kLimitPrefix = "launch__occupancy_limit_";

using util::trim;

/** Splits one CSV record; false when a quoted field is not terminated on the line. */
bool split_csv(std::string_view line, std::vector<std::string>& out) {
    out.clear();
    std::string field;
    bool quoted = false, was_quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
            was_quoted = true;
        } else if (c == ',') {
            out.push_back(was_quoted ? field : trim(field));
            field.clear();
            was_quoted = false;
        } else {
            field += c;
        }
    }
    if (quoted) return false;
    out.push_back(was_quoted ? field : trim(field));
    return true;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t nl = text.find('\n', start);
        std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        std::string_view l = text.substr(start, end - start);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        lines.push_back(l);
        if (nl == std::string_view::npos) break;
        start = nl + 1;
    }
    return lines;
}

bool is_tool_line(std::string_view l) {
    std::string t = trim(l);
    return t.rfind("==", 0) == 0;
}

bool is_header(const std::vector<std::string>& f) {
    return !f.empty() && f[0] == "ID" && std::find(f.begin(), f.end(), "Kernel Name") != f.end();
}

/** Factor that brings a value in `unit` to the base unit of its kind (µs for time, bytes). */
double unit_scale(const std::string& unit, bool time) {
    std::string u;
    for (char c : unit) {
        if (c == '/') break;  // "byte/block"
        u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (time) {
        if (u == "nsecond" || u == "ns") return 1e-3;
        if (u == "usecond" || u == "us") return 1.0;
        if (u == "msecond" || u == "ms") return 1e3;
        if (u == "second" || u == "s") return 1e6;
        return 1e-3;  // ncu's base unit for durations is the nanosecond
    }
    if (u == "kbyte" || u == "kb") return 1e3;
    if (u == "mbyte" || u == "mb") return 1e6;
    if (u == "kibyte" || u == "kib") return 1024.0;
    if (u == "mibyte" || u == "mib") return 1024.0 * 1024.0;
    return 1.0;
}

double value_or_nan(const std::map<std::string, double>& m, const char* key) {
    auto it = m.find(key);
    return it == m.end() ? kNaN : it->second;
}

}  // namespace

const std::vector<std::string>& stall_reasons() {
    static const std::vector<std::string> r = {
        "long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier",        "math_pipe_throttle",
        "wait",            "not_selected",     "no_instruction", "dispatch_stall", "drain",       "imc_miss",
        "membar",          "branch_resolving", "sleeping",     "tex_throttle", "selected"};
    return r;
}

std::string stall_metric(const std::string& reason) {
    return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

const std::vector<std::string>& profile_metrics() {
    static const std::vector<std::string> m = [] {
        std::vector<std::string> v = {kDuration,
                                      kDram,
                                      kSm,
                                      kMemory,
                                      kAchieved,
                                      kTheoretical,
                                      kRegisters,
                                      kSmemStatic,
                                      kSmemDynamic,
                                      kL1Hit,
                                      kL2Hit,
                                      kGridSize,
                                      kBlockSize,
                                      "launch__occupancy_limit_registers",
                                      "launch__occupancy_limit_shared_mem",
                                      "launch__occupancy_limit_warps",
                                      "launch__occupancy_limit_blocks"};
        for (const auto& r : stall_reasons()) v.push_back(stall_metric(r));
        return v;
    }();
    return m;
}

int NcuTable::column(std::string_view name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
        if (columns[i] == name) return static_cast<int>(i);
    return -1;
}

double parse_ncu_number(std::string_view s) {
    std::string t;
    for (char c : s)
        if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) t += c;
    if (t.empty()) return kNaN;
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end != '\0' || std::isinf(v)) return kNaN;
    return v;
}

std::array<std::int64_t, 3> parse_dim3(std::string_view s) {
    std::array<std::int64_t, 3> d{0, 0, 0};
    std::size_t k = 0;
    std::string num;
    auto flush = [&] {
        if (!num.empty() && k < 3) d[k++] = std::strtoll(num.c_str(), nullptr, 10);
        num.clear();
    };
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c))) num += c;
        else flush();
    }
    flush();
    if (k == 0) return {0, 0, 0};
    for (; k < 3; ++k) d[k] = 1;
    return d;
}

NcuTable parse_ncu_csv(std::string_view text) {
    auto lines = split_lines(text);
    NcuTable t;
    std::size_t i = 0;
    std::vector<std::string> fields;
    for (; i < lines.size(); ++i) {
        if (lines[i].empty() || is_tool_line(lines[i])) continue;
        if (split_csv(lines[i], fields) && is_header(fields)) break;
    }
    if (i == lines.size())
        throw ProfileError("no ncu CSV header (a row starting with \"ID\" and naming \"Kernel Name\") in the output");
    t.columns = fields;
    ++i;
    // The units row follows the header.
    for (; i < lines.size(); ++i) {
        if (lines[i].empty() || is_tool_line(lines[i])) continue;
        if (!split_csv(lines[i], fields)) throw ProfileError("ncu CSV: unterminated quote in the units row (truncated output?)");
        if (fields.size() != t.columns.size())
            throw ProfileError("ncu CSV: the units row has " + std::to_string(fields.size()) + " fields, the header " +
                               std::to_string(t.columns.size()) + " (truncated output?)");
        t.units = fields;
        ++i;
        break;
    }
    if (t.units.empty()) throw ProfileError("ncu CSV: the header is not followed by a units row (truncated output?)");
    for (; i < lines.size(); ++i) {
        if (trim(lines[i]).empty() || is_tool_line(lines[i])) continue;
        if (!split_csv(lines[i], fields))
            throw ProfileError("ncu CSV: unterminated quote in row " + std::to_string(t.rows.size() + 1) +
                               " (truncated output?)");
        if (fields.size() != t.columns.size())
            throw ProfileError("ncu CSV: row " + std::to_string(t.rows.size() + 1) + " has " + std::to_string(fields.size()) +
                               " fields, the header " + std::to_string(t.columns.size()) + " (truncated output?)");
        t.rows.push_back(fields);
    }
    return t;
}

std::string KernelProfile::occupancy_limiter() const {
    std::string best;
    double low = std::numeric_limits<double>::infinity();
    // Ties go to the block-size limits (warps, blocks): registers or shared memory limit
    // occupancy only when they allow strictly fewer blocks.
    for (const char* r : {"warps", "blocks", "registers", "shared_mem"}) {
        auto it = occupancy_limits.find(r);
        if (it == occupancy_limits.end() || std::isnan(it->second)) continue;
        if (it->second < low) {
            low = it->second;
            best = r;
        }
    }
    return best;
}

namespace {

/** The columns of metrics (their names hold "__"). */
std::vector<int> metric_columns(const NcuTable& table) {
    std::vector<int> metric_cols;
    for (std::size_t c = 0; c < table.columns.size(); ++c)
        if (table.columns[c].find("__") != std::string::npos) metric_cols.push_back(static_cast<int>(c));
    return metric_cols;
}

/** One kernel's launches (one name, grid and block): how many, and each metric's sum and count. */
struct KernelSums {
    KernelProfile k;
    int count = 0;
    std::map<std::string, std::pair<double, int>> sums;
};

/** The rows' columns this reading needs. */
struct Columns {
    int name, grid, block;
    const std::vector<int>& metrics;
};

/** A row's grid or block size, {0, 0, 0} without its column. */
std::array<std::int64_t, 3> dim3_of(const std::vector<std::string>& row, int col) {
    return col >= 0 ? parse_dim3(row[static_cast<std::size_t>(col)]) : std::array<std::int64_t, 3>{0, 0, 0};
}

/** Adds a row's metrics (durations and shared memory in their units) to the sums of its kernel. */
void add_row_metrics(KernelSums& a, const NcuTable& table, const std::vector<std::string>& row,
                     const std::vector<int>& metric_cols) {
    ++a.count;
    for (int c : metric_cols) {
        const std::string& col = table.columns[static_cast<std::size_t>(c)];
        double v = parse_ncu_number(row[static_cast<std::size_t>(c)]);
        if (std::isnan(v)) continue;
        const std::string& unit = table.units[static_cast<std::size_t>(c)];
        if (col == kDuration) v *= unit_scale(unit, true);
        else if (col == kSmemStatic || col == kSmemDynamic) v *= unit_scale(unit, false);
        auto& s = a.sums[col];
        s.first += v;
        s.second += 1;
    }
}

/** The rows gathered by kernel (name, grid and block), in the order each kernel first appears. */
std::vector<KernelSums> gather_kernels(const NcuTable& table, const Columns& cols) {
    std::vector<KernelSums> accs;
    std::map<std::string, std::size_t> index;
    for (const auto& row : table.rows) {
        std::string name = row[static_cast<std::size_t>(cols.name)];
        std::array<std::int64_t, 3> grid = dim3_of(row, cols.grid);
        std::array<std::int64_t, 3> block = dim3_of(row, cols.block);
        std::string key = name + "|" + std::to_string(grid[0]) + "," + std::to_string(grid[1]) + "," +
                          std::to_string(grid[2]) + "|" + std::to_string(block[0]) + "," + std::to_string(block[1]) + "," +
                          std::to_string(block[2]);
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, accs.size()).first;
            accs.emplace_back();
            accs.back().k.name = name;
            accs.back().k.grid = grid;
            accs.back().k.block = block;
        }
        add_row_metrics(accs[it->second], table, row, cols.metrics);
    }
    return accs;
}

/** Reads the named fields (durations, throughputs, occupancy, caches, resources) from the kernel's metrics. */
void read_named_metrics(KernelProfile& k) {
    k.duration_us = value_or_nan(k.metrics, kDuration);
    k.total_us = std::isnan(k.duration_us) ? 0 : k.duration_us * k.launches;
    k.sm_pct = value_or_nan(k.metrics, kSm);
    k.memory_pct = value_or_nan(k.metrics, kMemory);
    k.dram_pct = value_or_nan(k.metrics, kDram);
    k.achieved_occupancy_pct = value_or_nan(k.metrics, kAchieved);
    k.theoretical_occupancy_pct = value_or_nan(k.metrics, kTheoretical);
    k.l1_hit_pct = value_or_nan(k.metrics, kL1Hit);
    k.l2_hit_pct = value_or_nan(k.metrics, kL2Hit);
    k.registers_per_thread = value_or_nan(k.metrics, kRegisters);
    k.shared_static_bytes = value_or_nan(k.metrics, kSmemStatic);
    k.shared_dynamic_bytes = value_or_nan(k.metrics, kSmemDynamic);
    if (k.grid == std::array<std::int64_t, 3>{0, 0, 0}) {
        double g = value_or_nan(k.metrics, kGridSize);
        if (!std::isnan(g)) k.grid = {static_cast<std::int64_t>(g), 1, 1};
    }
    if (k.block == std::array<std::int64_t, 3>{0, 0, 0}) {
        double b = value_or_nan(k.metrics, kBlockSize);
        if (!std::isnan(b)) k.block = {static_cast<std::int64_t>(b), 1, 1};
    }
    for (const auto& [col, v] : k.metrics)
        if (col.rfind(kLimitPrefix, 0) == 0) k.occupancy_limits[col.substr(std::string(kLimitPrefix).size())] = v;
}

/** The stall reasons the kernel reported, largest first, each with its share of them all. */
void read_stalls(KernelProfile& k) {
    double sum = 0;
    for (const auto& r : stall_reasons()) {
        double v = value_or_nan(k.metrics, stall_metric(r).c_str());
        if (!std::isnan(v) && v > 0) {
            k.stalls.push_back({r, v, 0});
            sum += v;
        }
    }
    for (auto& s : k.stalls) s.share = sum > 0 ? s.ratio / sum : 0;
    std::stable_sort(k.stalls.begin(), k.stalls.end(),
                     [](const StallShare& x, const StallShare& y) { return x.ratio > y.ratio; });
}

/** Completes the kernel's profile from its launches: each metric's mean, launches per call, the named fields and
 * the stalls. */
void finish_kernel(KernelSums& a, const NcuTable& table, const std::vector<int>& metric_cols, int runs) {
    KernelProfile& k = a.k;
    for (int c : metric_cols) {
        const std::string& col = table.columns[static_cast<std::size_t>(c)];
        auto it = a.sums.find(col);
        k.metrics[col] = it == a.sums.end() ? kNaN : it->second.first / it->second.second;
    }
    k.launches = std::max(1, static_cast<int>(std::lround(static_cast<double>(a.count) / runs)));
    read_named_metrics(k);
    read_stalls(k);
}

/** A field's mean over the kernels, weighted by their time (equally when no duration was reported). */
double weighted_mean(const std::vector<KernelProfile>& kernels, double total_duration_us,
                     double KernelProfile::*field) {
    double num = 0, den = 0;
    for (const auto& k : kernels) {
        double v = k.*field;
        if (std::isnan(v)) continue;
        double w = total_duration_us > 0 ? k.total_us : 1.0;
        num += w * v;
        den += w;
    }
    return den > 0 ? num / den : kNaN;
}

/** The summary of kernels sorted by their time: counts, the dominant kernel, the weighted means. */
void summarise(ProfileData& p) {
    ProfileSummary& s = p.summary;
    s.kernels = static_cast<int>(p.kernels.size());
    for (const auto& k : p.kernels) {
        s.launches += k.launches;
        s.total_duration_us += k.total_us;
    }
    s.dominant = p.kernels.front().name;
    s.dominant_share = s.total_duration_us > 0 ? p.kernels.front().total_us / s.total_duration_us : 1.0;
    // Duration-weighted means (equal weights when no duration was reported).
    s.sm_pct = weighted_mean(p.kernels, s.total_duration_us, &KernelProfile::sm_pct);
    s.memory_pct = weighted_mean(p.kernels, s.total_duration_us, &KernelProfile::memory_pct);
    s.dram_pct = weighted_mean(p.kernels, s.total_duration_us, &KernelProfile::dram_pct);
}

}  // namespace

ProfileData profile_from_table(const NcuTable& table, int runs) {
    if (table.rows.empty()) throw ProfileError("ncu profiled no kernel (no kernel ran inside the NVTX range)");
    runs = std::max(runs, 1);
    const int name_col = table.column("Kernel Name");
    const int grid_col = table.column("Grid Size");
    const int block_col = table.column("Block Size");
    if (name_col < 0) throw ProfileError("ncu CSV: no \"Kernel Name\" column");
    std::vector<int> metric_cols = metric_columns(table);
    if (metric_cols.empty()) throw ProfileError("ncu CSV: no metric columns");

    std::vector<KernelSums> accs = gather_kernels(table, {name_col, grid_col, block_col, metric_cols});

    ProfileData p;
    p.runs = runs;
    for (auto& a : accs) {
        finish_kernel(a, table, metric_cols, runs);
        p.kernels.push_back(std::move(a.k));
    }
    std::stable_sort(p.kernels.begin(), p.kernels.end(),
                     [](const KernelProfile& x, const KernelProfile& y) { return x.total_us > y.total_us; });
    summarise(p);
    return p;
}

ProfileData profile_from_csv(std::string_view text, int runs) { return profile_from_table(parse_ncu_csv(text), runs); }

}  // namespace kf
