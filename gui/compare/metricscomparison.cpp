#include "compare/metricscomparison.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QSplitter>
#include <QTableView>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kfgui {

void MetricsTableModel::setMetrics(const QList<Metric>& a, const QList<Metric>& b, const QString& nameA,
                                   const QString& nameB) {
    beginResetModel();
    a_ = a;
    b_ = b;
    nameA_ = nameA;
    nameB_ = nameB;
    endResetModel();
}

int MetricsTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(a_.size()); }
int MetricsTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : 4; }

QVariant MetricsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case 0: return tr("Metric");
        case 1: return nameA_;
        case 2: return nameB_;
        case 3: return tr("B / A");
        default: return {};
    }
}

QVariant MetricsTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= a_.size()) return {};
    const Metric& a = a_[index.row()];
    const Metric& b = b_[index.row()];
    if (role == Qt::TextAlignmentRole && index.column() > 0) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == 3)
        return a.lowerIsBetter ? tr("Lower is better") : tr("Higher is better");
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case 0: return a.name;
        case 1: return formatMetric(a.value);
        case 2: return formatMetric(b.value);
        case 3:
            if (a.value && b.value && *a.value != 0) return formatMetric(*b.value / *a.value);
            return QStringLiteral("—");
        default: return {};
    }
}

MetricsComparison::MetricsComparison(QWidget* parent)
    : QWidget(parent), view_(new QChartView(this)), model_(new MetricsTableModel(this)), table_(new QTableView(this)) {
    view_->setObjectName(QStringLiteral("metricsChart"));
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setMinimumHeight(220);
    table_->setObjectName(QStringLiteral("metricsTable"));
    table_->setModel(model_);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->hide();
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(view_);
    split->addWidget(table_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
}

QChart* MetricsComparison::chart() const { return view_->chart(); }

void MetricsComparison::setDiagnoses(const nlohmann::json& a, const nlohmann::json& b, const QString& nameA,
                                     const QString& nameB) {
    QList<Metric> ma = candidateMetrics(a), mb = candidateMetrics(b);
    // Stall reasons of one side only still get a row on the other, empty.
    auto align = [](QList<Metric>& to, const QList<Metric>& from) {
        for (const Metric& m : from) {
            const bool has = std::any_of(to.cbegin(), to.cend(), [&](const Metric& x) { return x.name == m.name; });
            if (!has) to << Metric{m.name, std::nullopt, m.lowerIsBetter};
        }
    };
    align(ma, mb);
    align(mb, ma);
    std::sort(mb.begin(), mb.end(), [&](const Metric& x, const Metric& y) {
        auto pos = [&](const Metric& m) {
            for (int i = 0; i < ma.size(); ++i)
                if (ma[i].name == m.name) return i;
            return int(ma.size());
        };
        return pos(x) < pos(y);
    });
    model_->setMetrics(ma, mb, nameA, nameB);

    auto* setA = new QBarSet(nameA);
    auto* setB = new QBarSet(nameB);
    QStringList names;
    for (int i = 0; i < ma.size(); ++i) {
        names << ma[i].name;
        const double va = ma[i].value.value_or(0), vb = mb[i].value.value_or(0);
        const double top = std::max(std::abs(va), std::abs(vb));
        // Each metric relative to the larger of the two: their units differ.
        *setA << (top > 0 ? 100.0 * va / top : 0.0);
        *setB << (top > 0 ? 100.0 * vb / top : 0.0);
    }
    auto* series = new QBarSeries;
    series->append(setA);
    series->append(setB);
    auto* chart = new QChart;
    chart->setTitle(tr("Metrics, % of the larger value (values in the table)"));
    chart->addSeries(series);
    axis_ = new QBarCategoryAxis(chart);
    axis_->append(names);
    chart->addAxis(axis_, Qt::AlignBottom);
    series->attachAxis(axis_);
    auto* y = new QValueAxis(chart);
    y->setRange(0, 100);
    y->setLabelFormat(QStringLiteral("%d%%"));
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(y);
    chart->legend()->setAlignment(Qt::AlignBottom);
    QChart* old = view_->chart();
    view_->setChart(chart);
    delete old;
    table_->resizeColumnsToContents();
}

QStringList MetricsComparison::categories() const { return axis_ ? axis_->categories() : QStringList(); }

}  // namespace kfgui
