#include "runs/populationview.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "runs/populationmodel.h"

namespace kfgui {

PopulationView::PopulationView(QWidget* parent)
    : QWidget(parent),
      model_(new PopulationModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      filter_(new QLineEdit(this)),
      table_(new QTableView(this)),
      compare_(new QPushButton(tr("Compare"), this)) {
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(Qt::UserRole);
    proxy_->setFilterKeyColumn(-1);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

    filter_->setObjectName(QStringLiteral("populationFilter"));
    filter_->setPlaceholderText(tr("Filter: expert, status, bound, id…"));
    filter_->setClearButtonEnabled(true);
    compare_->setObjectName(QStringLiteral("compareButton"));
    compare_->setToolTip(tr("Compare the two selected candidates side by side"));
    compare_->setEnabled(false);

    table_->setObjectName(QStringLiteral("populationTable"));
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(PopulationModel::Id, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(true);

    auto* top = new QHBoxLayout;
    top->addWidget(filter_, 1);
    top->addWidget(compare_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(table_);

    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &PopulationView::selectionChanged);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
        if (current.isValid()) Q_EMIT candidateSelected(current.data(PopulationModel::IdRole).toLongLong());
    });
    connect(compare_, &QPushButton::clicked, this, [this] {
        const QList<qint64> ids = selectedIds();
        if (ids.size() == 2) Q_EMIT compareRequested(ids[0], ids[1]);
    });
}

QList<qint64> PopulationView::selectedIds() const {
    QList<qint64> ids;
    const QModelIndexList rows = table_->selectionModel()->selectedRows();
    for (const QModelIndex& index : rows) ids.append(index.data(PopulationModel::IdRole).toLongLong());
    return ids;
}

void PopulationView::selectionChanged() { compare_->setEnabled(selectedIds().size() == 2); }

void PopulationView::selectCandidate(qint64 id) {
    const int row = model_->rowOf(id);
    if (row < 0) return;
    QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    if (!index.isValid()) {
        filter_->clear();
        index = proxy_->mapFromSource(model_->index(row, 0));
    }
    table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(index);
}

}  // namespace kfgui
