#pragma once
#include <functional>
#include <vector>

#include <QWidget>

class QListView;
class QModelIndex;
class QSplitter;

namespace kfgui {

class TaskDetailsView;
class TaskListModel;
struct TaskEntry;
struct KernelBenchSet;

/** The task list on the left and the selected task's details on the right. */
class TaskBrowser : public QWidget {
    Q_OBJECT

public:
    explicit TaskBrowser(QWidget* parent = nullptr);

    /** Loads the tasks under `folder` and selects the first one that loaded. */
    void setTasksFolder(const QString& folder);
    /** Shows the tasks under `folder` and the project's tasks under `projectTasks`. */
    void setFolders(const QString& folder, const QString& projectTasks);
    /** As above, with the problems of the project's KernelBench sets after the tasks. */
    void setFolders(const QString& folder, const QString& projectTasks, const std::vector<KernelBenchSet>& sets);
    /**
     * What the project's latest run of a KernelBench problem (by its key, "level1/19_ReLU")
     * reached, for the details pane; empty: no run.
     */
    void setRunSummary(std::function<QString(const QString& key)> summary);
    TaskDetailsView* details() const { return details_; }
    QString tasksFolder() const;
    /** Selects the task at `relativePath` (e.g. "level1/softmax"); false when there is none. */
    bool selectTask(const QString& relativePath);
    /** The selected task entry, or null. */
    const TaskEntry* currentEntry() const;
    /** Shows the selected entry's details again (e.g. after a run of it). */
    void refreshCurrent();
    TaskListModel* model() const { return model_; }

    QByteArray saveSplitterState() const;
    void restoreSplitterState(const QByteArray& state);

signals:
    /** The list was (re)loaded: how many folders and how many of them failed. */
    void tasksLoaded(int count, int failed);
    /** Another task (or none) is selected. */
    void currentTaskChanged();

private:
    void showCurrent(const QModelIndex& index);

    TaskListModel* model_;
    QSplitter* splitter_;
    QListView* list_;
    TaskDetailsView* details_;
    std::function<QString(const QString&)> runSummary_;
};

}  // namespace kfgui
