#include "runs/speedupchart.h"

#include "runs/niceaxis.h"

#include <algorithm>

#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

namespace kfgui {

SpeedupChart::SpeedupChart(QWidget* parent) : QChartView(parent), x_(new QValueAxis), y_(new QValueAxis) {
    setObjectName(QStringLiteral("speedupChart"));
    auto* c = new QChart;
    c->setTitle(tr("Best speedup per island"));
    c->legend()->setAlignment(Qt::AlignBottom);
    x_->setTitleText(tr("Evaluations"));
    x_->setLabelFormat(QStringLiteral("%d"));
    x_->setTickCount(6);
    y_->setTickCount(5);
    y_->setTitleText(tr("Speedup over the reference (×)"));
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    setChart(c);
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(180);
    clear();
}

void SpeedupChart::clear() {
    for (Island& i : islands_) {
        chart()->removeSeries(i.series);
        delete i.series;
    }
    islands_.clear();
    evaluations_ = 0;
    maxSpeedup_ = 0;
    dirty_ = true;
    refresh();
}

SpeedupChart::Island& SpeedupChart::island(int index) {
    while (static_cast<int>(islands_.size()) <= index) {
        Island i;
        i.series = new QLineSeries;
        i.series->setName(tr("Island %1").arg(islands_.size()));
        chart()->addSeries(i.series);
        i.series->attachAxis(x_);
        i.series->attachAxis(y_);
        islands_.push_back(i);
    }
    return islands_[static_cast<std::size_t>(index)];
}

void SpeedupChart::add(const EngineEventList& events) {
    for (const EngineEvent& e : events) {
        if (!e.isEvaluation()) continue;
        ++evaluations_;
        dirty_ = true;
        if (e.island < 0) continue;
        Island& i = island(e.island);
        if (i.points.isEmpty()) i.points.append(QPointF(evaluations_, 0));
        if (e.fitness > i.best) {
            // A step: the old best up to this evaluation, then the new one.
            i.points.append(QPointF(evaluations_, i.best));
            i.points.append(QPointF(evaluations_, e.fitness));
            i.best = e.fitness;
            maxSpeedup_ = std::max(maxSpeedup_, e.fitness);
        }
    }
}

void SpeedupChart::refresh() {
    if (!dirty_) return;
    dirty_ = false;
    for (Island& i : islands_) {
        QList<QPointF> points = i.points;
        if (!points.isEmpty() && points.last().x() < evaluations_) points.append(QPointF(evaluations_, i.best));
        i.series->replace(points);
    }
    // Round ends (ticks at 0, 0.5, 1, ...); the axes change only when the data outgrows them.
    x_->setRange(0, niceAxisMax(std::max(10, evaluations_), 5, true));
    y_->setRange(0, niceAxisMax(std::max(1.5, maxSpeedup_ * 1.05), 4, false));
}

double SpeedupChart::bestOf(int index) const {
    return index >= 0 && index < static_cast<int>(islands_.size()) ? islands_[static_cast<std::size_t>(index)].best : 0;
}

QLineSeries* SpeedupChart::series(int index) const {
    return index >= 0 && index < static_cast<int>(islands_.size()) ? islands_[static_cast<std::size_t>(index)].series
                                                                     : nullptr;
}

}  // namespace kfgui
