#include "project/projectsession.h"

#include <algorithm>
#include <filesystem>

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "kf/store.h"
#include "kf/task.h"
#include "paths.h"
#include "preferences.h"

namespace kfgui {

ProjectSession::ProjectSession(QObject* parent) : QObject(parent) {}

ProjectSession::~ProjectSession() = default;

bool ProjectSession::open(const QString& dir, bool create, QString* error) {
    const QString folder = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    try {
        const std::filesystem::path path = toPath(folder);
        {
            // Created or migrated through a write connection that closes at once: from here
            // on the app only reads; the engine writes.
            kf::ProjectStore writer = create ? kf::ProjectStore::open_or_create(path, QFileInfo(folder).fileName().toStdString())
                                             : kf::ProjectStore::open(path);
        }
        auto view = std::make_unique<kf::ProjectView>(kf::ProjectView::open(path));
        close();
        view_ = std::move(view);
        dir_ = fromPath(view_->dir());
        kbSetsError_.clear();
        kbSets_ = loadKernelBenchSets(dir_, &kbSetsError_);
    } catch (const std::exception& e) {
        if (error) *error = fromUtf8(e.what());
        return false;
    }
    addRecent(dir_);
    Q_EMIT opened(dir_);
    return true;
}

void ProjectSession::close() {
    if (!view_) return;
    view_.reset();
    dir_.clear();
    kbSets_.clear();
    kbSetsError_.clear();
    Q_EMIT closed();
}

QString ProjectSession::name() const { return view_ ? fromUtf8(view_->name()) : QString(); }

QString ProjectSession::tasksDir() const { return dir_.isEmpty() ? QString() : dir_ + QStringLiteral("/tasks"); }

QString ProjectSession::addTask(const QString& source, QString* error) {
    try {
        const kf::Task task = kf::load_task(toPath(source));  // refuse a folder that is not a task
        const std::filesystem::path target = toPath(tasksDir()) / task.dir.filename();
        if (std::filesystem::exists(target)) {
            if (error) *error = tr("The project already has a task folder %1.").arg(fromPath(target));
            return {};
        }
        std::filesystem::create_directories(target.parent_path());
        std::filesystem::copy(task.dir, target, std::filesystem::copy_options::recursive);
        return fromPath(target);
    } catch (const std::exception& e) {
        if (error) *error = fromUtf8(e.what());
        return {};
    }
}

bool ProjectSession::addKernelBenchSet(const KernelBenchSet& given, QString* error) {
    if (!isOpen()) {
        if (error) *error = tr("No project is open.");
        return false;
    }
    KernelBenchSet set = given;
    set.root = QDir::cleanPath(QFileInfo(given.root).absoluteFilePath());
    set.problems = given.problems.trimmed();
    try {
        kernelBenchProblems(set);  // throws saying what is wrong
    } catch (const std::exception& e) {
        if (error) *error = fromUtf8(e.what());
        return false;
    }
    std::vector<KernelBenchSet> sets = kbSets_;
    auto same = std::find_if(sets.begin(), sets.end(), [&](const KernelBenchSet& s) { return s.root == set.root && s.level == set.level; });
    if (same != sets.end()) *same = set;
    else sets.push_back(set);
    if (!saveKernelBenchSets(dir_, sets, error)) return false;
    kbSets_ = std::move(sets);
    return true;
}

QStringList ProjectSession::recentProjects() { return prefs::recentProjects.get(); }

void ProjectSession::addRecent(const QString& dir) {
    QStringList recent = prefs::recentProjects.get();
    recent.removeAll(dir);
    recent.prepend(dir);
    while (recent.size() > kMaxRecent) recent.removeLast();
    prefs::recentProjects.set(recent);
}

QString demoProjectDir() {
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/demo-project");
}

}  // namespace kfgui
