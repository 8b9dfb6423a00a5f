#pragma once
#include <optional>
#include <vector>

#include <QAbstractListModel>
#include <QString>

#include "kf/task.h"
#include "project/kernelbenchset.h"

namespace kfgui {

/**
 * One task folder (the loaded task, or the reason it could not be loaded), or one problem of
 * a KernelBench problem set opened in the project.
 */
struct TaskEntry {
    QString folder;                 ///< absolute path of the task folder
    QString relativePath;           ///< relative to the tasks root, e.g. "level1/softmax"
    std::optional<kf::Task> task;   ///< empty when loading failed
    QString error;                  ///< the loader's full message when it failed
    QString shortError;             ///< the field and reason, without the file name
    bool inProject = false;         ///< from the project's own tasks folder
    /** A KernelBench problem (folder: its .py file; relativePath: "level1/19_ReLU"). */
    std::optional<KernelBenchProblem> kernelBench;
    bool isKernelBench() const { return kernelBench.has_value(); }
    /** A native task that did not load; a KernelBench problem never counts as failed. */
    bool failed() const { return !task.has_value() && !kernelBench.has_value(); }
    /** A KernelBench problem the bridge does not run (Level 4). */
    bool unsupported() const { return kernelBench && !kernelBench->unsupported.isEmpty(); }
};

/**
 * The task folders under a tasks root, in path order. A folder whose manifest does not load
 * stays in the list, flagged with its error, so that a broken task is seen rather than
 * silently missing.
 */
class TaskListModel : public QAbstractListModel {
    Q_OBJECT

public:
    enum Role {
        ErrorRole = Qt::UserRole + 1,  ///< QString: the load error, empty for a valid task
        FolderRole,                    ///< QString: absolute task folder
    };

    explicit TaskListModel(QObject* parent = nullptr);

    /**
     * Replaces the list with the tasks under `root`. Manifests are small JSON files, so this
     * runs on the calling thread; a bad root gives an empty list and rootError().
     */
    void load(const QString& root);
    /** The bundled tasks under `root`, then the project's tasks under `projectTasks` (may be empty). */
    void load(const QString& root, const QString& projectTasks);
    /** As above, then the problems of the project's KernelBench sets. */
    void load(const QString& root, const QString& projectTasks, const std::vector<KernelBenchSet>& sets);

    QString root() const { return root_; }
    QString projectTasks() const { return projectTasks_; }
    const std::vector<KernelBenchSet>& kernelBenchSets() const { return sets_; }
    /** Why a KernelBench set gave no problems (one line per set); empty when all listed. */
    QString kernelBenchError() const { return kernelBenchError_; }
    int kernelBenchCount() const;
    /** The row of the task whose relative path is `relativePath` (bundled first); -1 when none. */
    int rowOf(const QString& relativePath) const;
    QString rootError() const { return rootError_; }
    int failedCount() const;
    const TaskEntry* entry(const QModelIndex& index) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    QString root_;
    QString projectTasks_;
    QString rootError_;
    QString kernelBenchError_;
    std::vector<KernelBenchSet> sets_;
    std::vector<TaskEntry> entries_;
};

}  // namespace kfgui
