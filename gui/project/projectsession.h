#pragma once
#include <memory>

#include <QObject>
#include <QString>
#include <QStringList>

namespace kf {
class ProjectStore;
}

namespace kfgui {

/**
 * The open project: its folder and the GUI thread's own read connection to its store (the
 * engine thread opens another one for writing; SQLite WAL lets both work at once). Keeps the
 * recent-projects list in the settings.
 */
class ProjectSession : public QObject {
    Q_OBJECT

public:
    explicit ProjectSession(QObject* parent = nullptr);
    ~ProjectSession() override;

    /** Opens the project in `dir`, creating it (named after the folder) when `create` is set. */
    bool open(const QString& dir, bool create, QString* error = nullptr);
    void close();

    bool isOpen() const { return store_ != nullptr; }
    QString dir() const { return dir_; }
    QString name() const;
    /** <project>/tasks: where "Add Task from Folder…" copies tasks. */
    QString tasksDir() const;
    /** The GUI thread's connection; null when no project is open. */
    kf::ProjectStore* store() const { return store_.get(); }

    /** Copies the task folder `source` into tasksDir(); returns the copy's folder. */
    QString addTask(const QString& source, QString* error = nullptr);

    static QStringList recentProjects();
    static void addRecent(const QString& dir);
    static constexpr int kMaxRecent = 8;

Q_SIGNALS:
    void opened(const QString& dir);
    void closed();

private:
    QString dir_;
    std::unique_ptr<kf::ProjectStore> store_;
};

/**
 * The demo project `make run` opens: <user data dir>/demo-project (for example
 * ~/.local/share/KernelFoundry/kernel-foundry/demo-project), created on first use.
 */
QString demoProjectDir();

}  // namespace kfgui
