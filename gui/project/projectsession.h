#pragma once
#include <memory>

#include <QObject>
#include <QString>
#include <QStringList>

#include "project/kernelbenchset.h"

namespace kf {
class ProjectView;
}

namespace kfgui {

/**
 * The open project: its folder and the GUI thread's read-only view of its store (the engine
 * writes through connections of its own, on its threads; SQLite WAL lets both work at
 * once). Keeps the recent-projects list in the settings.
 */
class ProjectSession : public QObject {
    Q_OBJECT

public:
    explicit ProjectSession(QObject* parent = nullptr);
    ~ProjectSession() override;

    /** Opens the project in `dir`, creating it (named after the folder) when `create` is set. */
    bool open(const QString& dir, bool create, QString* error = nullptr);
    void close();

    bool isOpen() const { return view_ != nullptr; }
    QString dir() const { return dir_; }
    QString name() const;
    /** <project>/tasks: where "Add Task from Folder…" copies tasks. */
    QString tasksDir() const;
    /** The GUI thread's read-only view of the project; null when no project is open. */
    const kf::ProjectView* view() const { return view_.get(); }

    /** Copies the task folder `source` into tasksDir(); returns the copy's folder. */
    QString addTask(const QString& source, QString* error = nullptr);

    /** The KernelBench problem sets opened in the project (<project>/kernelbench.json). */
    const std::vector<KernelBenchSet>& kernelBenchSets() const { return kbSets_; }
    /** Why kernelbench.json did not read when the project opened; empty when it did or is absent. */
    QString kernelBenchSetsError() const { return kbSetsError_; }
    /**
     * Checks `set` (kernelBenchProblems()) and keeps it in the project, replacing a set of the
     * same folder and level; false with the reason when the folder, level or selection is wrong.
     */
    bool addKernelBenchSet(const KernelBenchSet& set, QString* error = nullptr);

    static QStringList recentProjects();
    static void addRecent(const QString& dir);
    static constexpr int kMaxRecent = 8;

Q_SIGNALS:
    void opened(const QString& dir);
    void closed();

private:
    QString dir_;
    std::unique_ptr<kf::ProjectView> view_;
    std::vector<KernelBenchSet> kbSets_;
    QString kbSetsError_;
};

/**
 * The demo project `make run` opens: <user data dir>/demo-project (for example
 * ~/.local/share/KernelFoundry/kernel-foundry/demo-project), created on first use.
 */
QString demoProjectDir();

}  // namespace kfgui
