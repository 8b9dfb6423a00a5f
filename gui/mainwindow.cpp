#include "mainwindow.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

#include "candidate/candidateview.h"
#include "compare/compareview.h"
#include "enginewords.h"
#include "kf/experts.h"
#include "kf/library.h"
#include "kf/store.h"
#include "library/libraryview.h"
#include "paths.h"
#include "preferences.h"
#include "project/projectsession.h"
#include "runs/deviceprobe.h"
#include "runs/kernelbenchreport.h"
#include "runs/kernelbenchsetsearch.h"
#include "runs/lineageview.h"
#include "runs/populationview.h"
#include "runs/runconfigwidget.h"
#include "runs/runcontroller.h"
#include "runs/runpanel.h"
#include "runs/searchview.h"
#include "settings/executorpage.h"
#include "settings/llmconfigfile.h"
#include "settings/llmkeyring.h"
#include "settings/settingsdialog.h"
#include "runs/runpicker.h"
#include "taskbrowser.h"
#include "tasklistmodel.h"

namespace kfgui {

MainWindow::MainWindow(const LaunchOptions& options, QWidget* parent)
    : QMainWindow(parent),
      keyring_(new LlmKeyring(this)),
      session_(new ProjectSession(this)),
      runs_(new RunController(this)),
      probe_(new DeviceProbe(this)),
      browser_(new TaskBrowser),
      searchView_(new SearchView),
      candidateView_(new CandidateView),
      compareView_(new CompareView),
      libraryView_(new LibraryView),
      tabs_(new QTabWidget(this)),
      runPanel_(new RunPanel) {
    setObjectName(QStringLiteral("mainWindow"));
    tabs_->setObjectName(QStringLiteral("mainTabs"));
    candidateView_->setObjectName(QStringLiteral("candidateView"));
    compareView_->setObjectName(QStringLiteral("compareView"));
    libraryView_->setObjectName(QStringLiteral("libraryView"));
    tabs_->addTab(browser_, tr("Tasks"));
    tabs_->addTab(searchView_, tr("Search"));
    tabs_->addTab(candidateView_, tr("Candidate"));
    tabs_->addTab(compareView_, tr("Compare"));
    tabs_->addTab(libraryView_, tr("Library"));
    setCentralWidget(tabs_);
    createDocks();
    createMenus();
    connectViews();
    runPanel_->configWidget()->setConfig(loadDefaultRunConfig());
    updateLlmAvailable();
    browser_->setRunSummary([this](const QString& key) { return kernelBenchRunSummary(key); });
    libraryView_->setLibraryPath(fromPath(kf::ExperienceLibrary::user_library_path()));

    resize(1400, 900);
    restoreLayout();

    tasksRoot_ = resolveTasksFolder(options.tasksDir, QCoreApplication::applicationDirPath());
    setTasksFolder(tasksRoot_);
    if (options.demo) openProject(demoProjectDir(), true);
    else if (!options.projectDir.isEmpty()) openProject(options.projectDir, true);
    else if (!options.openProject.isEmpty()) openProject(options.openProject, false);
    else updateTitle();
    probe_->start();
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
    runDock_ = new QDockWidget(tr("Run"), this);
    runDock_->setObjectName(QStringLiteral("runDock"));
    runDock_->setWidget(runPanel_);
    runDock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                          QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, runDock_);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* create = file->addAction(tr("&New Project…"), this, &MainWindow::newProject);
    create->setShortcut(QKeySequence::New);
    QAction* open = file->addAction(tr("&Open Project…"), this, &MainWindow::openProjectDialog);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    recentMenu_->setObjectName(QStringLiteral("recentMenu"));
    file->addSeparator();
    addTaskAction_ = file->addAction(tr("&Add Task from Folder…"), this, &MainWindow::addTaskFromFolder);
    addKernelBenchAction_ = file->addAction(tr("Add &KernelBench Problems…"), this, &MainWindow::addKernelBenchDialog);
    addKernelBenchAction_->setObjectName(QStringLiteral("addKernelBenchAction"));
    file->addAction(tr("Show &Tasks Folder…"), this, &MainWindow::openTasksFolder);
    file->addSeparator();
    QAction* settings = file->addAction(tr("&Settings…"), this, &MainWindow::showSettings);
    settings->setShortcut(QKeySequence::Preferences);
    settings->setMenuRole(QAction::PreferencesRole);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);
    updateRecentMenu();

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* start = run->addAction(tr("&Start Search"), this, &MainWindow::startSearch);
    start->setShortcut(Qt::CTRL | Qt::Key_R);
    run->addAction(tr("&Pause"), runs_, &RunController::pause);
    run->addAction(tr("&Resume"), runs_, &RunController::resume);
    run->addAction(tr("S&top"), runs_, &RunController::stop);
    run->addSeparator();
    run->addAction(tr("Search KernelBench Problem &Set…"), this, [this] { searchKernelBenchSet(); })
        ->setObjectName(QStringLiteral("kernelBenchSetSearchAction"));
    run->addAction(tr("&KernelBench Report…"), this, [this] { showKernelBenchReport(); })
        ->setObjectName(QStringLiteral("kernelBenchReportAction"));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(runDock_->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About Kernel Foundry"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
}

