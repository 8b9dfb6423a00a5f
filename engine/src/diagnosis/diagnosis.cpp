// JSON form of the diagnosis record (docs/diagnosis.md). Readers accept missing fields so
// that records written by older builds of the same schema version still load.
#include "kf/diagnosis.h"

#include <limits>

#include "kf/error.h"

namespace kf {

using nlohmann::json;

namespace {
template <class T>
void read(const json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) it->get_to(out);
}
// JSON has no NaN or Inf: they are written as null and read back as NaN.
double number_or_nan(const json& j, const char* key) {
    auto it = j.find(key);
    return (it != j.end() && it->is_number()) ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}
}  // namespace

#define KF_W(f) j[#f] = v.f
#define KF_R(f) read(j, #f, v.f)

std::string_view to_string(Stage s) {
    switch (s) {
    case Stage::Compile: return "compile";
    case Stage::Load: return "load";
    case Stage::Correctness: return "correctness";
    case Stage::Integrity: return "integrity";
    case Stage::Timing: return "timing";
    case Stage::Profile: return "profile";
    case Stage::Done: return "done";
    }
    return "compile";
}

Stage stage_from_string(std::string_view s) {
    for (Stage st : {Stage::Compile, Stage::Load, Stage::Correctness, Stage::Integrity, Stage::Timing, Stage::Profile,
                     Stage::Done})
        if (to_string(st) == s) return st;
    throw Error("unknown diagnosis stage '" + std::string(s) + "'");
}

std::string_view to_string(Severity s) {
    switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    }
    return "error";
}

void to_json(json& j, const Diagnostic& v) {
    j = json::object();
    KF_W(file);
    KF_W(line);
    KF_W(column);
    j["severity"] = to_string(v.severity);
    KF_W(message);
    KF_W(tool);
}
void from_json(const json& j, Diagnostic& v) {
    KF_R(file);
    KF_R(line);
    KF_R(column);
    std::string sev = j.value("severity", "error");
    v.severity = sev == "warning" ? Severity::Warning : sev == "note" ? Severity::Note : Severity::Error;
    KF_R(message);
    KF_R(tool);
}

void to_json(json& j, const ResourceUsage& v) {
    j = json::object();
    KF_W(kernel);
    KF_W(registers);
    KF_W(shared_bytes);
    KF_W(constant_bytes);
    KF_W(stack_bytes);
    KF_W(spill_store_bytes);
    KF_W(spill_load_bytes);
}
void from_json(const json& j, ResourceUsage& v) {
    KF_R(kernel);
    KF_R(registers);
    KF_R(shared_bytes);
    KF_R(constant_bytes);
    KF_R(stack_bytes);
    KF_R(spill_store_bytes);
    KF_R(spill_load_bytes);
}

void to_json(json& j, const CompileInfo& v) {
    j = json::object();
    KF_W(ok);
    KF_W(cached);
    KF_W(seconds);
    KF_W(compiler);
    KF_W(diagnostics);
    KF_W(resources);
    KF_W(log);
}
void from_json(const json& j, CompileInfo& v) {
    KF_R(ok);
    KF_R(cached);
    KF_R(seconds);
    KF_R(compiler);
    KF_R(diagnostics);
    KF_R(resources);
    KF_R(log);
}

void to_json(json& j, const CaseCorrectness& v) {
    j = json::object();
    KF_W(name);
    KF_W(passed);
    KF_W(trials);
    KF_W(trials_passed);
    KF_W(max_abs_error);
    KF_W(max_rel_error);
    KF_W(mismatches);
    KF_W(elements);
    KF_W(nan_count);
    KF_W(inf_count);
    KF_W(unwritten);
    KF_W(inputs_modified);
    KF_W(modified_input);
    KF_W(out_of_bounds_write);
    KF_W(out_of_bounds_tensor);
    if (v.first_mismatch_index >= 0)
        j["first_mismatch"] = {{"tensor", v.first_mismatch_tensor},
                               {"index", v.first_mismatch_index},
                               {"expected", v.first_expected},
                               {"actual", v.first_actual}};
    else
        j["first_mismatch"] = nullptr;
}
void from_json(const json& j, CaseCorrectness& v) {
    KF_R(name);
    KF_R(passed);
    KF_R(trials);
    KF_R(trials_passed);
    KF_R(max_abs_error);
    KF_R(max_rel_error);
    KF_R(mismatches);
    KF_R(elements);
    KF_R(nan_count);
    KF_R(inf_count);
    KF_R(unwritten);
    KF_R(inputs_modified);
    KF_R(modified_input);
    KF_R(out_of_bounds_write);
    KF_R(out_of_bounds_tensor);
    if (auto it = j.find("first_mismatch"); it != j.end() && it->is_object()) {
        v.first_mismatch_tensor = it->value("tensor", "");
        v.first_mismatch_index = it->value("index", std::int64_t{-1});
        v.first_expected = number_or_nan(*it, "expected");
        v.first_actual = number_or_nan(*it, "actual");
    }
}

