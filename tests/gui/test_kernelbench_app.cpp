// KernelBench problems in the app, offscreen: a problem set added to a project is listed in
// the Tasks tab and kept with the project; a Level 4 problem says why it does not run; a wrong
// folder, level or selection is refused with the reason; Start Search on a problem runs the
// search with the stand-in Python worker (tests/data/kernelbench-fake) and stores the run.
#include <QtTest>
#include <QtWidgets>

#include "candidate/candidateview.h"
#include "editor/codeeditor.h"
#include "guiproject.h"
#include "kf/store.h"
#include "mainwindow.h"
#include "runs/kernelbenchsetsearch.h"
#include "preferences.h"
#include "project/kernelbenchset.h"
#include "project/projectsession.h"
#include "runs/kernelbenchreport.h"
#include "runs/populationmodel.h"
#include "runs/populationview.h"
#include "runs/runcontroller.h"
#include "runs/searchview.h"
#include "taskbrowser.h"
#include "tasklistmodel.h"
#include "testsupport.h"

namespace {

QString qs(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

QString fakeRoot() { return qs(kftest::data("kernelbench-fake")); }

std::unique_ptr<kfgui::MainWindow> makeWindow(const QString& project) {
    return std::make_unique<kfgui::MainWindow>(kfgui::LaunchOptions{qs(kftest::task("")), project, {}, false});
}

QString rowText(const kfgui::MainWindow& w, const QString& key) {
    const int row = w.taskBrowser()->model()->rowOf(key);
    return row < 0 ? QString() : w.taskBrowser()->model()->index(row).data().toString();
}

QString labelText(const kfgui::MainWindow& w, const char* name) {
    auto* label = w.findChild<QLabel*>(QLatin1String(name));
    return label ? label->text() : QString();
}

bool finished(const kfgui::RunController* runs) {
    const kfgui::RunPhase s = runs->state();
    return !runs->isActive() && (s == kfgui::RunPhase::Done || s == kfgui::RunPhase::Stopped || s == kfgui::RunPhase::Failed);
}

/** Searches level1/1_Scale of the stand-in tree in `w`'s project: one island, `budget` evaluations. */
bool searchScale(kfgui::MainWindow& w, int budget) {
    w.findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(1);
    w.findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(budget);
    if (!w.addKernelBenchSet({fakeRoot(), 1, QStringLiteral("1")})) return false;
    if (!w.taskBrowser()->selectTask(QStringLiteral("level1/1_Scale")) || !w.startSearch()) return false;
    return QTest::qWaitFor([&] { return finished(w.runController()); }, 120000);
}

}  // namespace

class TestKernelBenchApp : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelFoundryTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_kernelbench_app"));
        QSettings().clear();
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("gui-kb-data").string()));
    }

    /** The problems are listed beside the tasks, shown with their source and op class, and come back with the project. */
    void problemsAreListedAndKeptWithTheProject() {
        const QString project = qs(kftest::temp_dir("gui-kb-list") / "project");
        {
            auto w = makeWindow(project);
            QVERIFY(w->session()->isOpen());
            QCOMPARE(w->taskBrowser()->model()->rowOf(QStringLiteral("level1/1_Scale")), -1);
            const int native = w->taskBrowser()->model()->rowCount();
            QVERIFY(native > 0);
            QVERIFY(w->addKernelBenchSet({fakeRoot(), 1, QStringLiteral("1,3")}));
            QCOMPARE(w->taskBrowser()->model()->rowCount(), native + 2);
            QCOMPARE(rowText(*w, QStringLiteral("level1/1_Scale")), QStringLiteral("level1/1_Scale (KernelBench)"));
            QCOMPARE(rowText(*w, QStringLiteral("level1/3_Relu")), QStringLiteral("level1/3_Relu (KernelBench)"));
            QCOMPARE(w->taskBrowser()->model()->rowOf(QStringLiteral("level1/2_Row_Sum")), -1);  // not selected
            QVERIFY(QFileInfo::exists(project + QStringLiteral("/kernelbench.json")));

            // The first problem of the set is shown: its PyTorch source, op class and inputs.
            const kfgui::TaskEntry* entry = w->taskBrowser()->currentEntry();
            QVERIFY(entry && entry->isKernelBench());
            QCOMPARE(entry->relativePath, QStringLiteral("level1/1_Scale"));
            QVERIFY(labelText(*w, "taskTitle").contains(QStringLiteral("level1/1_Scale")));
            QVERIFY2(labelText(*w, "taskSummary").contains(QStringLiteral("op class elementwise")), qPrintable(labelText(*w, "taskSummary")));
            QVERIFY(labelText(*w, "taskDescription").contains(QStringLiteral("Not run")));
            auto* source = w->findChild<QPlainTextEdit*>(QStringLiteral("pytorchSource"));
            QVERIFY(source && source->isReadOnly());
            QVERIFY(source->toPlainText().contains(QStringLiteral("return x * 2")));
            auto* tabs = w->findChild<QTabWidget*>(QStringLiteral("sourceTabs"));
            QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(source));
            QVERIFY(!tabs->isTabVisible(0));  // no CUDA entry point for a PyTorch problem

            // A native task still shows its own tabs.
            QVERIFY(w->taskBrowser()->selectTask(QStringLiteral("level1/softmax")));
            QVERIFY(tabs->isTabVisible(0));
            QVERIFY(!tabs->isTabVisible(tabs->indexOf(source)));
        }
        // Reopened, the project lists the same problems.
        auto again = makeWindow(QString());
        QVERIFY(again->openProject(project, false));
        QCOMPARE(rowText(*again, QStringLiteral("level1/1_Scale")), QStringLiteral("level1/1_Scale (KernelBench)"));
        QVERIFY(again->taskBrowser()->model()->rowOf(QStringLiteral("level1/3_Relu")) >= 0);
        QCOMPARE(again->taskBrowser()->model()->kernelBenchCount(), 2);
        QVERIFY2(again->statusBar()->currentMessage().contains(QStringLiteral("2 KernelBench problem(s) in the project")),
                 qPrintable(again->statusBar()->currentMessage()));
    }

    /** File › Add KernelBench Problems… asks for the folder, level and selection, and lists the problems. */
    void theMenuActionAddsASet() {
        auto closed = makeWindow(QString());
        auto* action = closed->findChild<QAction*>(QStringLiteral("addKernelBenchAction"));
        QVERIFY(action && !action->isEnabled());  // no project: nowhere to keep the set

        const QString project = qs(kftest::temp_dir("gui-kb-menu") / "project");
        auto w = makeWindow(project);
        action = w->findChild<QAction*>(QStringLiteral("addKernelBenchAction"));
        QVERIFY(action && action->isEnabled());
        bool filled = false;
        QTimer::singleShot(0, w.get(), [&] {
            auto* dialog = w->findChild<QDialog*>(QStringLiteral("kernelBenchDialog"));
            if (!dialog) return;
            dialog->findChild<QLineEdit*>(QStringLiteral("kbFolder"))->setText(fakeRoot());
            dialog->findChild<QSpinBox*>(QStringLiteral("kbLevel"))->setValue(1);
            dialog->findChild<QLineEdit*>(QStringLiteral("kbProblems"))->setText(QStringLiteral("2"));
            dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
            filled = true;
        });
        action->trigger();
        QVERIFY(filled);
        QCOMPARE(rowText(*w, QStringLiteral("level1/2_Row_Sum")), QStringLiteral("level1/2_Row_Sum (KernelBench)"));
        QCOMPARE(w->taskBrowser()->model()->kernelBenchCount(), 1);
        QCOMPARE(w->taskBrowser()->currentEntry()->relativePath, QStringLiteral("level1/2_Row_Sum"));
    }

    /** A Level 4 problem is listed in red with the reason, and Start Search refuses it. */
    void levelFourSaysWhyItDoesNotRun() {
        const QString project = qs(kftest::temp_dir("gui-kb-l4") / "project");
        auto w = makeWindow(project);
        QVERIFY(w->addKernelBenchSet({fakeRoot(), 4, QString()}));
        const QString key = QStringLiteral("level4/1_gpt2_bs1_seq1024");
        const int row = w->taskBrowser()->model()->rowOf(key);
        QVERIFY(row >= 0);
        const QModelIndex index = w->taskBrowser()->model()->index(row);
        QVERIFY2(index.data().toString().contains(QStringLiteral("Not supported")), qPrintable(index.data().toString()));
        QCOMPARE(index.data(Qt::ForegroundRole).value<QBrush>().color(), QColor(0xc6, 0x28, 0x28));
        QVERIFY(w->taskBrowser()->selectTask(key));
        QVERIFY2(labelText(*w, "taskDescription").startsWith(QStringLiteral("Not supported: Level 4 problems are whole Hugging Face models")),
                 qPrintable(labelText(*w, "taskDescription")));
        QVERIFY(index.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Hugging Face")));
        QVERIFY(!w->startSearch());
        QVERIFY(!w->runController()->isActive());
        auto* start = w->findChild<QPushButton*>(QStringLiteral("startButton"));
        QVERIFY(start && !start->isEnabled());
    }

    /** A folder without KernelBench, a missing level or an unknown problem id is refused with the reason. */
    void wrongFolderLevelOrSelectionIsRefused() {
        const QString project = qs(kftest::temp_dir("gui-kb-bad") / "project");
        auto w = makeWindow(project);
        const int rows = w->taskBrowser()->model()->rowCount();
        auto lastMessage = [&] {
            const auto boxes = w->findChildren<QMessageBox*>(QStringLiteral("informationBox"));
            return boxes.isEmpty() ? QString() : boxes.last()->text();
        };
        QVERIFY(!w->addKernelBenchSet({project + QStringLiteral("/nowhere"), 1, QString()}));
        QVERIFY2(lastMessage().contains(QStringLiteral("does not exist")), qPrintable(lastMessage()));
        QVERIFY(!w->addKernelBenchSet({qs(kftest::task("")), 1, QString()}));  // native tasks, no KernelBench
        QVERIFY2(lastMessage().contains(QStringLiteral("holds no KernelBench problems")), qPrintable(lastMessage()));
        QVERIFY(!w->addKernelBenchSet({fakeRoot(), 3, QString()}));
        QVERIFY2(lastMessage().contains(QStringLiteral("no level3 folder")), qPrintable(lastMessage()));
        QVERIFY(!w->addKernelBenchSet({fakeRoot(), 1, QStringLiteral("2,99")}));
        QVERIFY2(lastMessage().contains(QStringLiteral("has no problem 99")), qPrintable(lastMessage()));
        QVERIFY(!w->addKernelBenchSet({fakeRoot(), 1, QStringLiteral("one")}));
        QCOMPARE(w->taskBrowser()->model()->rowCount(), rows);
        QVERIFY(!QFileInfo::exists(project + QStringLiteral("/kernelbench.json")));
    }

    /** Start Search on a problem runs its search with the stand-in worker; the run is in the project. */
    void startSearchRunsTheProblem() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        const QString project = qs(kftest::temp_dir("gui-kb-run") / "project");
        auto w = makeWindow(project);
        w->findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(1);
        w->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(3);
        w->findChild<QSpinBox*>(QStringLiteral("runCompileThreads"))->setValue(1);
        QVERIFY(w->addKernelBenchSet({fakeRoot(), 1, QStringLiteral("1")}));
        QVERIFY(w->taskBrowser()->selectTask(QStringLiteral("level1/1_Scale")));
        auto* start = w->findChild<QPushButton*>(QStringLiteral("startButton"));
        QVERIFY(start && start->isEnabled());
        QVERIFY(w->startSearch());
        kfgui::RunController* runs = w->runController();
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 120000);
        QCOMPARE(runs->state(), kfgui::RunPhase::Done);
        QVERIFY(runs->runId() > 0);
        QVERIFY(w->statusBar()->currentMessage().startsWith(QStringLiteral("Run %1:").arg(runs->runId())));

        kf::ProjectView store = kf::ProjectView::open(project.toStdString());
        auto run = store.latest_run("level1/1_Scale");
        QVERIFY(run);
        QCOMPARE(run->id, static_cast<std::int64_t>(runs->runId()));
        QCOMPARE(run->state, kf::RunState::Done);
        QCOMPARE(run->config.value("kind", std::string()), std::string("kernelbench"));
        QVERIFY(!store.candidates(run->id).empty());
        // Its evaluations reached the Search tab as events, as a native run's do.
        QTRY_COMPARE_WITH_TIMEOUT(w->searchView()->pendingCount(), 0, 2000);
        w->searchView()->applyPending();
        QCOMPARE(w->searchView()->population()->model()->rowCount(), static_cast<int>(store.evaluations(run->id).size()));
        QVERIFY(w->searchView()->population()->model()->rowCount() > 0);
        // The details pane shows the run.
        QVERIFY2(labelText(*w, "taskDescription").contains(QStringLiteral("Latest run: %1").arg(run->id)),
                 qPrintable(labelText(*w, "taskDescription")));
        w->resize(1400, 900);
        guitest::screenshot(w.get(), QStringLiteral("kernelbench-search.png"));
        w->tabs()->setCurrentWidget(w->taskBrowser());
        guitest::screenshot(w.get(), QStringLiteral("kernelbench-searched-task.png"));
    }

    /**
     * Run › Search KernelBench Problem Set…: every problem of the set is searched, one after the
     * other, within the set's evaluation budget; finished problems are skipped when asked, and a
     * problem whose share of the set's budget is spent does not run.
     */
    void aProblemSetIsSearchedWithinItsBudget() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        const QString project = qs(kftest::temp_dir("gui-kb-set") / "project");
        QVERIFY(!makeWindow(QString())->startKernelBenchSetSearch({{fakeRoot(), 1, QStringLiteral("1-2")}}));  // no project
        auto w = makeWindow(project);
        w->findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(1);
        w->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(4);
        w->findChild<QSpinBox*>(QStringLiteral("runCompileThreads"))->setValue(1);
        const kfgui::KernelBenchSet set{fakeRoot(), 1, QStringLiteral("1-2")};
        QVERIFY(w->addKernelBenchSet(set));
        QVERIFY(!w->startKernelBenchSetSearch({{fakeRoot(), 3, QString()}}));  // a level the folder lacks
        kfgui::KernelBenchSetSearch search{set};
        search.evaluations = 5;
        QVERIFY(w->startKernelBenchSetSearch(search));
        kfgui::RunController* runs = w->runController();
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 180000);
        QCOMPARE(runs->state(), kfgui::RunPhase::Done);
        const QString status = w->statusBar()->currentMessage();
        QVERIFY2(status.contains(QStringLiteral("2 of 2 problem(s) of the set searched")), qPrintable(status));
        kf::ProjectView store = kf::ProjectView::open(project.toStdString());
        auto scale = store.latest_run("level1/1_Scale");
        auto rowSum = store.latest_run("level1/2_Row_Sum");
        QVERIFY(scale && rowSum);
        QCOMPARE(scale->state, kf::RunState::Done);
        QCOMPARE(rowSum->state, kf::RunState::Done);
        // The first problem's share: 5 / 2 = 2 (under the run panel's 4); the second gets the rest.
        QCOMPARE(scale->config.value("budget", 0), 2);
        const int first = static_cast<int>(store.evaluations(scale->id).size());
        QVERIFY(first >= 1 && first <= 2);
        QCOMPARE(rowSum->config.value("budget", 0), std::min(4, 5 - first));
        QVERIFY(first + static_cast<int>(store.evaluations(rowSum->id).size()) <= 5);
        // The last run is the one shown.
        QCOMPARE(static_cast<std::int64_t>(runs->runId()), rowSum->id);

        // Again: both are finished, so both are skipped, and no run is added.
        QVERIFY(w->startKernelBenchSetSearch(search));
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 60000);
        QCOMPARE(runs->state(), kfgui::RunPhase::Done);
        const QString skipped = w->statusBar()->currentMessage();
        QVERIFY2(skipped.contains(QStringLiteral("0 of 2 problem(s)")) && skipped.contains(QStringLiteral("level1/1_Scale (already finished)")),
                 qPrintable(skipped));
        QCOMPARE(store.runs().size(), std::size_t(2));

        // Not skipping finished ones, with a set budget of what 2_Row_Sum's run spent: none is
        // left for 1_Scale, which does not run.
        search.skipFinished = false;
        search.evaluations = static_cast<qint64>(store.evaluations(rowSum->id).size());
        QVERIFY(w->startKernelBenchSetSearch(search));
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 180000);
        const QString spent = w->statusBar()->currentMessage();
        QVERIFY2(spent.contains(QStringLiteral("level1/1_Scale (the set's evaluations budget is spent)")), qPrintable(spent));
    }

    /** The problem set dialog lists the sets with their problem counts and returns the budgets entered. */
    void theProblemSetDialogGivesTheBudgets() {
        const std::vector<kfgui::KernelBenchSet> sets{{fakeRoot(), 1, QStringLiteral("1-2")}, {fakeRoot(), 4, QString()}};
        kfgui::KernelBenchSetSearchDialog dialog(sets, 7);
        auto* combo = dialog.findChild<QComboBox*>(QStringLiteral("kbSetCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 2);
        QCOMPARE(dialog.findChild<QLabel*>(QStringLiteral("kbSetCount"))->text(), QStringLiteral("2 problem(s)"));
        combo->setCurrentIndex(1);
        QVERIFY2(dialog.findChild<QLabel*>(QStringLiteral("kbSetCount"))->text().contains(QStringLiteral("not supported")),
                 qPrintable(dialog.findChild<QLabel*>(QStringLiteral("kbSetCount"))->text()));
        combo->setCurrentIndex(0);
        dialog.findChild<QSpinBox*>(QStringLiteral("kbLevelEvaluations"))->setValue(40);
        dialog.findChild<QSpinBox*>(QStringLiteral("kbLevelTokens"))->setValue(50000);
        dialog.findChild<QDoubleSpinBox*>(QStringLiteral("kbLevelCost"))->setValue(1.5);
        dialog.findChild<QSpinBox*>(QStringLiteral("kbLevelMinutes"))->setValue(10);
        dialog.findChild<QCheckBox*>(QStringLiteral("kbSkipFinished"))->setChecked(false);
        const kfgui::KernelBenchSetSearch s = dialog.search();
        QVERIFY(s.set == sets[0]);
        QCOMPARE(s.evaluations, qint64(40));
        QCOMPARE(s.tokens, qint64(50000));
        QCOMPARE(s.cost, 1.5);
        QCOMPARE(s.timeS, 600.0);
        QVERIFY(!s.skipFinished);
        // Accepted, the budgets are offered again the next time; cancelled, they are not kept.
        dialog.accept();
        kfgui::KernelBenchSetSearchDialog again(sets, 7);
        const kfgui::KernelBenchSetSearch t = again.search();
        QCOMPARE(t.evaluations, qint64(40));
        QCOMPARE(t.tokens, qint64(50000));
        QCOMPARE(t.cost, 1.5);
        QCOMPARE(t.timeS, 600.0);
        QVERIFY(!t.skipFinished);
        again.findChild<QSpinBox*>(QStringLiteral("kbLevelEvaluations"))->setValue(3);
        again.reject();
        QCOMPARE(kfgui::KernelBenchSetSearchDialog(sets, 7).search().evaluations, qint64(40));
    }

    /** Settings › Executor's evaluation options reach the worker and are kept with the run. */
    void evaluationOptionsReachTheWorker() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        kfgui::prefs::kbTrials.set(2);
        kfgui::prefs::kbReps.set(7);
        kfgui::prefs::kbTolerance.set(QStringLiteral("v0"));
        kfgui::prefs::kbBaselines.set(QStringLiteral("eager"));
        const QString project = qs(kftest::temp_dir("gui-kb-options") / "project");
        auto w = makeWindow(project);
        QVERIFY(searchScale(*w, 2));
        kfgui::RunController* runs = w->runController();
        kfgui::prefs::kbTrials.set(5);
        kfgui::prefs::kbReps.set(100);
        kfgui::prefs::kbTolerance.set(QStringLiteral("current"));
        kfgui::prefs::kbBaselines.set(QStringLiteral("eager,compile"));
        QCOMPARE(runs->state(), kfgui::RunPhase::Done);
        kf::ProjectView store = kf::ProjectView::open(project.toStdString());
        auto run = store.latest_run("level1/1_Scale");
        QVERIFY(run);
        QCOMPARE(run->config.value("trials", 0), 2);
        QCOMPARE(run->config.value("reps", 0), 7);
        QCOMPARE(run->config.value("tolerance", std::string()), std::string("v0"));
        QCOMPARE(run->config.value("baselines", nlohmann::json()).dump(), std::string(R"(["eager"])"));
        // The worker timed eager PyTorch only, and judged with the v0 policy (the stand-in echoes it).
        const nlohmann::json base = store.get_state(run->id, "kernelbench_baselines").value_or(nlohmann::json::object());
        QVERIFY2(base.contains("eager") && !base.contains("compile"), base.dump().c_str());
        QVERIFY(!store.evaluations(run->id).empty());
        const nlohmann::json verdicts = store.get_state(run->id, "kernelbench_verdicts").value_or(nlohmann::json::object());
        QVERIFY2(!verdicts.empty(), verdicts.dump().c_str());
        for (const auto& [id, v] : verdicts.items()) QCOMPARE(v.value("tolerance", std::string()), std::string("v0"));
    }

    /** The report counts every problem of the project's sets, a problem never run as a failure. */
    void reportCountsEveryProblem() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        const QString project = qs(kftest::temp_dir("gui-kb-report") / "project");
        QVERIFY(!makeWindow(QString())->showKernelBenchReport());  // no project open: refused with a message
        auto w = makeWindow(project);
        w->findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(1);
        w->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(2);
        QVERIFY(w->addKernelBenchSet({fakeRoot(), 1, QStringLiteral("1-2")}));
        kfgui::KernelBenchReportDialog* report = w->showKernelBenchReport();
        QVERIFY(report && report->isVisible());
        QCOMPARE(report->report().problems, 2);
        QCOMPARE(report->report().attempted, 0);
        QVERIFY(w->taskBrowser()->selectTask(QStringLiteral("level1/1_Scale")));
        QVERIFY(w->startSearch());
        QTRY_VERIFY_WITH_TIMEOUT(finished(w->runController()), 120000);
        // An open report is refreshed when a run ends.
        QCOMPARE(report->report().problems, 2);
        QCOMPARE(report->report().attempted, 1);
        auto* rows = report->findChild<QTableWidget*>(QStringLiteral("kbReportRows"));
        QVERIFY(rows);
        QCOMPARE(rows->rowCount(), 2);
        QStringList names;
        for (int r = 0; r < rows->rowCount(); ++r) names << rows->item(r, 0)->text() + QLatin1Char('|') + rows->item(r, 8)->text();
        QVERIFY2(names.filter(QStringLiteral("level1/2_Row_Sum|not run")).size() == 1, qPrintable(names.join(QLatin1Char(';'))));
        QVERIFY(names.filter(QStringLiteral("level1/1_Scale|")).size() == 1);
        const QString summary = report->findChild<QLabel*>(QStringLiteral("kbReportSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("2 problem(s)")) && summary.contains(QStringLiteral("1 attempted")),
                 qPrintable(summary));
        QVERIFY(report->markdown().startsWith(QStringLiteral("# KernelBench report")));
        QVERIFY(report->markdown().contains(QStringLiteral("Row_Sum")));
        const QString json = qs(kftest::temp_dir("gui-kb-report") / "report.json");
        QString error;
        QVERIFY2(report->saveJson(json, &error), qPrintable(error));
        const nlohmann::json saved = nlohmann::json::parse(kftest::read_file(json.toStdString()));
        QCOMPARE(saved.value("problems", 0), 2);
        QCOMPARE(saved.value("attempted", 0), 1);
        QVERIFY(!report->saveJson(QStringLiteral("/nonexistent/dir/report.json"), &error));
        QVERIFY(!error.isEmpty());
    }

    /** Evaluate in the Candidate tab on a KernelBench candidate: the Python worker judges the edited
     *  ModelNew with the run's problem and options; it is stored as the user's child with its verdict. */
    void evaluateAKernelBenchCandidate() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        kfgui::prefs::kbTolerance.set(QStringLiteral("v0"));
        const std::filesystem::path projectDir = kftest::temp_dir("gui-kb-edit") / "project";
        const QString project = qs(projectDir);
        auto w = makeWindow(project);
        QVERIFY(searchScale(*w, 2));
        kfgui::prefs::kbTolerance.set(QStringLiteral("current"));
        const qint64 runId = w->runController()->runId();
        std::vector<kf::CandidateRecord> before = kf::ProjectView::open(project.toStdString()).candidates(runId);
        QVERIFY(!before.empty());
        const kf::CandidateRecord parent = before.front();

        kfgui::CandidateView view;
        view.showCandidate(project, parent.id);
        QCOMPARE(view.editor()->text(), QString::fromStdString(parent.source));
        QSignalSpy done(&view, &kfgui::CandidateView::evaluationFinished);
        view.editor()->setText(QString::fromStdString(parent.source) + QStringLiteral("\n# fake: ms=0.25\n"));
        view.evaluate();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
        const qint64 stored = done.at(0).at(0).toLongLong();
        QVERIFY(stored > 0);

        kf::ProjectView store = kf::ProjectView::open(project.toStdString());
        const auto child = store.candidate(stored);
        QVERIFY(child);
        QCOMPARE(child->run_id, static_cast<std::int64_t>(runId));
        QCOMPARE(child->expert, std::string("user"));
        QCOMPARE(child->parents, std::vector<std::int64_t>{parent.id});
        QVERIFY(child->source.find("# fake: ms=0.25") != std::string::npos);
        const auto e = store.evaluation_of(stored);
        QVERIFY(e);
        QCOMPARE(e->status, std::string("ok"));
        QVERIFY2(std::abs(e->diagnosis["timing"].value("median_ms", 0.0) - 0.25) < 1e-9, e->diagnosis.dump().c_str());
        // Judged with the run's tolerance policy (v0), not the one now in the settings.
        const nlohmann::json verdicts = store.get_state(runId, "kernelbench_verdicts").value_or(nlohmann::json::object());
        QVERIFY2(verdicts.contains(std::to_string(stored)), verdicts.dump().c_str());
        QCOMPARE(verdicts[std::to_string(stored)].value("tolerance", std::string()), std::string("v0"));
        QVERIFY(std::filesystem::exists(projectDir / "kernelbench" / "candidates" / ("candidate_" + std::to_string(stored) + ".py")));

        // An incorrect edit is stored as such, with the worker's reason.
        view.showCandidate(project, parent.id);
        view.editor()->setText(QString::fromStdString(parent.source) + QStringLiteral("\n# fake: status=incorrect\n"));
        view.evaluate();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 60000);
        const qint64 wrong = done.at(1).at(0).toLongLong();
        QVERIFY(wrong > 0 && wrong != stored);
        QCOMPARE(kf::ProjectView::open(project.toStdString()).evaluation_of(wrong)->status, std::string("incorrect"));
    }

    /** A Python that cannot start fails the run with the reason, leaving no run behind as running. */
    void aMissingPythonFailsTheRunWithTheReason() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        kfgui::prefs::kbPython.set(QStringLiteral("/nonexistent/python3"));
        const QString project = qs(kftest::temp_dir("gui-kb-nopython") / "project");
        auto w = makeWindow(project);
        QVERIFY(w->addKernelBenchSet({fakeRoot(), 1, QStringLiteral("1")}));
        QVERIFY(w->taskBrowser()->selectTask(QStringLiteral("level1/1_Scale")));
        QVERIFY(w->startSearch());
        kfgui::RunController* runs = w->runController();
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 60000);
        kfgui::prefs::kbPython.set(QString());
        QCOMPARE(runs->state(), kfgui::RunPhase::Failed);
        QVERIFY2(w->statusBar()->currentMessage().contains(QStringLiteral("cannot start /nonexistent/python3")),
                 qPrintable(w->statusBar()->currentMessage()));
        for (const auto& r : kf::ProjectView::open(project.toStdString()).runs()) QVERIFY(r.state != kf::RunState::Running);
    }

    /** Stop ends a KernelBench search cleanly: the run is stopped, not failed, and kept for a resume. */
    void stopEndsTheSearch() {
        kfgui::prefs::kbWorker.set(qs(kftest::data("kernelbench-fake") / "fake_kb_worker.py"));
        // A problem whose ModelNew (the reference, renamed) takes seconds to build.
        const std::filesystem::path kb = kftest::temp_dir("gui-kb-slow") / "kb";
        kftest::write_file(kb / "KernelBench" / "level1" / "1_Slow.py",
                           "import torch\n# fake-eager-ms: 2.0\n# fake-compile-seconds: 4\n"
                           "class Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n");
        const QString project = qs(kftest::temp_dir("gui-kb-stop") / "project");
        auto w = makeWindow(project);
        w->findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(1);
        w->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(20);
        QVERIFY(w->addKernelBenchSet({qs(kb), 1, QString()}));
        QVERIFY(w->taskBrowser()->selectTask(QStringLiteral("level1/1_Slow")));
        QVERIFY(w->startSearch());
        kfgui::RunController* runs = w->runController();
        QTRY_VERIFY_WITH_TIMEOUT(runs->runId() > 0, 30000);
        QVERIFY(runs->isActive());
        QTRY_COMPARE_WITH_TIMEOUT(runs->state(), kfgui::RunPhase::Running, 5000);
        runs->pause();  // no pause for a KernelBench search: the state stays
        QCOMPARE(runs->state(), kfgui::RunPhase::Running);
        runs->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 60000);
        QCOMPARE(runs->state(), kfgui::RunPhase::Stopped);
        kf::ProjectView store = kf::ProjectView::open(project.toStdString());
        auto run = store.run(runs->runId());
        QVERIFY(run);
        QVERIFY(run->state != kf::RunState::Done && run->state != kf::RunState::Failed);
    }
};

QTEST_MAIN(TestKernelBenchApp)
#include "test_kernelbench_app.moc"