void MainWindow::connectViews() {
    connect(browser_, &TaskBrowser::tasksLoaded, this, &MainWindow::updateStatus);
    connect(browser_, &TaskBrowser::currentTaskChanged, this, &MainWindow::updateTaskForRun);
    connect(session_, &ProjectSession::opened, this, [this] { updateRecentMenu(); });

    connect(runPanel_, &RunPanel::startRequested, this, &MainWindow::startSearch);
    connect(runPanel_, &RunPanel::pauseRequested, runs_, &RunController::pause);
    connect(runPanel_, &RunPanel::resumeRequested, runs_, &RunController::resume);
    connect(runPanel_, &RunPanel::stopRequested, runs_, &RunController::stop);
    connect(runs_, &RunController::eventsReady, this, [this](const EngineEventList& events) {
        // Live events reach the view only while it shows the live run.
        if (viewFollowsLive_) searchView_->appendEvents(events);
    });
    connect(searchView_->runPicker(), &RunPicker::runChosen, this, [this](qint64 runId) {
        viewFollowsLive_ = runs_->isActive() && runId == runs_->runId();
        showRun(runId);
    });
    connect(keyring_, &LlmKeyring::keysRead, this, [this](const QMap<QString, QString>& keys, bool available, const QString& problem) {
        if (!keysPending_) return;
        keysPending_ = false;
        ++keysSerial_;  // the time-out no longer applies
        RunRequest request = pendingRequest_;
        pendingRequest_ = RunRequest();
        request.llmKeys = keys;
        if (!available)
            statusBar()->showMessage(
                tr("No keyring service is available (%1): LLM keys are taken from the providers' environment variables.").arg(problem),
                8000);
        launch(request);
    });
    connect(runs_, &RunController::runStarted, this, &MainWindow::onRunStarted);
    connect(runs_, &RunController::stateChanged, this, &MainWindow::onRunStateChanged);
    connect(runs_, &RunController::finished, this, &MainWindow::onRunFinished);
    connect(probe_, &DeviceProbe::finished, this, [this](const QString& device) {
        probed_ = true;
        cudaDevice_ = device;
        runPanel_->configWidget()->setCudaDevice(device);
    });

    PopulationView* population = searchView_->population();
    connect(population, &PopulationView::candidateSelected, this, &MainWindow::onCandidateSelected);
    connect(population, &PopulationView::compareRequested, this, [this](qint64 a, qint64 b) {
        compareView_->compare(session_->dir(), a, b);
        tabs_->setCurrentWidget(compareView_);
    });
    connect(searchView_->lineage(), &LineageView::candidateActivated, population, &PopulationView::selectCandidate);
    connect(compareView_, &CompareView::candidateActivated, this, [this](qint64 id) {
        searchView_->population()->selectCandidate(id);
        candidateView_->showCandidate(session_->dir(), id);
        tabs_->setCurrentWidget(candidateView_);
    });
    connect(candidateView_, &CandidateView::injectRequested, this, &MainWindow::injectCandidate);
}

