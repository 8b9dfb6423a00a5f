// Runs through the app, offscreen, on the host backend: an edited candidate injected from the
// candidate view into a running search of the demo project is evaluated by the engine; the
// search view's run picker shows an earlier run from the store while the live run stays
// selectable; a run with the LLM experts of the settings shows their usage, one without them
// says in its log that the built-in experts run alone.
#include <QtTest>
#include <QtWidgets>

#include "candidate/candidateview.h"
#include "editor/codeeditor.h"
#include "http_test_server.h"
#include "kf/store.h"
#include "mainwindow.h"
#include "project/projectsession.h"
#include "runs/populationmodel.h"
#include "runs/populationview.h"
#include "runs/runcontroller.h"
#include "runs/runpanel.h"
#include "runs/runpicker.h"
#include "runs/searchview.h"
#include "settings/llmconfigfile.h"
#include "taskbrowser.h"
#include "guiproject.h"
#include "testsupport.h"

namespace {

const char* kKey = "sk-gui-run-SECRET-4321";

QString qs(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

bool finished(const kfgui::RunController* runs) {
    const kfgui::RunPhase s = runs->state();
    return !runs->isActive() && (s == kfgui::RunPhase::Done || s == kfgui::RunPhase::Stopped || s == kfgui::RunPhase::Failed);
}

std::unique_ptr<kfgui::MainWindow> makeWindow(const QString& project, bool demo, int budget) {
    auto window = std::make_unique<kfgui::MainWindow>(kfgui::LaunchOptions{qs(kftest::source_dir() / "tasks"), project, {}, demo});
    window->setWorkerPath(qs(kftest::worker_path()));
    window->findChild<QSpinBox*>(QStringLiteral("runIslands"))->setValue(2);
    window->findChild<QSpinBox*>(QStringLiteral("runPopulation"))->setValue(4);
    window->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(budget);
    window->findChild<QDoubleSpinBox*>(QStringLiteral("runMinTime"))->setValue(20);
    window->findChild<QSpinBox*>(QStringLiteral("runCompileThreads"))->setValue(2);
    return window;
}

void start(kfgui::MainWindow& window, const QString& task) {
    QVERIFY(window.taskBrowser()->selectTask(task));
    auto* button = window.findChild<QPushButton*>(QStringLiteral("startButton"));
    QVERIFY(button && button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
}


}  // namespace

using guitest::filesContaining;

class TestRunFeatures : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelFoundryTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_run_features"));
        QSettings().clear();
        QFile::remove(kfgui::llmConfigPath());
        QDir(kfgui::demoProjectDir()).removeRecursively();
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("gui-run-features-data").string()));
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((kftest::temp_dir("gui-run-features-cache") / "compile").string()));
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
        qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) qunsetenv(v);
    }

    void injectedCandidateIsEvaluated() {
        auto window = makeWindow({}, true, 400);
        window->resize(1400, 900);
        window->show();
        QVERIFY(window->session()->isOpen());
        QCOMPARE(window->session()->dir(), kfgui::demoProjectDir());
        QVERIFY(!window->findChild<QCheckBox*>(QStringLiteral("llmExpertsCheck"))->isEnabled());  // no providers
        start(*window, QStringLiteral("level1/softmax"));
        kfgui::RunController* runs = window->runController();
        QVERIFY(runs->isActive());
        kfgui::SearchView* view = window->searchView();
        kfgui::PopulationModel* model = view->population()->model();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() >= 1 && runs->runId() > 0, 120000);
        QTRY_VERIFY_WITH_TIMEOUT(view->logText().contains(QStringLiteral("no LLM experts configured: built-in experts only")), 5000);

        // The first evaluated candidate, edited in the candidate view and injected into island 1.
        const qint64 parent = model->row(0)->id;
        view->population()->selectCandidate(parent);
        auto* candidate = window->findChild<kfgui::CandidateView*>(QStringLiteral("candidateView"));
        QVERIFY(candidate);
        QTRY_COMPARE(candidate->candidateId(), parent);
        const QString edited = candidate->editor()->text() + QStringLiteral("\n// edited by hand before injection\n");
        candidate->editor()->setText(edited);
        bool answered = false;
        QTimer::singleShot(0, this, [&] {
            auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            if (!dialog) return;
            dialog->setIntValue(1);
            dialog->accept();
            answered = true;
        });
        QTest::mouseClick(candidate->findChild<QPushButton*>(QStringLiteral("injectButton")), Qt::LeftButton);
        QVERIFY(answered);

        // The engine evaluates it: a user candidate in the store, with a diagnosis, and a row.
        const std::string project = window->session()->dir().toStdString();
        const qint64 run = runs->runId();
        std::optional<kf::CandidateRecord> injected;
        std::optional<kf::EvaluationRecord> evaluation;
        const auto evaluated = [&] {
            kf::ProjectStore store = kf::ProjectStore::open(project);
            // The first candidate with that source (the tuner may later derive children of it
            // that keep the source and change its tunable values).
            for (const auto& c : store.candidates(run))
                if (c.source == edited.toStdString()) {
                    injected = c;
                    evaluation = store.evaluation_of(c.id);
                    break;
                }
            return evaluation.has_value();
        };
        QTRY_VERIFY_WITH_TIMEOUT(evaluated(), 180000);
        QCOMPARE(injected->author, std::string("user"));
        QCOMPARE(injected->expert, std::string("user"));
        QCOMPARE(injected->island, 1);
        QVERIFY(injected->parents == std::vector<std::int64_t>{parent});
        QVERIFY(evaluation->diagnosis.is_object());
        QVERIFY(evaluation->diagnosis.contains("status") && evaluation->diagnosis.contains("stage"));
        QCOMPARE(evaluation->status, std::string("ok"));  // a comment changes nothing
        QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(injected->id) >= 0, 10000);
        QCOMPARE(model->row(model->rowOf(injected->id))->expert, QStringLiteral("user"));

        QTest::mouseClick(window->findChild<QPushButton*>(QStringLiteral("stopButton")), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 120000);
    }

    void runPickerShowsEarlierRuns() {
        const QString project = qs(kftest::temp_dir("gui-run-picker") / "project");
        auto window = makeWindow(project, false, 5);
        window->show();
        kfgui::RunController* runs = window->runController();
        kfgui::RunPicker* picker = window->searchView()->runPicker();
        kfgui::PopulationModel* model = window->searchView()->population()->model();
        QCOMPARE(picker->count(), 0);

        start(*window, QStringLiteral("level1/softmax"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 240000);
        const qint64 first = runs->runId();
        QTRY_COMPARE_WITH_TIMEOUT(picker->count(), 1, 10000);  // read on a pool thread
        window->findChild<QSpinBox*>(QStringLiteral("runBudget"))->setValue(400);
        start(*window, QStringLiteral("level1/gelu"));
        QTRY_VERIFY_WITH_TIMEOUT(runs->runId() > first, 120000);
        const qint64 live = runs->runId();
        QTRY_COMPARE_WITH_TIMEOUT(picker->count(), 2, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(picker->selectedRun(), live, 10000);
        QVERIFY2(picker->currentText().contains(QStringLiteral("live")), qPrintable(picker->currentText()));
        // The status bar speaks of the new run, not of the outcome of the first.
        const QString status = window->statusBar()->currentMessage();
        QVERIFY2(status.startsWith(QStringLiteral("Run %1 on level1/gelu").arg(live)), qPrintable(status));
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() >= 1, 120000);

        // The earlier run: its population from the store, and no live event mixed into it.
        const int older = picker->findData(QVariant::fromValue<qint64>(first));
        QVERIFY(older >= 0);
        QVERIFY2(picker->itemText(older).contains(QStringLiteral("softmax")), qPrintable(picker->itemText(older)));
        picker->setCurrentIndex(older);
        Q_EMIT picker->activated(older);
        window->searchView()->applyPending();
        QCOMPARE(model->rowCount(), 5);
        const QString summary = window->searchView()->findChild<QLabel*>(QStringLiteral("searchSummary"))->text();
        QCOMPARE(summary, QStringLiteral("Run %1 on softmax: done — evaluation budget of 5 spent").arg(first));
        guitest::screenshot(window.get(), QStringLiteral("run-picker.png"));
        {
            kf::ProjectStore store = kf::ProjectStore::open(project.toStdString());
            for (const auto& ev : store.evaluations(first)) QVERIFY(model->rowOf(ev.candidate_id) >= 0);
        }
        // The live run goes on: once the view has been sent events of new evaluations, none
        // of them has reached the earlier run's population.
        QSignalSpy live_events(runs, &kfgui::RunController::eventsReady);
        auto evaluations_sent = [&] {
            int n = 0;
            for (const auto& call : live_events)
                for (const auto& e : call.at(0).value<kfgui::EngineEventList>()) n += e.isEvaluation() ? 1 : 0;
            return n;
        };
        QTRY_VERIFY_WITH_TIMEOUT(evaluations_sent() >= 2, 120000);
        window->searchView()->applyPending();
        QCOMPARE(model->rowCount(), 5);

        // Back to the live run: what it has stored so far, then its events again.
        const int liveIndex = picker->findData(QVariant::fromValue<qint64>(live));
        picker->setCurrentIndex(liveIndex);
        Q_EMIT picker->activated(liveIndex);
        window->searchView()->applyPending();
        const int shown = model->rowCount();
        QVERIFY(shown >= 1);
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > shown, 120000);
        QTest::mouseClick(window->findChild<QPushButton*>(QStringLiteral("stopButton")), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 120000);
        QTRY_VERIFY_WITH_TIMEOUT(!picker->currentText().contains(QStringLiteral("live")), 5000);
    }

    void runWithLlmExpertsShowsTheirUsage() {
        kftest::HttpTestServer server([](const kftest::HttpRequest&, int) {
            kftest::HttpResponse r;
            r.body = kftest::openai_answer("Nothing to change.", "stop", 1000, 250);
            return r;
        });
        nlohmann::json cfg = {{"providers", {{{"name", "local"}, {"kind", "openai"}, {"base_url", server.url("/v1")},
                                               {"api_key_env", "KF_GUI_RUN_KEY"}, {"retries", 0}}}},
                              {"models", {{{"name", "m1"}}}},
                              {"budgets", {{"max_calls", 4}}}};
        QString error;
        QVERIFY2(kfgui::saveLlmConfig(cfg, &error), qPrintable(error));
        qputenv("KF_GUI_RUN_KEY", kKey);  // no keyring here: the key comes from the environment
        const QString project = qs(kftest::temp_dir("gui-run-llm") / "project");
        auto window = makeWindow(project, false, 12);
        window->show();
        auto* llm = window->findChild<QCheckBox*>(QStringLiteral("llmExpertsCheck"));
        QVERIFY(llm->isEnabled());
        QVERIFY(!llm->isChecked());
        llm->setChecked(true);
        start(*window, QStringLiteral("level1/softmax"));
        kfgui::RunController* runs = window->runController();
        QTRY_VERIFY_WITH_TIMEOUT(finished(runs), 240000);
        QVERIFY2(runs->state() != kfgui::RunPhase::Failed, qPrintable(window->findChild<QLabel*>(QStringLiteral("runState"))->text()));
        window->searchView()->applyPending();
        kfgui::SearchView* view = window->searchView();
        QVERIFY2(view->logText().contains(QStringLiteral("LLM experts: 7 roles")), qPrintable(view->logText()));
        QVERIFY2(view->llmUsageText().startsWith(QStringLiteral("LLM: ")), qPrintable(view->llmUsageText()));
        kf::ProjectStore store = kf::ProjectStore::open(project.toStdString());
        const auto saved = store.get_state(runs->runId(), "llm");
        QVERIFY(saved);
        QCOMPARE(QString::number((*saved)["usage"]["totals"].value("calls", std::int64_t{-1})),
                 view->llmUsageText().section(QLatin1Char(' '), 1, 1));
        // The key is in no file the app or the run wrote.
        for (const QString& dir : {project, QFileInfo(kfgui::llmConfigPath()).absolutePath()})
            QVERIFY2(filesContaining(dir, kKey).isEmpty(), qPrintable(filesContaining(dir, kKey).join(QLatin1Char(' '))));
    }
};

QTEST_MAIN(TestRunFeatures)
#include "test_run_features.moc"
