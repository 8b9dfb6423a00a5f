#pragma once
#include <QAbstractTableModel>

#include <variant>
#include <vector>

#include "kf/library.h"

namespace kfgui {

/** One row of the library list: a pattern or an insight. */
using LibraryEntry = std::variant<kf::Pattern, kf::Insight>;

/**
 * The patterns and insights of the experience library as one table: kind, name or action,
 * op class, bound, status and evidence. Filtering and sorting are LibraryFilterProxy's.
 */
class LibraryTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { KindColumn, NameColumn, OpClassColumn, BoundColumn, StatusColumn, EvidenceColumn, ColumnCount };
    /** Raw, untranslated values the proxy filters on. */
    enum Role { KindRole = Qt::UserRole + 1, OpClassRole, BoundsRole, StatusRole, IdRole };

    using QAbstractTableModel::QAbstractTableModel;

    void setEntries(std::vector<LibraryEntry> entries);
    const std::vector<LibraryEntry>& entries() const { return entries_; }
    const LibraryEntry* entry(int row) const;
    /** The row of the pattern or insight with this id, -1 when absent. */
    int rowOf(bool pattern, std::int64_t id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<LibraryEntry> entries_;
};

}  // namespace kfgui