void MainWindow::setTasksFolder(const QString& folder) {
    tasksRoot_ = folder;
    browser_->setFolders(folder, session_->tasksDir(), session_->kernelBenchSets());
    browser_->selectTask(prefs::lastTask.get());
}

bool MainWindow::addKernelBenchSet(const KernelBenchSet& set) {
    if (!session_->isOpen()) {
        inform(tr("No project"), tr("Create or open a project first (File › New Project…): the problem set is kept in it."));
        return false;
    }
    QString error;
    if (!session_->addKernelBenchSet(set, &error)) {
        inform(tr("Cannot add the KernelBench problems"), error);
        return false;
    }
    setTasksFolder(tasksRoot_);
    // Show the set's first problem.
    for (const KernelBenchSet& s : session_->kernelBenchSets())
        if (s.level == set.level && QFileInfo(s.root) == QFileInfo(set.root)) {
            const auto listed = kernelBenchProblems(s);
            if (!listed.empty()) browser_->selectTask(fromUtf8(listed.front().problem.key()));
            statusBar()->showMessage(tr("%n KernelBench problem(s) of level %1 added to the project", nullptr,
                                        static_cast<int>(listed.size())).arg(s.level),
                                     8000);
        }
    tabs_->setCurrentWidget(browser_);
    return true;
}

void MainWindow::addKernelBenchDialog() {
    if (!session_->isOpen()) return;
    QDialog dialog(this);
    dialog.setObjectName(QStringLiteral("kernelBenchDialog"));
    dialog.setWindowTitle(tr("Add KernelBench Problems"));
    auto* folder = new QLineEdit(&dialog);
    folder->setObjectName(QStringLiteral("kbFolder"));
    folder->setPlaceholderText(tr("the folder holding KernelBench/level1, …"));
    folder->setMinimumWidth(360);
    auto* browse = new QPushButton(tr("Browse…"), &dialog);
    connect(browse, &QPushButton::clicked, &dialog, [&dialog, folder] {
        const QString dir = QFileDialog::getExistingDirectory(&dialog, tr("KernelBench folder"), folder->text());
        if (!dir.isEmpty()) folder->setText(dir);
    });
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder, 1);
    folderRow->addWidget(browse);
    auto* level = new QSpinBox(&dialog);
    level->setObjectName(QStringLiteral("kbLevel"));
    level->setRange(1, 9);
    auto* problems = new QLineEdit(&dialog);
    problems->setObjectName(QStringLiteral("kbProblems"));
    problems->setPlaceholderText(tr("e.g. 1-20,25; empty: the whole level"));
    auto* note = new QLabel(tr("The problems are listed in the Tasks tab; the set is kept in the project's kernelbench.json."), &dialog);
    note->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("KernelBench folder:"), folderRow);
    form->addRow(tr("Level:"), level);
    form->addRow(tr("Problems:"), problems);
    form->addRow(note);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
        // A wrong folder, level or selection keeps the dialog open with the reason.
        KernelBenchSet set{folder->text().trimmed(), level->value(), problems->text().trimmed()};
        try {
            kernelBenchProblems(set);
        } catch (const std::exception& e) {
            QMessageBox::warning(&dialog, tr("Cannot add the KernelBench problems"), fromUtf8(e.what()));
            return;
        }
        dialog.accept();
    });
    if (dialog.exec() != QDialog::Accepted) return;
    addKernelBenchSet({folder->text().trimmed(), level->value(), problems->text().trimmed()});
}

