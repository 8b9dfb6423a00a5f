#pragma once
#include <QAbstractTableModel>
#include <QWidget>

#include "compare/candidatemetrics.h"

class QTableView;
class QChart;
class QChartView;
class QBarCategoryAxis;

namespace kfgui {

/** Two candidates' metrics as a table: metric, A, B, B/A; "—" where one was not measured. */
class MetricsTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    using QAbstractTableModel::QAbstractTableModel;

    void setMetrics(const QList<Metric>& a, const QList<Metric>& b, const QString& nameA, const QString& nameB);
    const QList<Metric>& metricsA() const { return a_; }
    const QList<Metric>& metricsB() const { return b_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<Metric> a_, b_;
    QString nameA_, nameB_;
};

/**
 * A grouped bar chart of two candidates' metrics, each metric scaled to the larger of the
 * two (their units differ), with the real values in the table beside it.
 */
class MetricsComparison : public QWidget {
    Q_OBJECT

public:
    explicit MetricsComparison(QWidget* parent = nullptr);

    void setDiagnoses(const nlohmann::json& a, const nlohmann::json& b, const QString& nameA, const QString& nameB);
    /** The chart's categories, one per metric compared. */
    QStringList categories() const;
    QChart* chart() const;
    MetricsTableModel* model() const { return model_; }

private:
    QChartView* view_;
    QBarCategoryAxis* axis_ = nullptr;
    MetricsTableModel* model_;
    QTableView* table_;
};

}  // namespace kfgui
