#pragma once
#include <QMainWindow>

#include "launchoptions.h"

namespace kfgui {

class TaskBrowser;

/** The application window: for now the task browser, a menu and a status bar. */
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(const LaunchOptions& options, QWidget* parent = nullptr);

    /** Shows the tasks under `folder` (empty: none found). */
    void setTasksFolder(const QString& folder);
    TaskBrowser* taskBrowser() const { return browser_; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createMenus();
    void openTasksFolder();
    void showAbout();
    void updateStatus(int count, int failed);

    QString projectDir_;
    TaskBrowser* browser_;
};

}  // namespace kfgui
