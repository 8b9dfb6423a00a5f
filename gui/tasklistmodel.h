#pragma once
#include <optional>
#include <vector>

#include <QAbstractListModel>
#include <QString>

#include "kf/task.h"

namespace kfgui {

/** One task folder: the loaded task, or the reason it could not be loaded. */
struct TaskEntry {
    QString folder;                 ///< absolute path of the task folder
    QString relativePath;           ///< relative to the tasks root, e.g. "level1/softmax"
    std::optional<kf::Task> task;   ///< empty when loading failed
    QString error;                  ///< the loader's full message when it failed
    QString shortError;             ///< the field and reason, without the file name
    bool inProject = false;         ///< from the project's own tasks folder
    bool failed() const { return !task.has_value(); }
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

    QString root() const { return root_; }
    QString projectTasks() const { return projectTasks_; }
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
    std::vector<TaskEntry> entries_;
};

}  // namespace kfgui
