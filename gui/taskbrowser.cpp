#include "taskbrowser.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QListView>
#include <QSplitter>

#include "taskdetailsview.h"
#include "tasklistmodel.h"

namespace kfgui {

TaskBrowser::TaskBrowser(QWidget* parent)
    : QWidget(parent),
      model_(new TaskListModel(this)),
      splitter_(new QSplitter(Qt::Horizontal, this)),
      list_(new QListView(splitter_)),
      details_(new TaskDetailsView(splitter_)) {
    splitter_->setObjectName(QStringLiteral("browserSplitter"));
    list_->setObjectName(QStringLiteral("taskList"));
    list_->setModel(model_);
    list_->setWordWrap(true);
    list_->setUniformItemSizes(false);
    list_->setSpacing(1);
    list_->setSelectionMode(QAbstractItemView::SingleSelection);
    details_->setObjectName(QStringLiteral("taskDetails"));
    splitter_->addWidget(list_);
    splitter_->addWidget(details_);
    splitter_->setStretchFactor(0, 1);
    splitter_->setStretchFactor(1, 3);
    splitter_->setSizes({280, 840});

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter_);

    connect(list_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { showCurrent(current); });
}

void TaskBrowser::setTasksFolder(const QString& folder) { setFolders(folder, model_->projectTasks()); }

void TaskBrowser::setFolders(const QString& folder, const QString& projectTasks) {
    setFolders(folder, projectTasks, model_->kernelBenchSets());
}

void TaskBrowser::setRunSummary(std::function<QString(const QString&)> summary) { runSummary_ = std::move(summary); }

void TaskBrowser::setFolders(const QString& folder, const QString& projectTasks, const std::vector<KernelBenchSet>& sets) {
    model_->load(folder, projectTasks, sets);
    details_->clear();
    // Start on the first task that loaded, so the window never opens on an empty pane.
    for (int row = 0; row < model_->rowCount(); ++row) {
        const QModelIndex index = model_->index(row);
        if (!model_->entry(index)->failed()) {
            list_->setCurrentIndex(index);
            break;
        }
    }
    emit tasksLoaded(model_->rowCount(), model_->failedCount());
    emit currentTaskChanged();
}

QString TaskBrowser::tasksFolder() const { return model_->root(); }

bool TaskBrowser::selectTask(const QString& relativePath) {
    const int row = model_->rowOf(relativePath);
    if (row < 0) return false;
    list_->setCurrentIndex(model_->index(row));
    return true;
}

const TaskEntry* TaskBrowser::currentEntry() const { return model_->entry(list_->currentIndex()); }

void TaskBrowser::refreshCurrent() { showCurrent(list_->currentIndex()); }

QByteArray TaskBrowser::saveSplitterState() const { return splitter_->saveState(); }

void TaskBrowser::restoreSplitterState(const QByteArray& state) {
    if (!state.isEmpty()) splitter_->restoreState(state);
}

void TaskBrowser::showCurrent(const QModelIndex& index) {
    const TaskEntry* entry = model_->entry(index);
    if (!entry) details_->clear();
    else if (entry->isKernelBench())
        details_->showKernelBenchProblem(*entry->kernelBench, runSummary_ ? runSummary_(entry->relativePath) : QString());
    else if (entry->failed()) details_->showLoadError(entry->relativePath, entry->error);
    else details_->showTask(*entry->task);
    emit currentTaskChanged();
}

}  // namespace kfgui
