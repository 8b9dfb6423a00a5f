#include "compare/candidatemetrics.h"

#include <QCoreApplication>

#include <algorithm>

#include "kf/vocabulary.h"

namespace kfgui {

namespace {

// The metric names are translated in the context "kfgui::CandidateMetrics".
struct Text {
    Q_DECLARE_TR_FUNCTIONS(kfgui::CandidateMetrics)
};

std::optional<double> number(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
    return j.at(key).get<double>();
}

std::optional<double> number(const nlohmann::json& j, const char* section, const char* key) {
    if (!j.is_object() || !j.contains(section)) return std::nullopt;
    return number(j.at(section), key);
}

}  // namespace

QList<Metric> candidateMetrics(const nlohmann::json& d) {
    const bool ok = d.is_object() && kf::parse_status(d.value("status", std::string())) == kf::Status::Ok;
    // A failed evaluation has no meaningful time or rate even if a field is present.
    auto measured = [ok](std::optional<double> v) { return ok ? v : std::nullopt; };
    QList<Metric> out;
    out << Metric{Text::tr("Time (ms)"), measured(number(d, "timing", "median_ms")), true};
    out << Metric{Text::tr("GB/s"), measured(number(d, "roofline", "achieved_gbps")), false};
    out << Metric{Text::tr("GFLOP/s"), measured(number(d, "roofline", "achieved_gflops")), false};
    out << Metric{Text::tr("Speedup"), measured(number(d, "timing", "speedup")), false};

    // The dominant kernel of an available profile (docs/diagnosis.md, "Profile").
    nlohmann::json kernel;
    if (d.is_object() && d.contains("profile") && d["profile"].is_object()) {
        const nlohmann::json& p = d["profile"];
        if (p.value("available", false) && p.contains("kernels") && p["kernels"].is_array() && !p["kernels"].empty())
            kernel = p["kernels"][0];
    }
    // Registers: the largest ptxas count of the candidate's kernels, else the profiler's.
    std::optional<double> registers;
    if (d.is_object() && d.contains("compile") && d["compile"].is_object() && d["compile"].contains("resources"))
        for (const auto& r : d["compile"]["resources"])
            if (auto v = number(r, "registers")) registers = std::max(registers.value_or(0.0), *v);
    if (!registers) registers = number(kernel, "registers_per_thread");
    out << Metric{Text::tr("Registers"), registers, true};
    out << Metric{Text::tr("Occupancy (%)"), number(kernel, "achieved_occupancy_pct"), false};
    if (kernel.contains("stalls") && kernel["stalls"].is_array())
        for (const auto& s : kernel["stalls"])
            if (s.is_object() && s.contains("reason") && s["reason"].is_string())
                out << Metric{Text::tr("Stall: %1").arg(QString::fromStdString(s["reason"].get<std::string>())),
                              number(s, "share"), true};
    return out;
}

QString formatMetric(const std::optional<double>& v) {
    return v ? QString::number(*v, 'g', 4) : QStringLiteral("—");
}

}  // namespace kfgui
