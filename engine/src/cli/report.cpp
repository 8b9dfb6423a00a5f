#include "report.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace kf::cli {

namespace {

std::string num(double v, int precision = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    return buf;
}

std::string source_line(const std::string& source, int line) {
    std::istringstream in(source);
    std::string text;
    for (int i = 1; std::getline(in, text); ++i)
        if (i == line) return text;
    return {};
}

}  // namespace

std::string render_diagnosis(const Diagnosis& d, const std::string& source) {
    std::ostringstream os;
    auto row = [&](const char* label, const std::string& text) { os << "  " << label << std::string(11 - std::string(label).size(), ' ') << text << "\n"; };
    row("task", d.task + " (" + d.backend + (d.device.empty() ? "" : ", " + d.device) + ")");
    row("status", std::string(to_string(d.status)) + ": " + d.message);
    row("stage", std::string(to_string(d.stage)) + (d.eval_seconds > 0 ? " (evaluation " + num(d.eval_seconds, 3) + " s)" : ""));

    std::string compile = d.compile.cached ? "cached" : num(d.compile.seconds, 3) + " s";
    if (!d.compile.compiler.empty()) compile += " (" + d.compile.compiler + ")";
    row("compile", compile);
    for (const auto& r : d.compile.resources)
        row("", r.kernel + ": " + std::to_string(r.registers) + " registers, " + std::to_string(r.shared_bytes) +
                    " B shared, " + std::to_string(r.stack_bytes) + " B stack, spills " + std::to_string(r.spill_store_bytes) +
                    "/" + std::to_string(r.spill_load_bytes) + " B");
    int shown = 0;
    for (const auto& dg : d.compile.diagnostics) {
        if (dg.severity == Severity::Note || ++shown > 12) continue;
        std::string where = dg.file + (dg.line ? ":" + std::to_string(dg.line) : "") + (dg.column ? ":" + std::to_string(dg.column) : "");
        os << "    " << where << ": " << to_string(dg.severity) << ": " << dg.message << "\n";
        if (dg.line > 0 && (dg.file.find("candidate") != std::string::npos || dg.file.find("kf_") == std::string::npos)) {
            std::string text = source_line(source, dg.line);
            if (!text.empty()) {
                os << "      " << text << "\n";
                if (dg.column > 0) os << "      " << std::string(static_cast<std::size_t>(dg.column - 1), ' ') << "^\n";
            }
        }
    }
    if (d.correctness) {
        const auto& c = *d.correctness;
        row("correct", std::string(c.passed ? "yes" : "no") + ": " + std::to_string(c.trials) + " trials x " +
                           std::to_string(c.cases.size()) + " cases, max abs err " + num(c.max_abs_error) + ", max rel err " +
                           num(c.max_rel_error));
        for (const auto& cc : c.cases) {
            std::string line = cc.name + ": " + std::to_string(cc.trials_passed) + "/" + std::to_string(cc.trials) + " trials";
            if (cc.mismatches) line += ", " + std::to_string(cc.mismatches) + " mismatches";
            if (cc.nan_count) line += ", " + std::to_string(cc.nan_count) + " NaN";
            if (cc.inf_count) line += ", " + std::to_string(cc.inf_count) + " Inf";
            if (cc.unwritten) line += ", " + std::to_string(cc.unwritten) + " unwritten";
            if (cc.inputs_modified) line += ", modified input " + cc.modified_input;
            if (cc.out_of_bounds_write) line += ", wrote past the end of " + cc.out_of_bounds_tensor;
            if (cc.first_mismatch_index >= 0)
                line += "; first at " + cc.first_mismatch_tensor + "[" + std::to_string(cc.first_mismatch_index) + "] expected " +
                        num(cc.first_expected, 7) + " got " + num(cc.first_actual, 7);
            row("", line);
        }
    }
    if (d.timing) {
        const auto& t = *d.timing;
        row("timing", "median " + num(t.median_ms, 4) + " ms (min " + num(t.min_ms, 4) + ", spread " + num(100 * t.spread, 2) +
                          "%, " + std::to_string(t.reps) + " reps) on case " + t.case_name);
        row("", "reference " + num(t.reference_median_ms, 4) + " ms (" + std::to_string(t.reference_reps) + " reps): speedup " +
                    num(t.speedup, 3) + "x");
    }
    if (d.roofline) {
        const auto& r = *d.roofline;
        row("roofline", num(r.achieved_gbps, 4) + " GB/s (" + num(100 * r.bandwidth_fraction, 3) + "% of " + num(r.peak_gbps, 4) +
                            "), " + num(r.achieved_gflops, 4) + " GFLOP/s (" + num(100 * r.compute_fraction, 3) + "% of " +
                            num(r.peak_gflops, 4) + "), " + r.bound + "-bound, floor " + num(r.floor_ms, 3) + " ms");
    }
    if (d.kernel_launches >= 0) row("launches", std::to_string(d.kernel_launches) + " kernel(s) per call");
    if (!d.integrity.empty()) {
        row("integrity", "");
        for (const auto& c : d.integrity) os << "    " << c.outcome << std::string(8 - std::min<std::size_t>(7, c.outcome.size()), ' ') << c.name << ": " << c.detail << "\n";
    }
    if (!d.advice.empty()) {
        std::string a;
        for (const auto& x : d.advice) a += (a.empty() ? "" : ", ") + x;
        row("advice", a);
    }
    return os.str();
}

std::string render_device(const nlohmann::json& info) {
    std::ostringstream os;
    const auto& d = info["device"];
    const auto& p = info["peaks"];
    os << "  backend    " << d.value("backend", "") << "\n"
       << "  name       " << d.value("name", "") << "\n";
    if (d.value("backend", "") == "cuda")
        os << "  arch       " << d.value("arch", "") << " (compute capability " << d.value("cc_major", 0) << "."
           << d.value("cc_minor", 0) << ")\n"
           << "  SMs        " << d.value("sm_count", 0) << "\n"
           << "  memory     " << num(d.value("memory_bytes", 0.0) / (1ull << 30), 4) << " GiB, L2 "
           << num(d.value("l2_bytes", 0.0) / (1 << 20), 4) << " MiB\n"
           << "  driver     " << d.value("driver", "") << "\n";
    else
        os << "  cores      " << d.value("sm_count", 0) << "\n"
           << "  memory     " << num(d.value("memory_bytes", 0.0) / (1ull << 30), 4) << " GiB, last-level cache "
           << num(d.value("l2_bytes", 0.0) / (1 << 20), 4) << " MiB\n";
    os << "  bandwidth  " << num(p.value("bandwidth_gbps", 0.0), 4) << " GB/s (measured copy, read + write)\n"
       << "  fp32       " << num(p.value("fp32_gflops", 0.0), 4) << " GFLOP/s (measured FMA rate)\n"
       << "  method     " << p.value("method", "") << "\n";
    return os.str();
}

}  // namespace kf::cli
