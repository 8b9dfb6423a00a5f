#include "launchoptions.h"

#include <cstdio>
#include <cstdlib>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace kfgui {

namespace {

const QString kProjectFile = QStringLiteral("project.kfproj");
const QString kDatabaseFile = QStringLiteral("project.db");

/** The app's options, added to a parser. */
struct Parser {
    QCommandLineParser parser;
    QCommandLineOption help = parser.addHelpOption();
    QCommandLineOption version = parser.addVersionOption();
    QCommandLineOption tasks{QStringLiteral("tasks"),
                             QCoreApplication::translate("LaunchOptions", "Show the tasks found under <dir>."),
                             QCoreApplication::translate("LaunchOptions", "dir")};
    QCommandLineOption project{QStringLiteral("project"),
                               QCoreApplication::translate("LaunchOptions", "Open the project in <dir>."),
                               QCoreApplication::translate("LaunchOptions", "dir")};
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QCoreApplication::translate("LaunchOptions", "Save an image of the window to <file> and quit."),
        QCoreApplication::translate("LaunchOptions", "file")};
    QCommandLineOption demo{
        QStringLiteral("demo"),
        QCoreApplication::translate("LaunchOptions",
                                    "Open the demo project in the user's data folder, creating it if missing.")};

    Parser() {
        parser.setApplicationDescription(QCoreApplication::translate(
            "LaunchOptions", "Evolves fast GPU kernels and verifies them against a reference."));
        parser.addOptions({tasks, project, screenshot, demo});
        parser.addPositionalArgument(
            QStringLiteral("project"),
            QCoreApplication::translate(
                "LaunchOptions", "An existing project to open: its folder, its project.kfproj or its project.db."),
            QCoreApplication::translate("LaunchOptions", "[project]"));
    }
};

}  // namespace

QString projectFolderFromPath(const QString& path, QString* error) {
    auto fail = [error](const QString& message) {
        if (error) *error = message;
        return QString();
    };
    const QFileInfo info(path);
    const QString shown = QDir::toNativeSeparators(path);
    if (!info.exists())
        return fail(QCoreApplication::translate("LaunchOptions", "No such file or folder: %1").arg(shown));
    QString folder;
    if (info.isDir())
        folder = info.absoluteFilePath();
    else if (info.suffix() == QStringLiteral("kfproj") || info.fileName() == kDatabaseFile)
        folder = info.absolutePath();
    else
        return fail(
            QCoreApplication::translate(
                "LaunchOptions", "Not a Kernel Foundry project: %1 (give the project's folder, its %2 or its %3)")
                .arg(shown, kProjectFile, kDatabaseFile));
    folder = QDir::cleanPath(folder);
    if (!QFileInfo(QDir(folder).filePath(kProjectFile)).isFile())
        return fail(QCoreApplication::translate("LaunchOptions", "Not a Kernel Foundry project: %1 (no %2 in %3)")
                        .arg(shown, kProjectFile, QDir::toNativeSeparators(folder)));
    return folder;
}

LaunchParse readLaunchArguments(const QStringList& arguments) {
    Parser p;
    QCommandLineParser& parser = p.parser;

    LaunchParse result;
    auto error = [&result](const QString& message) {
        result.action = LaunchParse::Action::Error;
        result.text = message;
        return result;
    };
    if (!parser.parse(arguments)) return error(parser.errorText());
    if (parser.isSet(QStringLiteral("help-all"))) {
        result.action = LaunchParse::Action::HelpAll;  // Qt's own options too: only process() prints them
        return result;
    }
    if (parser.isSet(p.help)) {
        result.action = LaunchParse::Action::Help;
        result.text = parser.helpText();
        return result;
    }
    if (parser.isSet(p.version)) {
        result.action = LaunchParse::Action::Version;
        result.text = QCoreApplication::applicationName() + QLatin1Char(' ') + QCoreApplication::applicationVersion() +
                      QLatin1Char('\n');
        return result;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1)
        return error(QCoreApplication::translate("LaunchOptions", "Unexpected argument: %1").arg(positional.at(1)));

    auto absolute = [](const QString& path) { return path.isEmpty() ? path : QFileInfo(path).absoluteFilePath(); };
    LaunchOptions& o = result.options;
    // KF_TASKS_DIR is the kfoundry CLI's override too; --tasks wins over it.
    o.tasksDir = absolute(parser.isSet(p.tasks) ? parser.value(p.tasks) : qEnvironmentVariable("KF_TASKS_DIR"));
    o.projectDir = absolute(parser.value(p.project));
    o.screenshot = absolute(parser.value(p.screenshot));
    o.demo = parser.isSet(p.demo);
    if (!positional.isEmpty()) {
        if (o.demo || !o.projectDir.isEmpty())
            return error(QCoreApplication::translate("LaunchOptions",
                                                     "Give either a project to open or --project/--demo, not both."));
        QString why;
        o.openProject = projectFolderFromPath(positional.constFirst(), &why);
        if (o.openProject.isEmpty()) return error(why);
    }
    return result;
}

LaunchOptions parseLaunchOptions(const QStringList& arguments) {
    const LaunchParse parsed = readLaunchArguments(arguments);
    switch (parsed.action) {
        case LaunchParse::Action::Run:
            return parsed.options;
        case LaunchParse::Action::HelpAll:
            Parser().parser.process(arguments);  // prints the help and exits
            std::exit(0);
        case LaunchParse::Action::Help:
        case LaunchParse::Action::Version:
            std::fputs(qPrintable(parsed.text), stdout);
            std::exit(0);
        case LaunchParse::Action::Error:
            break;
    }
    std::fprintf(stderr, "kernel-foundry: %s\n", qPrintable(parsed.text));
    std::exit(2);
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

QString resolveIconFile(const QString& executableDir) {
    const QDir exe(executableDir);
    const QString file = QLatin1String(kApplicationId) + QStringLiteral(".svg");
    for (const QString& folder :
         {QStringLiteral("../share/icons/hicolor/scalable/apps"), QStringLiteral("../../resources/icons")}) {
        const QFileInfo candidate(exe.filePath(folder + QLatin1Char('/') + file));
        if (candidate.isFile()) return QDir::cleanPath(candidate.absoluteFilePath());
    }
    return {};
}

}  // namespace kfgui
