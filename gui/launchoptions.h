#pragma once
#include <QString>
#include <QStringList>

namespace kfgui {

/** What the command line asked for. Folders are made absolute; empty means not given. */
struct LaunchOptions {
    QString tasksDir;    ///< --tasks DIR, else $KF_TASKS_DIR
    QString projectDir;  ///< --project DIR
    QString screenshot;  ///< --screenshot FILE: save an image of the window and quit
    bool demo = false;   ///< --demo: open (creating it if missing) the demo project
};

/**
 * Parses the arguments (arguments[0] is the program). Prints help or the version and exits
 * for --help/--version, and prints an error and exits with status 2 on bad usage, as the
 * kfoundry CLI does.
 */
LaunchOptions parseLaunchOptions(const QStringList& arguments);

/**
 * The tasks folder to show: `requested` when given, else the bundled tasks found relative to
 * the executable (<exe>/../share/kernel-foundry/tasks when installed, <exe>/../../tasks in
 * the build tree). Never a path fixed at build time, so that the install is relocatable.
 * Empty when none exists.
 */
QString resolveTasksFolder(const QString& requested, const QString& executableDir);

}  // namespace kfgui
