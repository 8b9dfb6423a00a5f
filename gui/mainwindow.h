#pragma once
#include <QMainWindow>

#include "runs/runconfig.h"

#include "launchoptions.h"
#include "project/kernelbenchset.h"
#include "runs/engineevent.h"
#include "runs/kernelbenchsetsearch.h"
#include "runs/runphase.h"

class QDockWidget;
class QMenu;
class QTabWidget;

namespace kfgui {

class CandidateView;
class CompareView;
class DeviceProbe;
class KernelBenchReportDialog;
class LlmKeyring;
class LibraryView;
class ProjectSession;
class RunController;
class RunPanel;
class SearchView;
class TaskBrowser;

/**
 * The workbench: a project (File menu), the task browser, the run dock (configuration and
 * Start / Pause / Resume / Stop) and the views of the search, the candidate, the comparison
 * and the experience library as tabs.
 */
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(const LaunchOptions& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    /** Shows the tasks under `folder` (empty: none found) beside the project's own tasks. */
    void setTasksFolder(const QString& folder);
    /** Opens (or, with `create`, creates) the project in `dir`; false with a message on failure. */
    bool openProject(const QString& dir, bool create);
    /** Starts a search on the selected task with the run panel's configuration. */
    bool startSearch();
    /** Run › Search KernelBench Problem Set…: asks for the set and its budgets, then starts. */
    bool searchKernelBenchSet();
    /**
     * Searches the problems of a KernelBench set one after the other, with the run panel's
     * configuration per problem and the set's budgets shared out over them; false with a
     * message when no project is open or the set cannot be read.
     */
    bool startKernelBenchSetSearch(const KernelBenchSetSearch& search);
    /**
     * Opens a KernelBench problem set in the project (kept in <project>/kernelbench.json) and
     * lists its problems in the Tasks tab; false with a message when the folder, level or
     * selection is wrong or no project is open.
     */
    bool addKernelBenchSet(const KernelBenchSet& set);
    /** The kfoundry-worker the searches use (empty: next to the executable). */
    void setWorkerPath(const QString& path);
    /**
     * Shows (and refreshes) the KernelBench report of the open project (Run › KernelBench
     * Report…); nullptr, with a message, when no project is open.
     */
    KernelBenchReportDialog* showKernelBenchReport();

    TaskBrowser* taskBrowser() const { return browser_; }
    ProjectSession* session() const { return session_; }
    RunController* runController() const { return runs_; }
    RunPanel* runPanel() const { return runPanel_; }
    SearchView* searchView() const { return searchView_; }
    QTabWidget* tabs() const { return tabs_; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createMenus();
    void createDocks();
    void connectViews();
    void restoreLayout();
    void saveLayout();
    void updateTitle();
    void updateRecentMenu();
    void newProject();
    void openProjectDialog();
    void addTaskFromFolder();
    void addKernelBenchDialog();
    /** What the project's latest run of KernelBench problem `key` reached; empty: none. */
    QString kernelBenchRunSummary(const QString& key) const;
    void openTasksFolder();
    void showSettings();
    void showAbout();
    void updateStatus(int count, int failed);
    void updateTaskForRun();
    void onRunStarted(qint64 runId);
    void onRunStateChanged(RunPhase state);
    void onRunFinished(const RunOutcome& outcome);
    void onCandidateSelected(qint64 id);
    void injectCandidate(const QString& source, int island, qint64 parentId);
    void showLatestRun();
    /** Shows run `runId` from the store: the live run (then live events follow) or an earlier one. */
    void showRun(qint64 runId);
    void refreshRunPicker();
    /** The request's project, run panel configuration, worker, library and executor. */
    RunRequest baseRequest() const;
    /** The KernelBench evaluation options of Settings › Executor, for problems of `root`'s `level`. */
    static void setKernelBenchOptions(RunRequest& request, const QString& root, int level);
    /** Starts `request`, after reading the LLM keys when the LLM experts are on. */
    bool startRequest(const RunRequest& request);
    void launch(const RunRequest& request);
    void updateLlmAvailable();
    void inform(const QString& title, const QString& text);

    QString tasksRoot_;
    QString workerPath_;
    QString runTask_;
    LlmKeyring* keyring_;
    bool keysPending_ = false;  ///< a start waits for the keyring
    quint64 keysSerial_ = 0;    ///< which start the keyring's answer (or its time-out) belongs to
    bool viewFollowsLive_ = true;  ///< the search view shows the live run (else an earlier one the user chose)
    RunRequest pendingRequest_;
    ProjectSession* session_;
    KernelBenchReportDialog* kbReport_ = nullptr;
    RunController* runs_;
    DeviceProbe* probe_;
    QString cudaDevice_;
    bool probed_ = false;
    TaskBrowser* browser_;
    SearchView* searchView_;
    CandidateView* candidateView_;
    CompareView* compareView_;
    LibraryView* libraryView_;
    QTabWidget* tabs_;
    RunPanel* runPanel_;
    QDockWidget* runDock_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QAction* addTaskAction_ = nullptr;
    QAction* addKernelBenchAction_ = nullptr;
};

}  // namespace kfgui
