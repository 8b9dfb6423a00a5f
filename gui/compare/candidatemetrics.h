#pragma once
#include <QList>
#include <QString>

#include <optional>

#include <nlohmann/json.hpp>

namespace kfgui {

/** One comparable number of a diagnosis; absent when the evaluation did not measure it. */
struct Metric {
    QString name;  ///< translated label, also the chart's category
    std::optional<double> value;
    bool lowerIsBetter = false;
};

/**
 * The metrics two candidates are compared on, read from a diagnosis in its JSON form: time,
 * GB/s, GFLOP/s, speedup, registers, occupancy and, when the profiler collected them, each
 * stall reason. Nothing is invented: a metric that was not measured stays empty.
 */
QList<Metric> candidateMetrics(const nlohmann::json& diagnosis);

/** "—" for an absent value, else the number with a few significant digits. */
QString formatMetric(const std::optional<double>& v);

}  // namespace kfgui
