#include "library/librarytablemodel.h"

#include <QBrush>
#include <QColor>

namespace kfgui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QStringList tags(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) out << qs(s);
    return out;
}

QString statusText(const std::string& status) {
    if (status == "active") return LibraryTableModel::tr("active");
    if (status == "broken") return LibraryTableModel::tr("broken");
    if (status == "proposed") return LibraryTableModel::tr("proposed");
    if (status == "approved") return LibraryTableModel::tr("approved");
    if (status == "rejected") return LibraryTableModel::tr("rejected");
    return qs(status);
}

QColor statusColor(const std::string& status) {
    if (status == "approved" || status == "active") return QColor(0x10, 0x80, 0x30);
    if (status == "rejected" || status == "broken") return QColor(0xb0, 0x20, 0x20);
    return QColor(0x80, 0x60, 0x00);
}

}  // namespace

void LibraryTableModel::setEntries(std::vector<LibraryEntry> entries) {
    beginResetModel();
    entries_ = std::move(entries);
    endResetModel();
}

const LibraryEntry* LibraryTableModel::entry(int row) const {
    return row >= 0 && row < int(entries_.size()) ? &entries_[std::size_t(row)] : nullptr;
}

int LibraryTableModel::rowOf(bool pattern, std::int64_t id) const {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (pattern && std::holds_alternative<kf::Pattern>(entries_[i]) && std::get<kf::Pattern>(entries_[i]).id == id)
            return int(i);
        if (!pattern && std::holds_alternative<kf::Insight>(entries_[i]) && std::get<kf::Insight>(entries_[i]).id == id)
            return int(i);
    }
    return -1;
}

int LibraryTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(entries_.size()); }
int LibraryTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LibraryTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case KindColumn: return tr("Kind");
        case NameColumn: return tr("Name / action");
        case OpClassColumn: return tr("Op class");
        case BoundColumn: return tr("Bound");
        case StatusColumn: return tr("Status");
        case EvidenceColumn: return tr("Evidence");
        default: return {};
    }
}

QVariant LibraryTableModel::data(const QModelIndex& index, int role) const {
    const LibraryEntry* e = index.isValid() ? entry(index.row()) : nullptr;
    if (!e) return {};
    if (const auto* p = std::get_if<kf::Pattern>(e)) {
        switch (role) {
            case KindRole: return QStringLiteral("pattern");
            case OpClassRole: return qs(p->op_class);
            case BoundsRole: return tags(p->bound_tags);
            case StatusRole: return qs(p->status);
            case IdRole: return qint64(p->id);
            case Qt::ForegroundRole:
                return index.column() == StatusColumn ? QVariant(QBrush(statusColor(p->status))) : QVariant();
            case Qt::ToolTipRole: return qs(p->description);
            case Qt::DisplayRole: break;
            default: return {};
        }
        switch (index.column()) {
            case KindColumn: return tr("pattern");
            case NameColumn: return qs(p->name);
            case OpClassColumn: return qs(p->op_class);
            case BoundColumn: return tags(p->bound_tags).join(QStringLiteral(", "));
            case StatusColumn: return statusText(p->status);
            case EvidenceColumn: return tr("%1 of %2 kept").arg(p->successes).arg(p->applications);
            default: return {};
        }
    }
    const auto& in = std::get<kf::Insight>(*e);
    const QString bound = qs(in.condition.bound.empty() ? in.condition.status : in.condition.bound);
    switch (role) {
        case KindRole: return QStringLiteral("insight");
        case OpClassRole: return qs(in.condition.op_class);
        case BoundsRole: return bound.isEmpty() ? QStringList() : QStringList{bound};
        case StatusRole: return qs(in.status);
        case IdRole: return qint64(in.id);
        case Qt::ForegroundRole:
            return index.column() == StatusColumn ? QVariant(QBrush(statusColor(in.status))) : QVariant();
        case Qt::ToolTipRole: return qs(in.action);
        case Qt::DisplayRole: break;
        default: return {};
    }
    switch (index.column()) {
        case KindColumn: return tr("insight");
        case NameColumn: return qs(in.action);
        case OpClassColumn: return in.condition.op_class.empty() ? tr("any") : qs(in.condition.op_class);
        case BoundColumn: return bound.isEmpty() ? tr("any") : bound;
        case StatusColumn: return statusText(in.status);
        case EvidenceColumn:
            return tr("%1 of %2, median ×%3")
                .arg(in.evidence.successes)
                .arg(in.evidence.applications)
                .arg(in.evidence.median_gain(), 0, 'g', 3);
        default: return {};
    }
}

}  // namespace kfgui
