#include "launchoptions.h"

#include <cstdio>
#include <cstdlib>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace kfgui {

LaunchOptions parseLaunchOptions(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QCoreApplication::translate("LaunchOptions", "Evolves fast GPU kernels and verifies them against a reference."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption tasks(QStringLiteral("tasks"),
                                   QCoreApplication::translate("LaunchOptions", "Show the tasks found under <dir>."),
                                   QCoreApplication::translate("LaunchOptions", "dir"));
    const QCommandLineOption project(QStringLiteral("project"),
                                     QCoreApplication::translate("LaunchOptions", "Open the project in <dir>."),
                                     QCoreApplication::translate("LaunchOptions", "dir"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QCoreApplication::translate("LaunchOptions", "Save an image of the window to <file> and quit."),
        QCoreApplication::translate("LaunchOptions", "file"));
    const QCommandLineOption demo(
        QStringLiteral("demo"),
        QCoreApplication::translate("LaunchOptions", "Open the demo project in the user's data folder, creating it if missing."));
    parser.addOptions({tasks, project, screenshot, demo});

    if (!parser.parse(arguments)) {
        std::fprintf(stderr, "%s\n", qPrintable(parser.errorText()));
        std::exit(2);
    }
    if (parser.isSet(QStringLiteral("help"))) parser.showHelp(0);
    if (parser.isSet(QStringLiteral("version"))) parser.showVersion();
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "%s\n",
                     qPrintable(QCoreApplication::translate("LaunchOptions", "Unexpected argument: %1")
                                    .arg(parser.positionalArguments().constFirst())));
        std::exit(2);
    }

    auto absolute = [](const QString& p) { return p.isEmpty() ? p : QFileInfo(p).absoluteFilePath(); };
    LaunchOptions o;
    // KF_TASKS_DIR is the kfoundry CLI's override too; --tasks wins over it.
    o.tasksDir = absolute(parser.isSet(tasks) ? parser.value(tasks) : qEnvironmentVariable("KF_TASKS_DIR"));
    o.projectDir = absolute(parser.value(project));
    o.screenshot = absolute(parser.value(screenshot));
    o.demo = parser.isSet(demo);
    return o;
}

QString resolveTasksFolder(const QString& requested, const QString& executableDir) {
    if (!requested.isEmpty()) return QDir::cleanPath(QFileInfo(requested).absoluteFilePath());
    const QDir exe(executableDir);
    // The installed layout first: for /usr/bin the build-tree guess would be /tasks.
    for (const QString& relative : {QStringLiteral("../share/kernel-foundry/tasks"), QStringLiteral("../../tasks")}) {
        const QFileInfo candidate(exe.filePath(relative));
        if (candidate.isDir()) return QDir::cleanPath(candidate.absoluteFilePath());
    }
    return {};
}

}  // namespace kfgui