QString MainWindow::kernelBenchRunSummary(const QString& key) const {
    const kf::ProjectView* store = session_->view();
    if (!store) return {};
    try {
        const auto run = store->latest_run(key.toStdString());
        if (!run) return {};
        const QString state = runStateText(run->state);
        const auto best = store->best(run->id);
        if (!best || best->second.fitness <= 0)
            return tr("Latest run: %1 (%2), no correct ModelNew yet.").arg(run->id).arg(state);
        return tr("Latest run: %1 (%2), best speedup %3× eager PyTorch (candidate %4).")
            .arg(run->id)
            .arg(state)
            .arg(best->second.fitness, 0, 'f', 2)
            .arg(best->first.id);
    } catch (const std::exception& e) {
        return tr("Cannot read the project's runs: %1").arg(fromUtf8(e.what()));
    }
}

void MainWindow::setWorkerPath(const QString& path) { workerPath_ = path; }

bool MainWindow::openProject(const QString& dir, bool create) {
    if (runs_->isActive()) {
        inform(tr("A search is running"), tr("Stop the running search before opening another project."));
        return false;
    }
    QString error;
    if (!session_->open(dir, create, &error)) {
        inform(tr("Cannot open the project"), error);
        updateTitle();
        return false;
    }
    setTasksFolder(tasksRoot_);
    updateTitle();
    showLatestRun();
    if (!session_->kernelBenchSetsError().isEmpty()) statusBar()->showMessage(session_->kernelBenchSetsError(), 8000);
    return true;
}

void MainWindow::showLatestRun() {
    searchView_->clear();
    searchView_->runPicker()->reset();
    const kf::ProjectView* store = session_->view();
    if (!store) return;
    try {
        const auto latest = store->latest_run();
        if (!latest) {
            searchView_->setSummary(tr("No search in this project yet. Pick a task and press Start search."));
            return;
        }
        refreshRunPicker();
        searchView_->runPicker()->selectRun(latest->id);
        showRun(latest->id);
    } catch (const std::exception& e) {
        searchView_->setSummary(tr("Cannot read the project's runs: %1").arg(fromUtf8(e.what())));
    }
}

void MainWindow::refreshRunPicker() {
    // Read on a pool thread: a project with many runs and evaluations takes a while.
    if (session_->isOpen()) searchView_->runPicker()->refresh(session_->dir(), runs_->isActive() ? runs_->runId() : 0);
}

void MainWindow::showRun(qint64 runId) {
    const kf::ProjectView* store = session_->view();
    if (!store || runId <= 0) return;
    try {
        const auto run = store->run(runId);
        if (!run) return;
        // The live run is read back from the store too; the events that follow extend it.
        searchView_->loadRun(*store, runId);
        const bool live = runs_->isActive() && runId == runs_->runId();
        const QString task = fromUtf8(run->task);
        if (live)
            searchView_->setSummary(tr("Run %1 on %2: %3").arg(runId).arg(task, runPhaseText(runs_->state())));
        else if (run->stop_reason.empty())
            searchView_->setSummary(tr("Run %1 on %2: %3").arg(runId).arg(task, runStateText(run->state)));
        else
            searchView_->setSummary(tr("Run %1 on %2: %3 — %4")
                                        .arg(runId)
                                        .arg(task, runStateText(run->state), stopReasonText(run->stop())));
    } catch (const std::exception& e) {
        searchView_->setSummary(tr("Cannot read run %1: %2").arg(runId).arg(fromUtf8(e.what())));
    }
}

void MainWindow::updateLlmAvailable() { runPanel_->setLlmAvailable(llmProvidersConfigured()); }

void MainWindow::updateTitle() {
    if (!session_->isOpen()) setWindowTitle(tr("Kernel Foundry"));
    else setWindowTitle(tr("%1 — Kernel Foundry").arg(QDir::toNativeSeparators(session_->dir())));
    addTaskAction_->setEnabled(session_->isOpen());
    addKernelBenchAction_->setEnabled(session_->isOpen());
}

