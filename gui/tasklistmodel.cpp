#include "tasklistmodel.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QDir>
#include <QStyle>

#include "kf/error.h"
#include "paths.h"

namespace kfgui {

namespace {

TaskEntry loadEntry(const std::filesystem::path& dir, const QDir& root) {
    TaskEntry e;
    e.folder = fromPath(dir);
    e.relativePath = root.relativeFilePath(e.folder);
    try {
        e.task = kf::load_task(dir);
    } catch (const kf::TaskError& err) {
        e.error = fromUtf8(err.what());
        e.shortError = fromUtf8(err.field().empty() ? err.reason() : err.field() + ": " + err.reason());
    } catch (const std::exception& err) {
        e.error = e.shortError = fromUtf8(err.what());
    }
    return e;
}

}  // namespace

TaskListModel::TaskListModel(QObject* parent) : QAbstractListModel(parent) {}

void TaskListModel::load(const QString& root) { load(root, projectTasks_, sets_); }

void TaskListModel::load(const QString& root, const QString& projectTasks) { load(root, projectTasks, sets_); }

void TaskListModel::load(const QString& root, const QString& projectTasks, const std::vector<KernelBenchSet>& sets) {
    beginResetModel();
    root_ = root;
    projectTasks_ = projectTasks;
    sets_ = sets;
    rootError_.clear();
    kernelBenchError_.clear();
    entries_.clear();
    if (root.isEmpty()) {
        rootError_ = tr("No tasks folder");
    } else if (!QDir(root).exists()) {
        rootError_ = tr("The folder %1 does not exist").arg(QDir::toNativeSeparators(root));
    } else {
        try {
            const QDir rootDir(root);
            for (const auto& dir : kf::find_task_dirs(toPath(root))) entries_.push_back(loadEntry(dir, rootDir));
        } catch (const std::exception& err) {
            rootError_ = fromUtf8(err.what());
        }
    }
    // The project's own tasks (copied in with "Add Task from Folder…"); none is not an error.
    if (!projectTasks.isEmpty() && QDir(projectTasks).exists()) {
        try {
            const QDir projectDir(projectTasks);
            for (const auto& dir : kf::find_task_dirs(toPath(projectTasks))) {
                entries_.push_back(loadEntry(dir, projectDir));
                entries_.back().inProject = true;
            }
        } catch (const std::exception&) {
            // An unreadable project tasks folder shows no project tasks.
        }
    }
    // The problems of the project's KernelBench sets, named as `kfoundry kernelbench` names them.
    QStringList setErrors;
    for (const KernelBenchSet& set : sets) {
        try {
            for (KernelBenchProblem& p : kernelBenchProblems(set)) {
                TaskEntry e;
                e.folder = fromPath(p.problem.file);
                e.relativePath = fromUtf8(p.problem.key());
                e.kernelBench = std::move(p);
                entries_.push_back(std::move(e));
            }
        } catch (const std::exception& err) {
            setErrors << tr("KernelBench level %1 in %2: %3").arg(set.level).arg(QDir::toNativeSeparators(set.root), fromUtf8(err.what()));
        }
    }
    kernelBenchError_ = setErrors.join(QLatin1Char('\n'));
    endResetModel();
}

int TaskListModel::rowOf(const QString& relativePath) const {
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].relativePath == relativePath) return static_cast<int>(i);
    return -1;
}

int TaskListModel::kernelBenchCount() const {
    int n = 0;
    for (const TaskEntry& e : entries_) n += e.isKernelBench() ? 1 : 0;
    return n;
}

int TaskListModel::failedCount() const {
    int n = 0;
    for (const TaskEntry& e : entries_) n += e.failed() ? 1 : 0;
    return n;
}

const TaskEntry* TaskListModel::entry(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this || index.row() >= static_cast<int>(entries_.size())) return nullptr;
    return &entries_[static_cast<std::size_t>(index.row())];
}

int TaskListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

QVariant TaskListModel::data(const QModelIndex& index, int role) const {
    const TaskEntry* e = entry(index);
    if (!e) return {};
    switch (role) {
    case Qt::DisplayRole:
        // The whole reason is in the tooltip and the details pane.
        if (e->unsupported()) return tr("%1 (KernelBench)\nNot supported").arg(e->relativePath);
        if (e->isKernelBench()) return tr("%1 (KernelBench)").arg(e->relativePath);
        if (e->failed()) return tr("%1\nFailed to load: %2").arg(e->relativePath, e->shortError);
        if (e->inProject) return tr("%1 (project)").arg(e->relativePath);
        return e->relativePath;
    case Qt::ToolTipRole:
        if (e->unsupported()) return e->kernelBench->unsupported;
        if (e->isKernelBench())
            return tr("KernelBench level %1, problem %2: %3").arg(e->kernelBench->problem.level).arg(e->kernelBench->problem.id).arg(QDir::toNativeSeparators(e->folder));
        if (e->failed()) return e->error;
        return e->task->title.empty() ? e->relativePath : fromUtf8(e->task->title);
    case Qt::ForegroundRole:
        if (e->failed() || e->unsupported()) return QBrush(QColor(0xc6, 0x28, 0x28));
        return {};
    case Qt::DecorationRole:
        if (e->failed() || e->unsupported()) return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        return {};
    case ErrorRole:
        return e->unsupported() ? e->kernelBench->unsupported : e->error;
    case FolderRole:
        return e->folder;
    default:
        return {};
    }
}

}  // namespace kfgui