void to_json(json& j, const Correctness& v) {
    j = json::object();
    KF_W(passed);
    KF_W(trials);
    KF_W(max_abs_error);
    KF_W(max_rel_error);
    KF_W(mismatches);
    KF_W(cases);
}
void from_json(const json& j, Correctness& v) {
    KF_R(passed);
    KF_R(trials);
    KF_R(max_abs_error);
    KF_R(max_rel_error);
    KF_R(mismatches);
    KF_R(cases);
}

void to_json(json& j, const Timing& v) {
    j = json::object();
    KF_W(case_name);
    KF_W(median_ms);
    KF_W(min_ms);
    KF_W(max_ms);
    KF_W(mean_ms);
    KF_W(spread);
    KF_W(reps);
    KF_W(warmup);
    KF_W(wall_median_ms);
    KF_W(reference_median_ms);
    KF_W(reference_min_ms);
    KF_W(reference_spread);
    KF_W(reference_reps);
    KF_W(speedup);
}
void from_json(const json& j, Timing& v) {
    KF_R(case_name);
    KF_R(median_ms);
    KF_R(min_ms);
    KF_R(max_ms);
    KF_R(mean_ms);
    KF_R(spread);
    KF_R(reps);
    KF_R(warmup);
    KF_R(wall_median_ms);
    KF_R(reference_median_ms);
    KF_R(reference_min_ms);
    KF_R(reference_spread);
    KF_R(reference_reps);
    KF_R(speedup);
}

void to_json(json& j, const Roofline& v) {
    j = json::object();
    KF_W(flops);
    KF_W(bytes);
    KF_W(achieved_gbps);
    KF_W(achieved_gflops);
    KF_W(peak_gbps);
    KF_W(peak_gflops);
    KF_W(bandwidth_fraction);
    KF_W(compute_fraction);
    KF_W(arithmetic_intensity);
    KF_W(ridge_point);
    KF_W(floor_ms);
    KF_W(bound);
}
void from_json(const json& j, Roofline& v) {
    KF_R(flops);
    KF_R(bytes);
    KF_R(achieved_gbps);
    KF_R(achieved_gflops);
    KF_R(peak_gbps);
    KF_R(peak_gflops);
    KF_R(bandwidth_fraction);
    KF_R(compute_fraction);
    KF_R(arithmetic_intensity);
    KF_R(ridge_point);
    KF_R(floor_ms);
    KF_R(bound);
}

void to_json(json& j, const IntegrityCheck& v) {
    j = json::object();
    KF_W(name);
    KF_W(outcome);
    KF_W(detail);
}
void from_json(const json& j, IntegrityCheck& v) {
    KF_R(name);
    KF_R(outcome);
    KF_R(detail);
}

void to_json(json& j, const Diagnosis& v) {
    j = json::object();
    KF_W(schema_version);
    j["status"] = to_string(v.status);
    j["stage"] = to_string(v.stage);
    KF_W(message);
    KF_W(task);
    KF_W(backend);
    KF_W(device);
    KF_W(compile);
    j["correctness"] = v.correctness ? json(*v.correctness) : json(nullptr);
    j["timing"] = v.timing ? json(*v.timing) : json(nullptr);
    j["roofline"] = v.roofline ? json(*v.roofline) : json(nullptr);
    KF_W(profile);
    KF_W(integrity);
    KF_W(kernel_launches);
    KF_W(eval_seconds);
    if (!v.runner.is_null()) KF_W(runner);
    if (!v.phases.is_null()) KF_W(phases);
    if (!v.ran_on.empty()) KF_W(ran_on);
    KF_W(advice);
}

void from_json(const json& j, Diagnosis& v) {
    int version = j.value("schema_version", 0);
    if (version > kDiagnosisSchemaVersion)
        throw Error("diagnosis schema version " + std::to_string(version) + " is newer than this build reads (" +
                    std::to_string(kDiagnosisSchemaVersion) + ")");
    v.schema_version = version;
    v.status = status_from_string(j.value("status", "runtime_error"));
    v.stage = stage_from_string(j.value("stage", "compile"));
    KF_R(message);
    KF_R(task);
    KF_R(backend);
    KF_R(device);
    KF_R(compile);
    if (auto it = j.find("correctness"); it != j.end() && it->is_object()) v.correctness = it->get<Correctness>();
    if (auto it = j.find("timing"); it != j.end() && it->is_object()) v.timing = it->get<Timing>();
    if (auto it = j.find("roofline"); it != j.end() && it->is_object()) v.roofline = it->get<Roofline>();
    if (auto it = j.find("profile"); it != j.end()) v.profile = *it;
    KF_R(integrity);
    KF_R(kernel_launches);
    KF_R(eval_seconds);
    if (auto it = j.find("runner"); it != j.end() && it->is_object()) v.runner = *it;
    if (auto it = j.find("phases"); it != j.end() && it->is_object()) v.phases = *it;
    KF_R(ran_on);
    KF_R(advice);
}

double Diagnosis::fitness() const { return (ok() && timing) ? timing->speedup : 0.0; }

}  // namespace kf
