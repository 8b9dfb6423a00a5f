#pragma once
#include <QString>
#include <QStringList>

namespace kfgui {

/** What the command line asked for. Folders are made absolute; empty means not given. */
struct LaunchOptions {
    QString tasksDir;          ///< --tasks DIR, else $KF_TASKS_DIR
    QString projectDir;        ///< --project DIR (created when missing)
    QString screenshot;        ///< --screenshot FILE: save an image of the window and quit
    bool demo = false;         ///< --demo: open (creating it if missing) the demo project
    QString openProject = {};  ///< the argument PROJECT: an existing project's folder (last: aggregate order)
};

/** The outcome of reading the command line, without printing or exiting. */
struct LaunchParse {
    enum class Action { Run, Help, HelpAll, Version, Error };
    Action action = Action::Run;
    LaunchOptions options;
    QString text;  ///< the help or version text, or the error message (HelpAll: empty)
};

/**
 * Reads the arguments (arguments[0] is the program). The one positional argument is a project
 * to open: its folder, its project.kfproj or its project.db (as a file manager passes it);
 * anything else is an error.
 */
LaunchParse readLaunchArguments(const QStringList& arguments);

/**
 * readLaunchArguments(), then prints help or the version and exits with status 0, or prints
 * the error and exits with status 2 on bad usage (a path that is not a project included), as
 * the kfoundry CLI does.
 */
LaunchOptions parseLaunchOptions(const QStringList& arguments);

/**
 * The project folder that `path` names: a folder holding project.kfproj, a .kfproj file or a
 * project.db file beside a project.kfproj. Empty, with the reason in `error`, when `path` is
 * not a Kernel Foundry project.
 */
QString projectFolderFromPath(const QString& path, QString* error);

/**
 * The tasks folder to show: `requested` when given, else the bundled tasks found relative to
 * the executable (<exe>/../share/kernel-foundry/tasks when installed, <exe>/../../tasks in
 * the build tree). Never a path fixed at build time, so that the install is relocatable.
 * Empty when none exists.
 */
QString resolveTasksFolder(const QString& requested, const QString& executableDir);

/**
 * The application icon's SVG file, found like the tasks folder: the installed hicolor icon
 * (<exe>/../share/icons/hicolor/scalable/apps) or the repository's resources/icons in the
 * build tree. Empty when neither exists.
 */
QString resolveIconFile(const QString& executableDir);

/** The icon's name in the icon theme, the desktop file's Icon= and the application id. */
inline constexpr const char* kApplicationId = "io.github.kernelfoundry.KernelFoundry";

}  // namespace kfgui
