#pragma once
#include <QSortFilterProxyModel>

namespace kfgui {

/** Filters LibraryTableModel rows by kind, op class, bound and status (empty: any). */
class LibraryFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT

public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void setKind(const QString& kind);  ///< "pattern", "insight" or ""
    void setOpClass(const QString& opClass);
    void setBound(const QString& bound);
    void setStatus(const QString& status);

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    QString kind_, opClass_, bound_, status_;
};

}  // namespace kfgui
