#pragma once
#include <unordered_map>
#include <vector>

#include <QAbstractTableModel>

#include "runs/engineevent.h"

namespace kfgui {

/** One evaluated candidate of the run, as the population table shows it. */
struct PopulationRow {
    qint64 id = 0;
    int island = 0;
    QString expert;
    int generation = -1;
    QString status;
    double speedup = 0;
    double medianMs = -1;
    double gbps = -1;
    QString bound;
};

/**
 * Every evaluated candidate of the shown run, in the order they were evaluated. Cell values
 * are computed in data(); sorting and filtering happen in a QSortFilterProxyModel on top.
 */
class PopulationModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Id, Island, Expert, Generation, Status, Speedup, Time, Bandwidth, Bound, ColumnCount };
    /** Qt::UserRole on any column: the candidate id (qint64). */
    static constexpr int IdRole = Qt::UserRole + 1;

    explicit PopulationModel(QObject* parent = nullptr);

    void clear();
    /** Appends rows in one insertion; a row whose id is already there replaces it. */
    void append(const std::vector<PopulationRow>& rows);
    const PopulationRow* row(int index) const;
    int rowOf(qint64 id) const;
    const std::vector<PopulationRow>& rows() const { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static PopulationRow rowFromEvent(const EngineEvent& e);
    /** A translated, readable name for a diagnosis status ("compile_error" → "compile error"). */
    static QString statusText(const QString& status);

private:
    std::vector<PopulationRow> rows_;
    std::unordered_map<qint64, int> index_;
};

}  // namespace kfgui
