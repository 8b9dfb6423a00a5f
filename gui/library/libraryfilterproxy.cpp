#include "library/libraryfilterproxy.h"

#include "library/librarytablemodel.h"

namespace kfgui {

void LibraryFilterProxy::setKind(const QString& kind) {
    kind_ = kind;
    invalidateFilter();
}

void LibraryFilterProxy::setOpClass(const QString& opClass) {
    opClass_ = opClass;
    invalidateFilter();
}

void LibraryFilterProxy::setBound(const QString& bound) {
    bound_ = bound;
    invalidateFilter();
}

void LibraryFilterProxy::setStatus(const QString& status) {
    status_ = status;
    invalidateFilter();
}

bool LibraryFilterProxy::filterAcceptsRow(int row, const QModelIndex& parent) const {
    const QModelIndex i = sourceModel()->index(row, 0, parent);
    if (!kind_.isEmpty() && i.data(LibraryTableModel::KindRole).toString() != kind_) return false;
    if (!opClass_.isEmpty() && i.data(LibraryTableModel::OpClassRole).toString() != opClass_) return false;
    if (!bound_.isEmpty() && !i.data(LibraryTableModel::BoundsRole).toStringList().contains(bound_)) return false;
    if (!status_.isEmpty() && i.data(LibraryTableModel::StatusRole).toString() != status_) return false;
    return true;
}

}  // namespace kfgui
