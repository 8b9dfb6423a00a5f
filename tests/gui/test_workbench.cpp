// The workbench, offscreen: a real host-backend search started through the widgets, its live
// views checked against the project store; pause, resume and stop; an event flood.
#include <QtTest>
#include <QtWidgets>

#include <QtCharts/QLineSeries>

#include <random>
#include <thread>

#include "candidate/candidateview.h"
#include "kf/experts.h"
#include "kf/store.h"
#include "mainwindow.h"
#include "project/projectsession.h"
#include "runs/lineageview.h"
#include "runs/outcomechart.h"
#include "runs/populationmodel.h"
#include "runs/populationview.h"
#include "runs/runcontroller.h"
#include "runs/searchview.h"
#include "runs/searchworker.h"
#include "runs/speedupchart.h"
#include "taskbrowser.h"
#include "testsupport.h"

namespace {

QString qs(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

bool finished(const kfgui::RunController* runs) {
    const kfgui::RunPhase s = runs->state();
    return !runs->isActive() && (s == kfgui::RunPhase::Done || s == kfgui::RunPhase::Stopped || s == kfgui::RunPhase::Failed);
}

/** A window on a fresh project with the bundled tasks, the test build's worker and a small run. */
std::unique_ptr<kfgui::MainWindow> makeWindow(const QString& project, int budget) {
    auto window = std::make_unique<kfgui::MainWindow>(
        kfgui::LaunchOptions{qs(kftest::source_dir() / "tasks"), project, {}, false});
    window->setWorkerPath(qs(kftest::worker_path()));
    window->findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(2);
    window->findChild<QSpinBox*>(QStringLiteral("runPopulation"))->setValue(4);
    window->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(budget);
    window->findChild<QDoubleSpinBox*>(QStringLiteral("runMinTime"))->setValue(20);
    window->findChild<QSpinBox*>(QStringLiteral("runCompileThreads"))->setValue(2);
    return window;
}

void saveScreenshot(QWidget* widget, const QString& name) {
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    QDir().mkpath(dir);
    QVERIFY(widget->grab().save(dir + QLatin1Char('/') + name));
}

/** Says whether each widget it watches was painted since it began to watch. */
class PaintWatch : public QObject {
public:
    void watch(QWidget* widget) {
        painted_.insert(widget, false);
        widget->installEventFilter(this);
    }
    bool allPainted() const {
        for (bool painted : painted_)
            if (!painted) return false;
        return true;
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Paint && painted_.contains(watched)) painted_[watched] = true;
        return false;
    }

private:
    QHash<QObject*, bool> painted_;
};

}  // namespace

