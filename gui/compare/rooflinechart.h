#pragma once
#include <QList>
#include <QWidget>

#include <vector>

#include "kf/store.h"

class QChart;
class QChartView;
class QLabel;
class QScatterSeries;

namespace kfgui {

/** One evaluated candidate on the roofline. */
struct RooflinePoint {
    qint64 candidateId = 0;
    double intensity = 0;  ///< FLOP per byte
    double gflops = 0;
    double speedup = 0;
};

/**
 * Every correct candidate of a run at (arithmetic intensity, GFLOP/s) on log axes, under the
 * roofs of the device's measured peaks (bandwidth × intensity, then the compute peak).
 * Clicking a point emits candidateActivated.
 */
class RooflineChart : public QWidget {
    Q_OBJECT

public:
    explicit RooflineChart(QWidget* parent = nullptr);

    /** Plots the run's evaluations: only status "ok" with positive intensity and rate. */
    void setEvaluations(const std::vector<kf::EvaluationRecord>& evaluations, const QString& title);
    const QList<RooflinePoint>& points() const { return points_; }
    QScatterSeries* series() const { return series_; }
    QChart* chart() const;
    double peakGbps() const { return peakGbps_; }
    double peakGflops() const { return peakGflops_; }

Q_SIGNALS:
    void candidateActivated(qint64 id);

private:
    void onClicked(const QPointF& p);

    QChartView* view_;
    QLabel* empty_;
    QScatterSeries* series_ = nullptr;
    QList<RooflinePoint> points_;
    double peakGbps_ = 0, peakGflops_ = 0;
};

}  // namespace kfgui
