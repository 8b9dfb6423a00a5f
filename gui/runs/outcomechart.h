#pragma once
#include <cstdint>
#include <vector>

#include <QtCharts/QChartView>

#include "runs/engineevent.h"

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace kfgui {

/**
 * Outcomes over time: the evaluations split into consecutive windows (at most ~60 of them,
 * so that a long run stays cheap to draw) and, per window, the counts of each status
 * stacked as areas: correct, incorrect, compile error, runtime error, timeout, integrity...
 */
class OutcomeChart : public QChartView {
    Q_OBJECT

public:
    explicit OutcomeChart(QWidget* parent = nullptr);

    /** The statuses in stacking order (kf::Status names). */
    static const std::vector<QString>& statuses();

    void clear();
    void add(const EngineEventList& events);
    void refresh();

    int total() const { return static_cast<int>(outcomes_.size()); }
    int count(const QString& status) const;
    int windowSize() const { return window_; }

private:
    std::vector<std::uint8_t> outcomes_;  ///< index into statuses() per evaluation
    std::vector<QLineSeries*> upper_;
    std::vector<QAreaSeries*> areas_;
    QLineSeries* zero_;
    QValueAxis* x_;
    QValueAxis* y_;
    int window_ = 1;
    bool dirty_ = false;
};

}  // namespace kfgui
