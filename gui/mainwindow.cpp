#include "mainwindow.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

#include "preferences.h"
#include "taskbrowser.h"
#include "tasklistmodel.h"

namespace kfgui {

MainWindow::MainWindow(const LaunchOptions& options, QWidget* parent)
    : QMainWindow(parent), projectDir_(options.projectDir), browser_(new TaskBrowser(this)) {
    setObjectName(QStringLiteral("mainWindow"));
    setCentralWidget(browser_);
    if (projectDir_.isEmpty())
        setWindowTitle(tr("Kernel Foundry"));
    else
        setWindowTitle(tr("%1 — Kernel Foundry").arg(QDir::toNativeSeparators(projectDir_)));
    createMenus();
    connect(browser_, &TaskBrowser::tasksLoaded, this, &MainWindow::updateStatus);

    resize(1200, 760);
    restoreGeometry(prefs::windowGeometry.get());
    restoreState(prefs::windowState.get());
    browser_->restoreSplitterState(prefs::browserSplitter.get());

    setTasksFolder(resolveTasksFolder(options.tasksDir, QCoreApplication::applicationDirPath()));
}

void MainWindow::setTasksFolder(const QString& folder) { browser_->setTasksFolder(folder); }

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open Tasks Folder…"), this, &MainWindow::openTasksFolder);
    open->setShortcut(QKeySequence::Open);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About Kernel Foundry"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
}

void MainWindow::openTasksFolder() {
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Open Tasks Folder"), browser_->tasksFolder());
    if (!folder.isEmpty()) setTasksFolder(folder);
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About Kernel Foundry"),
                       tr("<h3>Kernel Foundry %1</h3>"
                          "<p>Evolves fast GPU kernels and verifies every candidate against the "
                          "task's reference.</p>")
                           .arg(QStringLiteral(KF_VERSION)));
}

void MainWindow::updateStatus(int count, int failed) {
    const QString root = QDir::toNativeSeparators(browser_->tasksFolder());
    if (root.isEmpty()) {
        statusBar()->showMessage(tr("No tasks folder found. Use File › Open Tasks Folder… or start with --tasks DIR."));
    } else if (!browser_->model()->rootError().isEmpty()) {
        statusBar()->showMessage(browser_->model()->rootError());
    } else if (failed == 0) {
        statusBar()->showMessage(tr("%n task(s) in %1", nullptr, count).arg(root));
    } else {
        statusBar()->showMessage(tr("%n task(s) in %1, %2 failed to load", nullptr, count).arg(root).arg(failed));
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    prefs::windowGeometry.set(saveGeometry());
    prefs::windowState.set(saveState());
    prefs::browserSplitter.set(browser_->saveSplitterState());
    event->accept();
}

}  // namespace kfgui