void MainWindow::updateRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = ProjectSession::recentProjects();
    for (const QString& dir : recent)
        recentMenu_->addAction(QDir::toNativeSeparators(dir), this, [this, dir] { openProject(dir, false); });
    if (recent.isEmpty()) recentMenu_->addAction(tr("No recent projects"))->setEnabled(false);
    recentMenu_->addSeparator();
    recentMenu_->addAction(tr("Open the &Demo Project"), this, [this] { openProject(demoProjectDir(), true); });
}

void MainWindow::newProject() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("New Project: choose an empty folder"));
    if (dir.isEmpty()) return;
    if (QFileInfo::exists(dir + QStringLiteral("/project.kfproj"))) {
        inform(tr("New Project"), tr("%1 already holds a project; it is opened instead.").arg(QDir::toNativeSeparators(dir)));
    }
    openProject(dir, true);
}

void MainWindow::openProjectDialog() {
    const QString file = QFileDialog::getOpenFileName(this, tr("Open Project"), session_->dir(),
                                                      tr("Kernel Foundry projects (project.kfproj)"));
    if (!file.isEmpty()) openProject(QFileInfo(file).absolutePath(), false);
}

void MainWindow::addTaskFromFolder() {
    if (!session_->isOpen()) return;
    const QString source = QFileDialog::getExistingDirectory(this, tr("Add Task from Folder"));
    if (source.isEmpty()) return;
    QString error;
    const QString copy = session_->addTask(source, &error);
    if (copy.isEmpty()) {
        inform(tr("Cannot add the task"), error);
        return;
    }
    setTasksFolder(tasksRoot_);
    browser_->selectTask(QDir(session_->tasksDir()).relativeFilePath(copy));
    statusBar()->showMessage(tr("Task copied into the project: %1").arg(QDir::toNativeSeparators(copy)), 5000);
}

void MainWindow::openTasksFolder() {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Show Tasks Folder"), browser_->tasksFolder());
    if (!folder.isEmpty()) setTasksFolder(folder);
}

void MainWindow::showSettings() {
    SettingsDialog dialog(this);
    if (probed_) dialog.runDefaults()->setCudaDevice(cudaDevice_);
    dialog.runDefaults()->setConfig(loadDefaultRunConfig());
    if (dialog.exec() != QDialog::Accepted) return;
    if (!runs_->isActive()) runPanel_->configWidget()->setConfig(loadDefaultRunConfig());
    updateLlmAvailable();
}

void MainWindow::updateTaskForRun() {
    const TaskEntry* entry = browser_->currentEntry();
    if (!entry) runPanel_->setTask({});
    else if (entry->unsupported()) runPanel_->setTask(entry->relativePath, tr("not supported by the KernelBench bridge"));
    else if (entry->failed()) runPanel_->setTask(entry->relativePath, tr("does not load"));
    else runPanel_->setTask(entry->relativePath);
}

RunRequest MainWindow::baseRequest() const {
    RunRequest request;
    request.projectDir = session_->dir();
    request.config = runPanel_->configWidget()->config();
    request.workerPath = workerPath_;
    request.libraryPath = fromPath(kf::ExperienceLibrary::user_library_path());
    request.executor = ExecutorPage::fromPreferences(request.projectDir);
    return request;
}

void MainWindow::setKernelBenchOptions(RunRequest& request, const QString& root, int level) {
    // The Python worker evaluates ModelNew files (Settings › Executor: Python and worker).
    request.kbRoot = root;
    request.kbLevel = level;
    request.python = prefs::kbPython.get();
    request.kbWorker = prefs::kbWorker.get();
    request.kbTrials = prefs::kbTrials.get();
    request.kbReps = prefs::kbReps.get();
    request.kbTolerance = prefs::kbTolerance.get();
    request.kbBaselines = prefs::kbBaselines.get().split(QLatin1Char(','), Qt::SkipEmptyParts);
}

