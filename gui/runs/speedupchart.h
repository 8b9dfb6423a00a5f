#pragma once
#include <vector>

#include <QList>
#include <QPointF>
#include <QtCharts/QChartView>

#include "runs/engineevent.h"

class QLineSeries;
class QValueAxis;

namespace kfgui {

/**
 * Best speedup per island over evaluations: one line series per island, a step up each time
 * the island finds a better member. Events are counted as they come; the series are rebuilt
 * with QXYSeries::replace() in refresh(), which the search view calls on its timer.
 */
class SpeedupChart : public QChartView {
    Q_OBJECT

public:
    explicit SpeedupChart(QWidget* parent = nullptr);

    void clear();
    /** Counts the evaluations among `events`; no repaint until refresh(). */
    void add(const EngineEventList& events);
    void refresh();

    int evaluations() const { return evaluations_; }
    double bestOf(int island) const;
    /** The series of an island (null when it has none yet), for tests. */
    QLineSeries* series(int island) const;

private:
    struct Island {
        double best = 0;
        QList<QPointF> points;  ///< (evaluation, best so far) at each improvement
        QLineSeries* series = nullptr;
    };
    Island& island(int index);

    std::vector<Island> islands_;
    int evaluations_ = 0;
    double maxSpeedup_ = 0;
    bool dirty_ = false;
    QValueAxis* x_;
    QValueAxis* y_;
};

}  // namespace kfgui
