#include "compare/candidatemetrics.h"

#include <QCoreApplication>

#include <algorithm>
#include <cctype>

namespace kfgui {

namespace {

// The metric names are translated in the context "kfgui::CandidateMetrics".
struct Text {
    Q_DECLARE_TR_FUNCTIONS(kfgui::CandidateMetrics)
};

std::optional<double> number(const nlohmann::json& j, const char* section, const char* key) {
    if (!j.is_object() || !j.contains(section)) return std::nullopt;
    const nlohmann::json& s = j.at(section);
    if (!s.is_object() || !s.contains(key) || !s.at(key).is_number()) return std::nullopt;
    return s.at(key).get<double>();
}

// Profiler metrics come in whatever shape the profiler reports: look for keys by name.
void findProfile(const nlohmann::json& j, const std::string& prefix, std::optional<double>& occupancy,
                 QList<Metric>& stalls) {
    if (!j.is_object()) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object()) {
            findProfile(*it, key, occupancy, stalls);
            continue;
        }
        if (!it->is_number()) continue;
        std::string lower = key;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (lower.find("stall") != std::string::npos)
            stalls << Metric{Text::tr("Stall: %1").arg(QString::fromStdString(it.key())), it->get<double>(), true};
        else if (!occupancy && lower.find("occupancy") != std::string::npos)
            occupancy = it->get<double>();
    }
}

}  // namespace

QList<Metric> candidateMetrics(const nlohmann::json& d) {
    QList<Metric> out;
    out << Metric{Text::tr("Time (ms)"), number(d, "timing", "median_ms"), true};
    out << Metric{Text::tr("GB/s"), number(d, "roofline", "achieved_gbps"), false};
    out << Metric{Text::tr("GFLOP/s"), number(d, "roofline", "achieved_gflops"), false};
    out << Metric{Text::tr("Speedup"), number(d, "timing", "speedup"), false};
    std::optional<double> registers;
    if (d.is_object() && d.contains("compile") && d["compile"].is_object() && d["compile"].contains("resources"))
        for (const auto& r : d["compile"]["resources"])
            if (r.is_object() && r.contains("registers") && r["registers"].is_number())
                registers = std::max(registers.value_or(0.0), r["registers"].get<double>());
    out << Metric{Text::tr("Registers"), registers, true};
    std::optional<double> occupancy;
    QList<Metric> stalls;
    if (d.is_object() && d.contains("profile")) findProfile(d["profile"], {}, occupancy, stalls);
    out << Metric{Text::tr("Occupancy"), occupancy, false};
    out << stalls;
    // A failed evaluation has no meaningful time even if a field is present.
    if (d.is_object() && d.value("status", std::string()) != "ok")
        for (int i = 0; i < 4; ++i) out[i].value.reset();
    return out;
}

QString formatMetric(const std::optional<double>& v) {
    return v ? QString::number(*v, 'g', 4) : QStringLiteral("—");
}

}  // namespace kfgui