bool MainWindow::startSearch() {
    if (runs_->isActive() || keysPending_) return false;
    if (!session_->isOpen()) {
        inform(tr("No project"), tr("Create or open a project first (File › New Project…); runs are kept in it."));
        return false;
    }
    const TaskEntry* entry = browser_->currentEntry();
    if (!entry || entry->failed()) {
        inform(tr("No task"), tr("Select a task that loads in the Tasks tab."));
        return false;
    }
    if (entry->unsupported()) {
        inform(tr("Not supported"), tr("%1: %2").arg(entry->relativePath, entry->kernelBench->unsupported));
        return false;
    }
    RunRequest request = baseRequest();
    if (entry->isKernelBench()) {
        setKernelBenchOptions(request, entry->kernelBench->root, entry->kernelBench->problem.level);
        request.kbId = entry->kernelBench->problem.id;
    } else {
        request.taskDir = entry->folder;
    }
    const auto backend = kf::backend_from_string(request.config.backend.toStdString());
    if (!entry->isKernelBench() && (!backend || !entry->task->supports(*backend))) {
        inform(tr("Backend not supported"),
               tr("Task %1 has no reference for the %2 backend.").arg(entry->relativePath, request.config.backend));
        return false;
    }
    prefs::lastTask.set(entry->relativePath);
    runTask_ = entry->relativePath;
    return startRequest(request);
}

bool MainWindow::searchKernelBenchSet() {
    if (runs_->isActive() || keysPending_) return false;
    if (!session_->isOpen() || session_->kernelBenchSets().empty()) {
        inform(tr("No problem set"), tr("Open a project with KernelBench problems first (File › Add KernelBench Problems…)."));
        return false;
    }
    KernelBenchSetSearchDialog dialog(session_->kernelBenchSets(), runPanel_->configWidget()->config().budget, this);
    if (dialog.exec() != QDialog::Accepted) return false;
    return startKernelBenchSetSearch(dialog.search());
}

bool MainWindow::startKernelBenchSetSearch(const KernelBenchSetSearch& search) {
    if (runs_->isActive() || keysPending_) return false;
    if (!session_->isOpen()) {
        inform(tr("No project"), tr("Create or open a project first (File › New Project…); runs are kept in it."));
        return false;
    }
    std::vector<KernelBenchProblem> problems;
    try {
        problems = kernelBenchProblems(search.set);
    } catch (const std::exception& e) {
        inform(tr("Cannot search the problem set"), QString::fromUtf8(e.what()));
        return false;
    }
    if (search.evaluations < 0 || search.tokens < 0 || search.cost < 0 || search.timeS < 0) {
        inform(tr("Cannot search the problem set"), tr("A budget cannot be negative (0 means no limit)."));
        return false;
    }
    RunRequest request = baseRequest();
    setKernelBenchOptions(request, search.set.root, search.set.level);
    for (const KernelBenchProblem& p : problems) request.kbIds << p.problem.id;
    request.kbId = request.kbIds.front();
    request.kbLevelEvaluations = search.evaluations;
    request.kbLevelTokens = search.tokens;
    request.kbLevelCost = search.cost;
    request.kbLevelTimeS = search.timeS;
    request.kbSkipFinished = search.skipFinished;
    runTask_ = fromUtf8(problems.front().problem.key());
    return startRequest(request);
}

bool MainWindow::startRequest(const RunRequest& request) {
    if (runPanel_->llmExperts()) {
        QString error;
        const nlohmann::json config = loadLlmConfig(&error);
        if (config.is_null() || !validateLlmConfig(config, &error)) {
            inform(tr("LLM experts"), tr("The LLM providers' configuration cannot be used: %1").arg(error));
            return false;
        }
        RunRequest withLlm = request;
        withLlm.llmConfig = QByteArray::fromStdString(config.dump());
        // The keys come from the keyring, which answers asynchronously; the run starts then.
        keysPending_ = true;
        pendingRequest_ = withLlm;
        runPanel_->setState(RunPhase::Starting);
        searchView_->setSummary(tr("Reading the LLM providers' keys…"));
        keyring_->readKeys(llmProviderNames(config));
        // A keyring that never answers (a locked wallet left unattended) does not hold the run
        // forever: after a while it starts with the keys of the environment.
        const quint64 serial = ++keysSerial_;
        QTimer::singleShot(30000, this, [this, serial] {
            if (!keysPending_ || serial != keysSerial_) return;
            keysPending_ = false;
            RunRequest pending = pendingRequest_;
            pendingRequest_ = RunRequest();
            statusBar()->showMessage(tr("The keyring did not answer: LLM keys are taken from the providers' environment variables."), 8000);
            launch(pending);
        });
        return true;
    }
    launch(request);
    return runs_->isActive();
}

