// The LLM providers page of the settings, offscreen: providers, role models and budgets saved
// as the engine's LLM configuration without keys; validation errors from the engine's
// validator; no keyring service here, which the page says, falling back to the environment;
// the run dock's LLM option; the ensemble a run gets, with a key held in memory; usage shown.
#include <QtTest>
#include <QtWidgets>

#include "kf/llm.h"
#include "kf/search.h"
#include "runs/engineevent.h"
#include "runs/runpanel.h"
#include "runs/searchview.h"
#include "runs/searchworker.h"
#include "kf/exec.h"
#include "preferences.h"
#include "settings/executorpage.h"
#include "settings/llmconfigfile.h"
#include "settings/llmproviderspage.h"
#include "settings/settingsdialog.h"
#include "guiproject.h"
#include "testsupport.h"

namespace {

const char* kKey = "sk-gui-test-SECRET-9876";

void setCell(QTableWidget* t, int row, int column, const QString& text) { t->item(row, column)->setText(text); }


}  // namespace

using guitest::filesContaining;

class TestLlmSettings : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelFoundryTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_llm_settings"));
        QSettings().clear();
        QFile::remove(kfgui::llmConfigPath());
        // No message bus of a desktop: no keyring service can answer.
        qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
    }

    void pageSavesTheEngineConfigWithoutKeys() {
        kfgui::LlmProvidersPage page;
        QSignalSpy checked(&page, &kfgui::LlmProvidersPage::keyringChecked);
        QCOMPARE(page.providers()->rowCount(), 0);
        QCOMPARE(page.roles()->rowCount(), static_cast<int>(kf::llm::role_ids().size()));
        QVERIFY(page.save());  // nothing configured: nothing written
        QVERIFY(!QFile::exists(kfgui::llmConfigPath()));
        QVERIFY(!kfgui::llmProvidersConfigured());

        const int row = page.addProvider();
        QTableWidget* t = page.providers();
        setCell(t, row, kfgui::LlmProvidersPage::NameColumn, QStringLiteral("local"));
        setCell(t, row, kfgui::LlmProvidersPage::UrlColumn, QStringLiteral("ftp://nowhere"));
        setCell(t, row, kfgui::LlmProvidersPage::ModelsColumn, QStringLiteral("m1, m2"));
        setCell(t, row, kfgui::LlmProvidersPage::PriceInColumn, QStringLiteral("3"));
        setCell(t, row, kfgui::LlmProvidersPage::PriceOutColumn, QStringLiteral("15"));
        setCell(t, row, kfgui::LlmProvidersPage::ConcurrencyColumn, QStringLiteral("2"));
        setCell(t, row, kfgui::LlmProvidersPage::KeyEnvColumn, QStringLiteral("KF_GUI_TEST_KEY"));
        // The engine's validator names the field.
        QVERIFY(!page.save());
        QVERIFY2(page.errorText().contains(QStringLiteral("providers[0].base_url")), qPrintable(page.errorText()));
        QVERIFY(!QFile::exists(kfgui::llmConfigPath()));
        setCell(t, row, kfgui::LlmProvidersPage::UrlColumn, QStringLiteral("http://127.0.0.1:9/v1"));
        setCell(t, row, kfgui::LlmProvidersPage::ConcurrencyColumn, QStringLiteral("two"));
        QVERIFY(!page.save());
        QVERIFY2(page.errorText().contains(QStringLiteral("concurrency")), qPrintable(page.errorText()));
        setCell(t, row, kfgui::LlmProvidersPage::ConcurrencyColumn, QStringLiteral("2"));
        // The memory role only on m2, the fusion role off.
        for (int r = 0; r < page.roles()->rowCount(); ++r) {
            const QString id = page.roles()->item(r, 0)->data(Qt::UserRole).toString();
            if (id == QLatin1String("memory")) page.roles()->item(r, 1)->setText(QStringLiteral("m2"));
            if (id == QLatin1String("fusion")) page.roles()->item(r, 0)->setCheckState(Qt::Unchecked);
        }
        page.maxCalls()->setValue(40);
        page.maxCost()->setValue(2.5);
        page.keyEdit()->setText(QString::fromLatin1(kKey));
        QVERIFY2(page.save(), qPrintable(page.errorText()));
        QVERIFY(kfgui::llmProvidersConfigured());

        // The file is the engine's format, read back by the engine.
        const kf::llm::LlmConfig cfg = kf::llm::load_llm_config(kfgui::llmConfigPath().toStdString());
        QCOMPARE(cfg.providers.size(), std::size_t(1));
        QCOMPARE(cfg.providers[0].name, std::string("local"));
        QCOMPARE(cfg.providers[0].concurrency, 2);
        QCOMPARE(cfg.providers[0].api_key_env, std::string("KF_GUI_TEST_KEY"));
        QVERIFY(cfg.providers[0].api_key.empty());
        QCOMPARE(cfg.providers[0].prices.at("m2").output_per_mtok, 15.0);
        QCOMPARE(cfg.models.size(), std::size_t(2));
        QVERIFY(cfg.roles.at("memory").models == std::vector<std::string>{"m2"});
        QVERIFY(!cfg.roles.at("fusion").enabled);
        QVERIFY(cfg.roles.at("compile").enabled);
        QCOMPARE(cfg.budgets.max_calls, std::int64_t(40));
        QCOMPARE(cfg.budgets.max_cost, 2.5);

        // A second page reads it back (and the key of "local" from the keyring).
        kfgui::LlmProvidersPage again;
        QSignalSpy againChecked(&again, &kfgui::LlmProvidersPage::keyringChecked);
        QCOMPARE(again.providers()->rowCount(), 1);
        QCOMPARE(again.providers()->item(0, kfgui::LlmProvidersPage::ModelsColumn)->text(), QStringLiteral("m1, m2"));
        QCOMPARE(again.maxCalls()->value(), 40);

        // No keyring here: the page says so and falls back to the environment variable. Storing
        // a key fails the same way and writes it nowhere.
        QTRY_VERIFY_WITH_TIMEOUT(checked.count() >= 1 && againChecked.count() >= 1, 20000);
        if (again.keyringAvailable()) QSKIP("a keyring service answered on this machine");
        QVERIFY(!page.keyringAvailable());
        for (kfgui::LlmProvidersPage* p : {&page, &again}) {
            QVERIFY2(p->keyringText().contains(QStringLiteral("No keyring service")), qPrintable(p->keyringText()));
            QVERIFY2(p->keyringText().contains(QStringLiteral("environment variable")), qPrintable(p->keyringText()));
            QVERIFY(!p->storeKeyButton()->isEnabled());
            QVERIFY(!p->keyEdit()->isEnabled());
        }
        again.resize(980, 700);
        guitest::screenshot(&again, QStringLiteral("llm-providers.png"));
        const QString config = QFileInfo(kfgui::llmConfigPath()).absolutePath();
        QVERIFY2(filesContaining(config, kKey).isEmpty(), qPrintable(filesContaining(config, kKey).join(QLatin1Char(' '))));
        QSettings().sync();
        QVERIFY(!QFile(QSettings().fileName()).exists() || filesContaining(QFileInfo(QSettings().fileName()).absolutePath(), kKey).isEmpty());
    }

    void runDockOffersLlmExpertsOnlyWhenConfigured() {
        kfgui::RunPanel panel;
        QVERIFY(!panel.llmCheck()->isEnabled());
        QVERIFY(!panel.llmExperts());
        panel.setLlmAvailable(true);
        QVERIFY(panel.llmCheck()->isEnabled());
        QVERIFY(!panel.llmCheck()->isChecked());  // off by default
        panel.llmCheck()->setChecked(true);
        QVERIFY(panel.llmExperts());
        panel.setState(kfgui::RunPhase::Running);
        QVERIFY(!panel.llmCheck()->isEnabled());
        panel.setState(kfgui::RunPhase::Done);
        panel.setLlmAvailable(false);
        QVERIFY(!panel.llmExperts());
        QVERIFY(!panel.llmCheck()->isEnabled());
    }

    void runGetsTheEnsembleWithTheKeyInMemory() {
        nlohmann::json j = {{"providers", {{{"name", "local"}, {"kind", "openai"}, {"base_url", "http://127.0.0.1:9/v1"},
                                            {"api_key_env", "KF_GUI_UNSET_KEY"}}}},
                            {"models", {{{"name", "m1"}}}},
                            {"budgets", {{"max_calls", 3}}}};
        qunsetenv("KF_GUI_UNSET_KEY");
        kfgui::RunRequest request;
        request.llmConfig = QByteArray::fromStdString(j.dump());
        // Neither keyring nor environment: the run cannot start, and says why.
        try {
            kfgui::makeEnsemble(request);
            QFAIL("an ensemble without a key was made");
        } catch (const kf::Error& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("KF_GUI_UNSET_KEY")), e.what());
        }
        request.llmKeys.insert(QStringLiteral("local"), QString::fromLatin1(kKey));
        auto ens = kfgui::makeEnsemble(request);
        QVERIFY(ens);
        QCOMPARE(ens->experts().size(), kf::llm::role_ids().size());
        QCOMPARE(ens->config().budgets.max_calls, std::int64_t(3));
        request.llmConfig = "{not json";
        QVERIFY_THROWS_EXCEPTION(kf::Error, kfgui::makeEnsemble(request));
    }

    void searchViewShowsLlmUsageAndTheLog() {
        kfgui::SearchView view;
        QVERIFY(view.llmUsageText().isEmpty());
        kf::SearchEvent log{kf::EventKind::Log, -1, 0, "no LLM experts configured: built-in experts only", {}};
        kf::SearchEvent usage{kf::EventKind::LlmUsage, -1, 0, "",
                              {{"totals", {{"calls", 3}, {"input_tokens", 3000}, {"output_tokens", 750}, {"cost", 0.02}}}}};
        view.appendEvents({kfgui::toEngineEvent(log), kfgui::toEngineEvent(usage)});
        view.applyPending();
        QVERIFY2(view.logText().contains(QStringLiteral("no LLM experts configured")), qPrintable(view.logText()));
        QVERIFY2(view.llmUsageText().contains(QStringLiteral("LLM: 3 call")), qPrintable(view.llmUsageText()));
        QVERIFY2(view.llmUsageText().contains(QStringLiteral("3000 input + 750 output tokens")), qPrintable(view.llmUsageText()));
        QVERIFY2(view.llmUsageText().contains(QStringLiteral("0.0200")), qPrintable(view.llmUsageText()));
        view.clear();
        QVERIFY(view.llmUsageText().isEmpty());
        QVERIFY(view.logText().isEmpty());
    }

    void settingsDialogKeepsAnInvalidPageOpen() {
        kfgui::SettingsDialog dialog;
        kfgui::LlmProvidersPage* page = dialog.llmProviders();
        QCOMPARE(page->providers()->rowCount(), 1);  // saved by the first test
        setCell(page->providers(), 0, kfgui::LlmProvidersPage::ModelsColumn, QString());
        QVERIFY(!dialog.save());
        QVERIFY2(page->errorText().contains(QStringLiteral("model")), qPrintable(page->errorText()));
        // The file on disk is unchanged.
        QCOMPARE(kf::llm::load_llm_config(kfgui::llmConfigPath().toStdString()).models.size(), std::size_t(2));
        // Removing the last provider removes the configuration.
        page->providers()->removeRow(0);
        QVERIFY(dialog.save());
        QVERIFY(!QFile::exists(kfgui::llmConfigPath()));
        QVERIFY(!kfgui::llmProvidersConfigured());
    }

    /** The Executor page: Slurm's fields only with Slurm chosen; saved values become the
     *  executor a search's worker runs under (a Slurm relay command), the spool defaulting to
     *  the project's slurm folder. */
    void executorPageSavesWhereWorkersRun() {
        kfgui::SettingsDialog dialog;
        kfgui::ExecutorPage* page = dialog.executor();
        QCOMPARE(page->kind()->currentData().toString(), QStringLiteral("local"));
        QVERIFY(!page->partition()->isEnabled());
        QCOMPARE(kfgui::ExecutorPage::fromPreferences(QStringLiteral("/p")).kind, kf::ExecutorKind::Local);
        page->kind()->setCurrentIndex(page->kind()->findData(QStringLiteral("slurm")));
        QVERIFY(page->partition()->isEnabled());
        page->partition()->setText(QStringLiteral(" gpu "));
        page->gpus()->setValue(2);
        page->timeLimit()->setText(QStringLiteral("30"));
        page->account()->setText(QStringLiteral("proj1"));
        dialog.executor()->save();
        const kf::ExecutorOptions ex = kfgui::ExecutorPage::fromPreferences(QStringLiteral("/data/project"));
        QCOMPARE(ex.kind, kf::ExecutorKind::Slurm);
        QCOMPARE(QString::fromStdString(ex.slurm.partition), QStringLiteral("gpu"));
        QCOMPARE(ex.slurm.gpus, 2);
        QCOMPARE(QString::fromStdString(ex.slurm.time_limit), QStringLiteral("30"));
        QCOMPARE(QString::fromStdString(ex.slurm.account), QStringLiteral("proj1"));
        QCOMPARE(QString::fromStdString(ex.slurm.spool_dir.string()), QStringLiteral("/data/project/slurm"));
        // The worker of a search then runs through the Slurm relay, not as a local child.
        kf::WorkerConfig local;
        local.worker = "/opt/kf/bin/kfoundry-worker";
        const kf::WorkerConfig w = kf::executor_worker(ex, local, "/opt/kf/bin/kfoundry");
        QVERIFY(!w.command.empty());
        QVERIFY(std::find(w.command.begin(), w.command.end(), std::string("slurm-relay")) != w.command.end());
        // A new dialog shows what was saved.
        kfgui::SettingsDialog again;
        QCOMPARE(again.executor()->kind()->currentData().toString(), QStringLiteral("slurm"));
        QCOMPARE(again.executor()->partition()->text(), QStringLiteral("gpu"));
        QCOMPARE(again.executor()->gpus()->value(), 2);
        again.executor()->kind()->setCurrentIndex(0);
        again.executor()->save();
        QCOMPARE(kfgui::ExecutorPage::fromPreferences(QStringLiteral("/p")).kind, kf::ExecutorKind::Local);
    }

    /** The Executor page's KernelBench evaluation options: the CLI's defaults at first, kept when saved. */
    void executorPageKeepsKernelBenchEvaluationOptions() {
        kfgui::SettingsDialog dialog;
        kfgui::ExecutorPage* page = dialog.executor();
        QCOMPARE(page->kbTrials()->value(), 5);
        QCOMPARE(page->kbReps()->value(), 100);
        QCOMPARE(page->kbTolerance()->currentText(), QStringLiteral("current"));
        QVERIFY(page->kbTolerance()->findText(QStringLiteral("v0")) >= 0);
        QVERIFY(page->kbCompile()->isChecked());
        page->kbTrials()->setValue(3);
        page->kbReps()->setValue(40);
        page->kbTolerance()->setCurrentIndex(page->kbTolerance()->findText(QStringLiteral("strict")));
        page->kbCompile()->setChecked(false);
        page->save();
        QCOMPARE(kfgui::prefs::kbTrials.get(), 3);
        QCOMPARE(kfgui::prefs::kbReps.get(), 40);
        QCOMPARE(kfgui::prefs::kbTolerance.get(), QStringLiteral("strict"));
        QCOMPARE(kfgui::prefs::kbBaselines.get(), QStringLiteral("eager"));
        kfgui::SettingsDialog again;
        QCOMPARE(again.executor()->kbTrials()->value(), 3);
        QCOMPARE(again.executor()->kbReps()->value(), 40);
        QCOMPARE(again.executor()->kbTolerance()->currentText(), QStringLiteral("strict"));
        QVERIFY(!again.executor()->kbCompile()->isChecked());
        again.executor()->kbCompile()->setChecked(true);
        again.executor()->save();
        QCOMPARE(kfgui::prefs::kbBaselines.get(), QStringLiteral("eager,compile"));
        kfgui::prefs::kbTrials.set(5);
        kfgui::prefs::kbReps.set(100);
        kfgui::prefs::kbTolerance.set(QStringLiteral("current"));
    }
};

QTEST_MAIN(TestLlmSettings)
#include "test_llm_settings.moc"
