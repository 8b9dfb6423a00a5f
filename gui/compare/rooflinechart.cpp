#include "compare/rooflinechart.h"

#include <QChart>
#include <QChartView>
#include <QHash>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kfgui {

RooflineChart::RooflineChart(QWidget* parent) : QWidget(parent), view_(new QChartView(this)), empty_(new QLabel(this)) {
    view_->setObjectName(QStringLiteral("rooflineChart"));
    view_->setRenderHint(QPainter::Antialiasing);
    empty_->setObjectName(QStringLiteral("rooflineEmpty"));
    empty_->setAlignment(Qt::AlignCenter);
    empty_->hide();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_, 1);
    layout->addWidget(empty_);
}

QChart* RooflineChart::chart() const { return view_->chart(); }

void RooflineChart::setEvaluations(const std::vector<kf::EvaluationRecord>& evaluations, const QString& title) {
    points_.clear();
    peakGbps_ = peakGflops_ = 0;
    // A candidate evaluated again (a hand edit re-run, a resume) counts once, by its latest.
    QList<const kf::EvaluationRecord*> latest;
    QHash<qint64, int> slot;
    for (const kf::EvaluationRecord& e : evaluations) {
        if (slot.contains(e.candidate_id)) {
            latest[slot[e.candidate_id]] = &e;
        } else {
            slot.insert(e.candidate_id, int(latest.size()));
            latest << &e;
        }
    }
    for (const kf::EvaluationRecord* record : latest) {
        const kf::EvaluationRecord& e = *record;
        if (e.status_value() != kf::Status::Ok || !e.diagnosis.contains("roofline") || !e.diagnosis["roofline"].is_object()) continue;
        const nlohmann::json& r = e.diagnosis["roofline"];
        peakGbps_ = std::max(peakGbps_, r.value("peak_gbps", 0.0));
        peakGflops_ = std::max(peakGflops_, r.value("peak_gflops", 0.0));
        const RooflinePoint p{e.candidate_id, r.value("arithmetic_intensity", 0.0), r.value("achieved_gflops", 0.0),
                              e.fitness};
        // Log axes cannot place zero; such a record has no work or time to show.
        if (p.intensity > 0 && p.gflops > 0) points_ << p;
    }

    auto* chart = new QChart;
    chart->setTitle(title);
    series_ = new QScatterSeries(chart);
    series_->setName(tr("Candidates"));
    series_->setMarkerSize(10);
    series_->setPointLabelsFormat(QStringLiteral("@yPoint"));
    double xmin = std::numeric_limits<double>::max(), xmax = 0, ymin = std::numeric_limits<double>::max(), ymax = 0;
    for (const RooflinePoint& p : points_) {
        series_->append(p.intensity, p.gflops);
        xmin = std::min(xmin, p.intensity);
        xmax = std::max(xmax, p.intensity);
        ymin = std::min(ymin, p.gflops);
        ymax = std::max(ymax, p.gflops);
    }
    if (points_.isEmpty()) {
        xmin = 0.01, xmax = 100, ymin = 0.1, ymax = 1000;
    }
    // Room around the points and for the roofs and the ridge.
    const double ridge = peakGbps_ > 0 ? peakGflops_ / peakGbps_ : 0;
    if (ridge > 0) xmin = std::min(xmin, ridge), xmax = std::max(xmax, ridge);
    xmin /= 4, xmax *= 4;
    if (peakGflops_ > 0) ymax = std::max(ymax, peakGflops_);
    ymin /= 4, ymax *= 2;

    auto* x = new QLogValueAxis(chart);
    x->setTitleText(tr("Arithmetic intensity (FLOP/byte)"));
    x->setBase(10);
    x->setLabelFormat(QStringLiteral("%g"));
    x->setRange(xmin, xmax);
    auto* y = new QLogValueAxis(chart);
    y->setTitleText(tr("GFLOP/s"));
    y->setBase(10);
    y->setLabelFormat(QStringLiteral("%g"));
    y->setRange(ymin, ymax);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    if (peakGbps_ > 0 && peakGflops_ > 0) {
        auto* memory = new QLineSeries(chart);
        memory->setName(tr("Memory roof (%1 GB/s)").arg(peakGbps_, 0, 'g', 4));
        memory->append(xmin, peakGbps_ * xmin);
        memory->append(ridge, peakGflops_);
        auto* compute = new QLineSeries(chart);
        compute->setName(tr("Compute roof (%1 GFLOP/s)").arg(peakGflops_, 0, 'g', 4));
        compute->append(ridge, peakGflops_);
        compute->append(xmax, peakGflops_);
        for (QLineSeries* roof : {memory, compute}) {
            chart->addSeries(roof);
            roof->attachAxis(x);
            roof->attachAxis(y);
        }
    }
    chart->addSeries(series_);
    series_->attachAxis(x);
    series_->attachAxis(y);
    connect(series_, &QScatterSeries::clicked, this, &RooflineChart::onClicked);
    chart->legend()->setAlignment(Qt::AlignBottom);

    QChart* old = view_->chart();
    view_->setChart(chart);
    delete old;
    empty_->setVisible(points_.isEmpty());
    empty_->setText(tr("No correct, timed candidate in this run yet."));
}

void RooflineChart::onClicked(const QPointF& p) {
    // The nearest point in log space: the one drawn under the cursor.
    int best = -1;
    double bestDistance = std::numeric_limits<double>::max();
    for (int i = 0; i < points_.size(); ++i) {
        const double dx = std::log10(points_[i].intensity) - std::log10(std::max(p.x(), 1e-300));
        const double dy = std::log10(points_[i].gflops) - std::log10(std::max(p.y(), 1e-300));
        const double distance = dx * dx + dy * dy;
        if (distance < bestDistance) bestDistance = distance, best = i;
    }
    if (best >= 0) Q_EMIT candidateActivated(points_[best].candidateId);
}

}  // namespace kfgui