void MainWindow::launch(const RunRequest& request) {
    viewFollowsLive_ = true;
    searchView_->clear();
    searchView_->setSummary(tr("Starting a search on %1…").arg(runTask_));
    if (!runs_->start(request)) {
        runPanel_->setState(runs_->state());
        return;
    }
    tabs_->setCurrentWidget(searchView_);
}

void MainWindow::onRunStarted(qint64 runId) {
    // A problem set's search starts one run per problem: the summary names the run's own (a
    // KernelBench run's task is the problem's key, as the task list shows it).
    if (const kf::ProjectView* store = session_->view()) try {
            if (auto r = store->run(runId); r && r->config.is_object() && r->config.value("kind", "") == "kernelbench")
                runTask_ = fromUtf8(r->task);
        } catch (const std::exception&) {
            // The store cannot be read now: the summary keeps the task it had.
        }
    refreshRunPicker();
    searchView_->runPicker()->selectRun(runId);
    QString text = tr("Run %1 on %2: %3").arg(runId).arg(runTask_, runPhaseText(runs_->state()));
    const TaskEntry* entry = browser_->currentEntry();
    if (entry && entry->isKernelBench() && entry->relativePath == runTask_)
        text = tr("Run %1 on KernelBench %2: %3 (the Python worker evaluates ModelNew files; Pause does not apply)")
                   .arg(runId)
                   .arg(runTask_, runPhaseText(runs_->state()));
    searchView_->setSummary(text);
    statusBar()->showMessage(text);  // replaces the previous run's outcome
}

void MainWindow::onRunStateChanged(RunPhase state) {
    runPanel_->setState(state);
    if (runs_->runId() > 0)
        searchView_->setSummary(tr("Run %1 on %2: %3").arg(runs_->runId()).arg(runTask_, runPhaseText(state)));
}

KernelBenchReportDialog* MainWindow::showKernelBenchReport() {
    if (!session_->isOpen()) {
        inform(tr("No project"), tr("Open a project with KernelBench problems first (File › Add KernelBench Problems…)."));
        return nullptr;
    }
    if (!kbReport_) kbReport_ = new KernelBenchReportDialog(this);
    kbReport_->setProject(session_->dir(), session_->kernelBenchSets());
    kbReport_->refresh();
    kbReport_->show();
    kbReport_->raise();
    return kbReport_;
}

void MainWindow::onRunFinished(const RunOutcome& outcome) {
    searchView_->applyPending();
    runPanel_->setState(runPhase(outcome.state), stopReasonText(outcome.reason));
    refreshRunPicker();
    // A problem set whose problems were all skipped ends without a run of its own.
    QString text = outcome.runId > 0 ? tr("Run %1: %2 — %3; %n evaluation(s)", nullptr, outcome.evaluations)
                                           .arg(outcome.runId)
                                           .arg(runStateText(outcome.state), stopReasonText(outcome.reason))
                                     : tr("%1 — %2; %n evaluation(s)", nullptr, outcome.evaluations)
                                           .arg(runStateText(outcome.state), stopReasonText(outcome.reason));
    if (outcome.bestCandidate > 0)
        text += tr("; best: candidate %1 at %2× the reference").arg(outcome.bestCandidate).arg(outcome.bestFitness, 0, 'f', 2);
    searchView_->setSummary(text);
    statusBar()->showMessage(text);
    if (outcome.runId > 0 && session_->isOpen()) compareView_->showRun(session_->dir(), outcome.runId);
    browser_->refreshCurrent();  // a KernelBench problem's details show the latest run
    if (kbReport_ && kbReport_->isVisible()) kbReport_->refresh();
}

