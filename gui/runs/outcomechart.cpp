#include "runs/outcomechart.h"

#include <algorithm>
#include <iterator>

#include <QColor>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include "enginewords.h"
#include "runs/niceaxis.h"
#include "runs/populationmodel.h"

namespace kfgui {

namespace {

constexpr int kMaxWindows = 60;

QColor colorOf(std::size_t i) {
    static const QColor colors[] = {QColor(0x2e, 0x7d, 0x32), QColor(0xef, 0x6c, 0x00), QColor(0xc6, 0x28, 0x28),
                                    QColor(0x6a, 0x1b, 0x9a), QColor(0xad, 0x14, 0x57), QColor(0x45, 0x5a, 0x64),
                                    QColor(0x00, 0x00, 0x00), QColor(0x9e, 0x9e, 0x9e)};
    return colors[std::min(i, std::size(colors) - 1)];
}

}  // namespace

const std::vector<QString>& OutcomeChart::statuses() {
    static const std::vector<QString> s = [] {
        std::vector<QString> out;
        for (kf::Status st : {kf::Status::Ok, kf::Status::Incorrect, kf::Status::CompileError, kf::Status::LoadError,
                              kf::Status::RuntimeError, kf::Status::Timeout, kf::Status::IntegrityViolation})
            out.push_back(statusWord(st));
        out.push_back(QStringLiteral("other"));
        return out;
    }();
    return s;
}

OutcomeChart::OutcomeChart(QWidget* parent)
    : QChartView(parent), zero_(new QLineSeries(this)), x_(new QValueAxis), y_(new QValueAxis) {
    setObjectName(QStringLiteral("outcomeChart"));
    auto* c = new QChart;
    c->setTitle(tr("Outcomes per evaluation window"));
    c->legend()->setAlignment(Qt::AlignBottom);
    x_->setTitleText(tr("Evaluations"));
    x_->setLabelFormat(QStringLiteral("%d"));
    y_->setTitleText(tr("Candidates"));
    y_->setLabelFormat(QStringLiteral("%d"));
    x_->setTickCount(6);
    y_->setTickCount(6);
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    QLineSeries* lower = zero_;
    for (std::size_t i = 0; i < statuses().size(); ++i) {
        auto* upper = new QLineSeries(this);
        auto* area = new QAreaSeries(upper, lower);
        area->setName(statuses()[i] == QLatin1String("other") ? tr("other") : PopulationModel::statusText(statuses()[i]));
        area->setColor(colorOf(i));
        area->setBorderColor(colorOf(i).darker(120));
        c->addSeries(area);
        area->attachAxis(x_);
        area->attachAxis(y_);
        upper_.push_back(upper);
        areas_.push_back(area);
        lower = upper;
    }
    setChart(c);
    setMinimumHeight(180);
    clear();
}

void OutcomeChart::clear() {
    outcomes_.clear();
    dirty_ = true;
    refresh();
}

void OutcomeChart::add(const EngineEventList& events) {
    const auto& names = statuses();
    for (const EngineEvent& e : events) {
        if (!e.isEvaluation()) continue;
        auto it = std::find(names.begin(), names.end() - 1, e.status);
        outcomes_.push_back(static_cast<std::uint8_t>(it - names.begin()));
        dirty_ = true;
    }
}

int OutcomeChart::count(const QString& status) const {
    const auto& names = statuses();
    const auto k = static_cast<std::uint8_t>(std::find(names.begin(), names.end(), status) - names.begin());
    return static_cast<int>(std::count(outcomes_.begin(), outcomes_.end(), k));
}

void OutcomeChart::refresh() {
    if (!dirty_) return;
    dirty_ = false;
    const int n = total();
    window_ = std::max(5, (n + kMaxWindows - 1) / kMaxWindows);
    const int windows = (n + window_ - 1) / window_;
    const std::size_t kinds = statuses().size();
    // counts[w][k]: evaluations of kind k in window w.
    std::vector<std::vector<int>> counts(static_cast<std::size_t>(windows), std::vector<int>(kinds, 0));
    for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(i / window_)][outcomes_[static_cast<std::size_t>(i)]];
    int peak = 0;
    QList<QPointF> zero;
    std::vector<QList<QPointF>> stacked(kinds);
    for (int w = 0; w < windows; ++w) {
        const double x0 = w * window_, x1 = std::min(n, (w + 1) * window_);
        zero << QPointF(x0, 0) << QPointF(x1, 0);
        int sum = 0;
        for (std::size_t k = 0; k < kinds; ++k) {
            sum += counts[static_cast<std::size_t>(w)][k];
            stacked[k] << QPointF(x0, sum) << QPointF(x1, sum);
        }
        peak = std::max(peak, sum);
    }
    zero_->replace(zero);
    for (std::size_t k = 0; k < kinds; ++k) {
        upper_[k]->replace(stacked[k]);
        // Statuses that never occurred stay out of the legend.
        const bool seen = std::find(outcomes_.begin(), outcomes_.end(), static_cast<std::uint8_t>(k)) != outcomes_.end();
        for (QLegendMarker* marker : chart()->legend()->markers(areas_[k])) marker->setVisible(seen);
    }
    x_->setRange(0, niceAxisMax(std::max(10, n), 5, true));
    y_->setRange(0, niceAxisMax(std::max(window_, peak), 5, true));
}

}  // namespace kfgui