class TestWorkbench : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelFoundryTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_workbench"));
        QSettings().clear();
        // The experience library (kf::ExperienceLibrary::user_library_path) goes to a temp folder.
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("gui-data").string()));
    }

    void searchFillsTheViewsConsistentlyWithTheStore() {
        const QString project = qs(kftest::temp_dir("gui-run") / "project");
        auto window = makeWindow(project, 8);
        window->resize(1400, 900);
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        QVERIFY(window->session()->isOpen());
        QVERIFY(QFileInfo::exists(project + QStringLiteral("/project.kfproj")));
        QVERIFY(window->taskBrowser()->selectTask(QStringLiteral("level1/softmax")));

        auto* start = window->findChild<QPushButton*>(QStringLiteral("startButton"));
        QVERIFY(start && start->isEnabled());
        QTest::mouseClick(start, Qt::LeftButton);
        kfgui::RunController* runs = window->runController();
        QVERIFY(runs->isActive());
        QVERIFY(!start->isEnabled());
        QCOMPARE(window->tabs()->currentWidget(), window->searchView());

        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 240000);
        QCOMPARE(runs->state(), kfgui::RunPhase::Done);
        QTRY_COMPARE_WITH_TIMEOUT(window->searchView()->pendingCount(), 0, 2000);
        window->searchView()->applyPending();

        kfgui::SearchView* view = window->searchView();
        kfgui::PopulationModel* model = view->population()->model();
        QCOMPARE(model->rowCount(), 8);
        QCOMPARE(view->outcomeChart()->total(), 8);
        QCOMPARE(view->speedupChart()->evaluations(), 8);
        QVERIFY(view->speedupChart()->series(0) && view->speedupChart()->series(0)->count() >= 2);
        QVERIFY(view->speedupChart()->series(1) && view->speedupChart()->series(1)->count() >= 2);
        // The softmax reference and its candidates are correct: some speedup above zero.
        QVERIFY(view->speedupChart()->bestOf(0) > 0 || view->speedupChart()->bestOf(1) > 0);
        QVERIFY(view->outcomeChart()->count(QStringLiteral("ok")) > 0);

        // Every row is the store's candidate and latest evaluation, field by field.
        kf::ProjectStore store = kf::ProjectStore::open(project.toStdString());
        const auto run = store.latest_run("softmax");
        QVERIFY(run);
        QCOMPARE(run->state, kf::RunState::Done);
        QCOMPARE(runs->runId(), run->id);
        const auto evaluations = store.evaluations(run->id);
        QCOMPARE(static_cast<int>(evaluations.size()), 8);
        for (const auto& ev : evaluations) {
            const int row = model->rowOf(ev.candidate_id);
            QVERIFY2(row >= 0, qPrintable(QStringLiteral("candidate %1 missing").arg(ev.candidate_id)));
            const kfgui::PopulationRow* r = model->row(row);
            const auto c = store.candidate(ev.candidate_id);
            QVERIFY(c);
            QCOMPARE(r->status, QString::fromStdString(ev.status));
            QVERIFY(qAbs(r->speedup - ev.fitness) < 1e-9);
            QCOMPARE(r->island, c->island);
            QCOMPARE(r->generation, c->generation);
            QCOMPARE(r->expert, QString::fromStdString(c->expert));
            if (ev.status == "ok") {
                QVERIFY(r->medianMs > 0);
                QCOMPARE(r->medianMs, ev.diagnosis["timing"].value("median_ms", -1.0));
                QCOMPARE(r->gbps, ev.diagnosis["roofline"].value("achieved_gbps", -1.0));
                QCOMPARE(r->bound, QString::fromStdString(ev.diagnosis["roofline"].value("bound", std::string())));
            }
        }

        // The filter box narrows the table; selecting a row shows its lineage from the store.
        auto* filter = window->findChild<QLineEdit*>(QStringLiteral("populationFilter"));
        auto* table = window->findChild<QTableView*>(QStringLiteral("populationTable"));
        QVERIFY(filter && table);
        filter->setText(QStringLiteral("seed"));
        QVERIFY(table->model()->rowCount() > 0 && table->model()->rowCount() <= 8);
        filter->clear();
        QCOMPARE(table->model()->rowCount(), 8);
        const qint64 last = evaluations.back().candidate_id;
        view->population()->selectCandidate(last);
        QCOMPARE(view->lineage()->tree()->topLevelItemCount(), static_cast<int>(store.lineage(last).size()));

        // Two rows selected enable Compare.
        auto* compare = window->findChild<QPushButton*>(QStringLiteral("compareButton"));
        QVERIFY(compare && !compare->isEnabled());
        table->selectionModel()->select(table->model()->index(0, 0),
                                        QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        table->selectionModel()->select(table->model()->index(1, 0),
                                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QVERIFY(compare->isEnabled());

        window->tabs()->setCurrentWidget(view);
        saveScreenshot(window.get(), QStringLiteral("search.png"));
        window->tabs()->setCurrentIndex(0);
        saveScreenshot(window.get(), QStringLiteral("workbench-tasks.png"));

        // Reopening the project shows the finished run from the store.
        auto again = makeWindow(project, 8);
        QCOMPARE(again->searchView()->population()->model()->rowCount(), 8);
        QVERIFY(kfgui::ProjectSession::recentProjects().contains(window->session()->dir()));
    }

    void pauseResumeAndStop() {
        const QString project = qs(kftest::temp_dir("gui-pause") / "project");
        auto window = makeWindow(project, 400);
        window->show();
        QVERIFY(window->taskBrowser()->selectTask(QStringLiteral("level1/gelu")));
        QTest::mouseClick(window->findChild<QPushButton*>(QStringLiteral("startButton")), Qt::LeftButton);
        kfgui::RunController* runs = window->runController();
        kfgui::PopulationModel* model = window->searchView()->population()->model();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() >= 1, 120000);

        auto* pause = window->findChild<QPushButton*>(QStringLiteral("pauseButton"));
        auto* resume = window->findChild<QPushButton*>(QStringLiteral("resumeButton"));
        auto* stop = window->findChild<QPushButton*>(QStringLiteral("stopButton"));
        QVERIFY(pause->isEnabled() && !resume->isEnabled());
        QTest::mouseClick(pause, Qt::LeftButton);
        QVERIFY(resume->isEnabled());
        // The engine reports the pause at once; the evaluations in flight still finish, then
        // nothing new is evaluated. The engine stores the pause before it reports it, and
        // commits every child before it submits it: the candidates in the store once the pause
        // is reported are all those evaluated while paused.
        QTRY_COMPARE_WITH_TIMEOUT(runs->state(), kfgui::RunPhase::Paused, 120000);
        QVERIFY(!pause->isEnabled() && resume->isEnabled());
        int whilePaused = -1;
        {
            const kf::ProjectView store = kf::ProjectView::open(project.toStdString());
            const auto run = store.latest_run();
            QVERIFY(run);
            QCOMPARE(run->state, kf::RunState::Paused);
            whilePaused = static_cast<int>(store.candidates(run->id).size());
            QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(store.evaluations(run->id).size()), whilePaused, 120000);
            QCOMPARE(static_cast<int>(store.candidates(run->id).size()), whilePaused);  // nothing new meanwhile
            const auto shown = [&] {
                window->searchView()->applyPending();
                return model->rowCount();
            };
            QTRY_COMPARE_WITH_TIMEOUT(shown(), whilePaused, 5000);
            QCOMPARE(store.latest_run()->state, kf::RunState::Paused);
        }
        QCOMPARE(runs->state(), kfgui::RunPhase::Paused);

        QTest::mouseClick(resume, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > whilePaused, 120000);
        QVERIFY(stop->isEnabled());
        QTest::mouseClick(stop, Qt::LeftButton);
        QCOMPARE(runs->state(), kfgui::RunPhase::Stopping);
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 120000);
        QCOMPARE(runs->state(), kfgui::RunPhase::Stopped);
        kf::ProjectStore store = kf::ProjectStore::open(project.toStdString());
        const auto run = store.latest_run();
        QCOMPARE(run->state, kf::RunState::Stopped);
        QVERIFY(static_cast<int>(store.evaluations(run->id).size()) < 400);
        window->searchView()->applyPending();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), static_cast<int>(store.evaluations(run->id).size()), 5000);
        QVERIFY(window->findChild<QPushButton*>(QStringLiteral("startButton"))->isEnabled());
    }

    void eventFloodKeepsTheEventLoopResponsive() {
        auto window = makeWindow(qs(kftest::temp_dir("gui-flood") / "project"), 8);
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        // The window's start-up work off the GUI thread (the device probe, the shown task's
        // computation, the list of runs) and the tab's first layout and paint (charts, table)
        // happen before the flood, not in it: on two cores, the former takes the flood's CPU.
        PaintWatch firstPaint;
        firstPaint.watch(window->searchView()->speedupChart()->viewport());
        firstPaint.watch(window->searchView()->outcomeChart()->viewport());
        firstPaint.watch(window->searchView()->population()->findChild<QTableView*>()->viewport());
        window->tabs()->setCurrentWidget(window->searchView());
        QVERIFY(QThreadPool::globalInstance()->waitForDone(60000));
        QTRY_VERIFY_WITH_TIMEOUT(firstPaint.allPainted(), 10000);
        QCoreApplication::sendPostedEvents();  // the start-up work's results reach the widgets
        constexpr int kEvents = 20000;

        // The gap that ends with the run's first rows on screen is the run's start (the job's
        // thread, the views' first layout with rows): 39 to 87 ms on a 2-core machine whatever
        // the flood's size, and bounded on its own. The flood is what comes after it: its
        // longest gap measured 36 to 58 ms there, so it is held under 100 ms (a flood handled
        // event by event, or repainted per event, blocks for seconds).
        QElapsedTimer clock;
        qint64 last = 0, longest = 0, first = 0;
        QTimer probe;
        probe.setInterval(5);
        kfgui::PopulationModel* pm = window->searchView()->population()->model();
        connect(&probe, &QTimer::timeout, [&] {
            const qint64 now = clock.elapsed();
            if (now - last > 25) qInfo("event-loop gap of %lld ms at %lld ms (%d rows shown)", now - last, now, pm->rowCount());
            if (first == 0 && pm->rowCount() > 0) first = std::max<qint64>(now - last, 1);
            else if (first > 0) longest = std::max(longest, now - last);
            last = now;
        });

        kfgui::RunController* runs = window->runController();
        clock.start();
        probe.start();
        QVERIFY(runs->startJob([](kfgui::SearchWorker& worker) {
            std::mt19937 rng(7);
            std::uniform_real_distribution<double> speed(0.2, 3.0);
            const char* statuses[] = {"ok", "ok", "ok", "incorrect", "compile_error", "timeout", "integrity_violation"};
            for (int i = 0; i < kEvents; ++i) {
                kfgui::EngineEvent e;
                e.kind = kf::EventKind::Evaluated;
                e.island = i % 4;
                e.member = i + 1;
                e.status = QString::fromLatin1(statuses[i % 7]);
                e.fitness = e.status == QLatin1String("ok") ? speed(rng) : 0.0;
                e.expert = QStringLiteral("tuner");
                e.generation = i / 4;
                e.medianMs = 0.5;
                e.gbps = 10;
                e.bound = QStringLiteral("memory");
                worker.publish(e);
            }
            kfgui::RunOutcome outcome;
            outcome.state = kf::RunState::Done;
            outcome.evaluations = kEvents;
            worker.finish(outcome);
        }));
        kfgui::PopulationModel* model = window->searchView()->population()->model();
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), kEvents, 30000);
        probe.stop();
        QCOMPARE(window->searchView()->outcomeChart()->total(), kEvents);
        QCOMPARE(window->searchView()->speedupChart()->evaluations(), kEvents);
        QCOMPARE(window->searchView()->outcomeChart()->count(QStringLiteral("timeout")), kEvents / 7 + (kEvents % 7 > 5));
        qInfo("longest event-loop gap during a flood of %d events: %lld ms (the start: %lld ms)", kEvents, longest, first);
        QVERIFY2(first < 200, qPrintable(QStringLiteral("the run's start blocked the event loop for %1 ms").arg(first)));
        QVERIFY2(longest < 100, qPrintable(QStringLiteral("the event loop was blocked for %1 ms").arg(longest)));
    }

    void injectWithoutRunSaysSo() {
        auto window = makeWindow(qs(kftest::temp_dir("gui-inject") / "project"), 8);
        QVERIFY(!window->runController()->isActive());
        QVERIFY(!window->runController()->inject(kf::Proposal{}, 0));
        auto* candidate = window->findChild<kfgui::CandidateView*>(QStringLiteral("candidateView"));
        QVERIFY(candidate);
        Q_EMIT candidate->injectRequested(QStringLiteral("int x;"), 0, 1);
        auto* box = window->findChild<QMessageBox*>(QStringLiteral("informationBox"));
        QVERIFY(box);
        QVERIFY(box->text().contains(QStringLiteral("Start a search")));
    }
};

QTEST_MAIN(TestWorkbench)
#include "test_workbench.moc"