void MainWindow::onCandidateSelected(qint64 id) {
    if (!session_->isOpen()) return;
    candidateView_->showCandidate(session_->dir(), id);
    try {
        searchView_->lineage()->showLineage(*session_->view(), id);
    } catch (const std::exception& e) {
        statusBar()->showMessage(tr("Cannot read the lineage: %1").arg(fromUtf8(e.what())));
    }
}

void MainWindow::injectCandidate(const QString& source, int island, qint64 parentId) {
    if (!runs_->isActive()) {
        inform(tr("No search is running"),
               tr("Start a search first: an edited candidate goes into an island of the running search."));
        return;
    }
    kf::Proposal proposal;
    proposal.source = source.toStdString();
    proposal.expert = "user";
    proposal.rationale = "edited by the user";
    proposal.parents = {parentId};
    try {
        if (const kf::ProjectView* store = session_->view())
            if (auto parent = store->candidate(parentId)) proposal.family = parent->family;
    } catch (const std::exception&) {
        // Without the parent's family the candidate still runs; it just starts a family of its own.
    }
    runs_->inject(proposal, island);
    statusBar()->showMessage(tr("Edited candidate sent to island %1 of the running search").arg(island), 5000);
}

void MainWindow::inform(const QString& title, const QString& text) {
    // Not modal: the window (and a test driving it) keeps running.
    auto* box = new QMessageBox(QMessageBox::Information, title, text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("informationBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    statusBar()->showMessage(text, 8000);
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
        statusBar()->showMessage(tr("No tasks folder found. Use File › Show Tasks Folder… or start with --tasks DIR."));
    } else if (!browser_->model()->rootError().isEmpty()) {
        statusBar()->showMessage(browser_->model()->rootError());
    } else if (!browser_->model()->kernelBenchError().isEmpty()) {
        statusBar()->showMessage(browser_->model()->kernelBenchError());
    } else if (const int kb = browser_->model()->kernelBenchCount(); kb > 0) {
        statusBar()->showMessage(tr("%n task(s) in %1", nullptr, count - kb).arg(root) +
                                 tr(", %n KernelBench problem(s) in the project", nullptr, kb) +
                                 (failed > 0 ? tr(", %n failed to load", nullptr, failed) : QString()));
    } else if (failed == 0) {
        statusBar()->showMessage(tr("%n task(s) in %1", nullptr, count).arg(root));
    } else {
        statusBar()->showMessage(tr("%n task(s) in %1, %2 failed to load", nullptr, count).arg(root).arg(failed));
    }
}

void MainWindow::restoreLayout() {
    restoreGeometry(prefs::windowGeometry.get());
    restoreState(prefs::windowState.get());
    browser_->restoreSplitterState(prefs::browserSplitter.get());
    searchView_->restoreSplitters(
        {prefs::searchSplitter.get(), prefs::chartsSplitter.get(), prefs::tableSplitter.get()});
    tabs_->setCurrentIndex(qBound(0, prefs::currentTab.get(), tabs_->count() - 1));
}

void MainWindow::saveLayout() {
    prefs::windowGeometry.set(saveGeometry());
    prefs::windowState.set(saveState());
    prefs::browserSplitter.set(browser_->saveSplitterState());
    const QList<QByteArray> splitters = searchView_->saveSplitters();
    prefs::searchSplitter.set(splitters.value(0));
    prefs::chartsSplitter.set(splitters.value(1));
    prefs::tableSplitter.set(splitters.value(2));
    prefs::currentTab.set(tabs_->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveLayout();
    if (runs_->isActive()) {
        // The engine finishes the batch in flight; the thread is joined, never left behind.
        statusBar()->showMessage(tr("Stopping the search…"));
        runs_->stop();
    }
    event->accept();
}

}  // namespace kfgui
