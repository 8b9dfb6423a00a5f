#include "runs/lineageview.h"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "kf/store.h"
#include "paths.h"
#include "runs/populationmodel.h"

namespace kfgui {

LineageView::LineageView(QWidget* parent) : QWidget(parent), title_(new QLabel(this)), tree_(new QTreeWidget(this)) {
    tree_->setObjectName(QStringLiteral("lineageTree"));
    tree_->setRootIsDecorated(false);
    tree_->setHeaderLabels({tr("Candidate"), tr("Expert"), tr("Status"), tr("Speedup"), tr("Gain")});
    tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(title_);
    layout->addWidget(tree_);
    connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        Q_EMIT candidateActivated(item->data(0, Qt::UserRole).toLongLong());
    });
    clear();
}

void LineageView::clear() {
    tree_->clear();
    title_->setText(tr("Lineage: select a candidate"));
}

void LineageView::showLineage(const kf::ProjectView& store, qint64 candidate) {
    tree_->clear();
    std::vector<std::int64_t> chain = store.lineage(candidate);
    std::reverse(chain.begin(), chain.end());  // seed first
    double parentFitness = 0;
    for (std::int64_t id : chain) {
        auto c = store.candidate(id);
        auto e = store.evaluation_of(id);
        const double fitness = e ? e->fitness : 0;
        auto* item = new QTreeWidgetItem(tree_);
        item->setData(0, Qt::UserRole, static_cast<qlonglong>(id));
        item->setText(0, QString::number(id));
        item->setText(1, c ? fromUtf8(c->expert) : QString());
        item->setText(2, e ? PopulationModel::statusText(fromUtf8(e->status)) : tr("not evaluated"));
        item->setText(3, fitness > 0 ? tr("%1×").arg(fitness, 0, 'f', 2) : QString());
        if (id != chain.front() && parentFitness > 0 && fitness > 0)
            item->setText(4, tr("%1×").arg(fitness / parentFitness, 0, 'f', 2));
        if (c) item->setToolTip(1, fromUtf8(c->rationale));
        parentFitness = fitness;
    }
    title_->setText(tr("Lineage of candidate %1 (%n step(s))", nullptr, static_cast<int>(chain.size())).arg(candidate));
}

}  // namespace kfgui
