#include "runs/populationmodel.h"

#include "enginewords.h"

#include <QBrush>
#include <QColor>
#include <QCoreApplication>

namespace kfgui {

PopulationModel::PopulationModel(QObject* parent) : QAbstractTableModel(parent) {}

void PopulationModel::clear() {
    beginResetModel();
    rows_.clear();
    index_.clear();
    endResetModel();
}

PopulationRow PopulationModel::rowFromEvent(const EngineEvent& e) {
    PopulationRow r;
    r.id = e.member;
    r.island = e.island;
    r.expert = e.expert;
    r.generation = e.generation;
    r.status = e.status;
    r.speedup = e.fitness;
    r.medianMs = e.medianMs;
    r.gbps = e.gbps;
    r.bound = e.bound;
    return r;
}

void PopulationModel::append(const std::vector<PopulationRow>& rows) {
    std::vector<PopulationRow> fresh;
    for (const PopulationRow& r : rows) {
        auto it = index_.find(r.id);
        if (it == index_.end()) {
            fresh.push_back(r);
            continue;
        }
        rows_[static_cast<std::size_t>(it->second)] = r;
        Q_EMIT dataChanged(index(it->second, 0), index(it->second, ColumnCount - 1));
    }
    if (fresh.empty()) return;
    // Ids repeated inside one batch: the last one wins.
    std::unordered_map<qint64, std::size_t> seen;
    std::vector<PopulationRow> unique;
    for (PopulationRow& r : fresh) {
        auto [it, inserted] = seen.emplace(r.id, unique.size());
        if (inserted) unique.push_back(std::move(r));
        else unique[it->second] = std::move(r);
    }
    const int first = static_cast<int>(rows_.size());
    beginInsertRows({}, first, first + static_cast<int>(unique.size()) - 1);
    for (PopulationRow& r : unique) {
        index_[r.id] = static_cast<int>(rows_.size());
        rows_.push_back(std::move(r));
    }
    endInsertRows();
}

const PopulationRow* PopulationModel::row(int i) const {
    return i >= 0 && i < static_cast<int>(rows_.size()) ? &rows_[static_cast<std::size_t>(i)] : nullptr;
}

int PopulationModel::rowOf(qint64 id) const {
    auto it = index_.find(id);
    return it == index_.end() ? -1 : it->second;
}

int PopulationModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int PopulationModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString PopulationModel::statusText(const QString& status) { return kfgui::statusText(status); }

QVariant PopulationModel::data(const QModelIndex& index, int role) const {
    const PopulationRow* r = row(index.row());
    if (!r || index.column() < 0 || index.column() >= ColumnCount) return {};
    const auto column = static_cast<Column>(index.column());
    if (role == IdRole) return r->id;
    if (role == Qt::DisplayRole) {
        switch (column) {
        case Id: return r->id;
        case Island: return r->island;
        case Expert: return r->expert;
        case Generation: return r->generation >= 0 ? QVariant(r->generation) : QVariant();
        case Status: return statusText(r->status);
        case Speedup: return r->speedup > 0 ? QVariant(QString::number(r->speedup, 'f', 2)) : QVariant();
        case Time: return r->medianMs >= 0 ? QVariant(QString::number(r->medianMs, 'g', 4)) : QVariant();
        case Bandwidth: return r->gbps >= 0 ? QVariant(QString::number(r->gbps, 'f', 1)) : QVariant();
        case Bound: return r->bound;
        case ColumnCount: break;
        }
        return {};
    }
    // Numbers sort as numbers (the proxy's sort role).
    if (role == Qt::UserRole) {
        switch (column) {
        case Speedup: return r->speedup;
        case Time: return r->medianMs;
        case Bandwidth: return r->gbps;
        case Generation: return r->generation;
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole && column != Expert && column != Status && column != Bound)
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    if (role == Qt::ForegroundRole && column == Status && r->status != statusWord(kf::Status::Ok))
        return QBrush(QColor(0xc6, 0x28, 0x28));
    return {};
}

QVariant PopulationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (static_cast<Column>(section)) {
    case Id: return tr("Id");
    case Island: return tr("Island");
    case Expert: return tr("Expert");
    case Generation: return tr("Generation");
    case Status: return tr("Status");
    case Speedup: return tr("Speedup");
    case Time: return tr("Time (ms)");
    case Bandwidth: return tr("GB/s");
    case Bound: return tr("Bound");
    case ColumnCount: break;
    }
    return {};
}

}  // namespace kfgui
