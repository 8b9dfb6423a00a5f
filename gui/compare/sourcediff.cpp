#include "compare/sourcediff.h"

#include <QBrush>
#include <QColor>
#include <QFontDatabase>

#include <dtl/dtl.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace kfgui {

namespace {

std::vector<std::string> splitLines(const QString& text) {
    std::vector<std::string> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (const QString& l : lines) out.push_back(l.toStdString());
    if (!out.empty() && out.back().empty()) out.pop_back();  // the final newline ends a line
    return out;
}

const QColor kAddedColor(0xdc, 0xf5, 0xdc);
const QColor kRemovedColor(0xfa, 0xdc, 0xdc);

}  // namespace

QList<DiffLine> diffLines(const QString& before, const QString& after) {
    const std::vector<std::string> a = splitLines(before), b = splitLines(after);
    dtl::Diff<std::string, std::vector<std::string>> diff(a, b);
    diff.onHuge();
    diff.compose();
    QList<DiffLine> out;
    for (const auto& [text, info] : diff.getSes().getSequence()) {
        DiffLine line;
        line.text = QString::fromStdString(text);
        line.kind = info.type == dtl::SES_ADD ? DiffLine::Added : info.type == dtl::SES_DELETE ? DiffLine::Removed : DiffLine::Same;
        line.oldLine = line.kind == DiffLine::Added ? 0 : int(info.beforeIdx);
        line.newLine = line.kind == DiffLine::Removed ? 0 : int(info.afterIdx);
        out << line;
    }
    return out;
}

DiffModel::DiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void DiffModel::setSources(const QString& before, const QString& after) {
    beginResetModel();
    lines_ = diffLines(before, after);
    pairUp();
    endResetModel();
}

void DiffModel::setMode(Mode mode) {
    if (mode == mode_) return;
    beginResetModel();
    mode_ = mode;
    endResetModel();
}

int DiffModel::added() const {
    return int(std::count_if(lines_.cbegin(), lines_.cend(), [](const DiffLine& l) { return l.kind == DiffLine::Added; }));
}

int DiffModel::removed() const {
    return int(std::count_if(lines_.cbegin(), lines_.cend(), [](const DiffLine& l) { return l.kind == DiffLine::Removed; }));
}

void DiffModel::pairUp() {
    pairs_.clear();
    for (int i = 0; i < lines_.size();) {
        if (lines_[i].kind == DiffLine::Same) {
            pairs_ << Pair{i, i};
            ++i;
            continue;
        }
        // A change: its removed lines face its added lines, row by row.
        QList<int> removed, added;
        while (i < lines_.size() && lines_[i].kind != DiffLine::Same) {
            (lines_[i].kind == DiffLine::Removed ? removed : added) << i;
            ++i;
        }
        for (int k = 0; k < qMax(removed.size(), added.size()); ++k)
            pairs_ << Pair{k < removed.size() ? removed[k] : -1, k < added.size() ? added[k] : -1};
    }
}

int DiffModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid()) return 0;
    return int(mode_ == Mode::Unified ? lines_.size() : pairs_.size());
}

int DiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : (mode_ == Mode::Unified ? 3 : 4); }

QVariant DiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (mode_ == Mode::Unified) {
        const QString names[] = {tr("Old"), tr("New"), tr("Source")};
        return section < 3 ? names[section] : QVariant();
    }
    const QString names[] = {tr("Old"), tr("Candidate A"), tr("New"), tr("Candidate B")};
    return section < 4 ? names[section] : QVariant();
}

QVariant DiffModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    if (role == Qt::FontRole) return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    auto number = [](int n) { return n > 0 ? QVariant(n) : QVariant(); };
    auto colour = [](DiffLine::Kind k) {
        if (k == DiffLine::Added) return QVariant(QBrush(kAddedColor));
        if (k == DiffLine::Removed) return QVariant(QBrush(kRemovedColor));
        return QVariant();
    };
    if (mode_ == Mode::Unified) {
        const DiffLine& l = lines_[index.row()];
        if (role == Qt::BackgroundRole) return colour(l.kind);
        if (role != Qt::DisplayRole) return {};
        if (index.column() == 0) return number(l.oldLine);
        if (index.column() == 1) return number(l.newLine);
        const QChar sign = l.kind == DiffLine::Added ? QLatin1Char('+') : l.kind == DiffLine::Removed ? QLatin1Char('-') : QLatin1Char(' ');
        return QString(sign) + QLatin1Char(' ') + l.text;
    }
    const Pair& p = pairs_[index.row()];
    const int which = index.column() < 2 ? p.left : p.right;
    if (which < 0) return role == Qt::BackgroundRole ? QVariant(QBrush(QColor(0xf0, 0xf0, 0xf0))) : QVariant();
    const DiffLine& l = lines_[which];
    if (role == Qt::BackgroundRole) return colour(l.kind);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case 0: return number(l.oldLine);
        case 2: return number(l.newLine);
        default: return l.text;
    }
}

}  // namespace kfgui
