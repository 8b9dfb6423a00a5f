#include "settings/settingsdialog.h"

#include <algorithm>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QTabWidget>
#include <QVBoxLayout>

#include "preferences.h"
#include "runs/runconfigwidget.h"
#include "settings/executorpage.h"
#include "settings/llmproviderspage.h"

namespace kfgui {

SettingsDialog::SettingsDialog(QWidget* parent)
    : QDialog(parent),
      run_(new RunConfigWidget),
      language_(new QComboBox),
      llm_(new LlmProvidersPage),
      executor_(new ExecutorPage) {
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));

    run_->setConfig(loadDefaultRunConfig());
    auto* runPage = new QWidget;
    auto* runLayout = new QVBoxLayout(runPage);
    auto* runNote = new QLabel(tr("New searches start from these values; the run panel can change them for one run."));
    runNote->setWordWrap(true);
    runLayout->addWidget(runNote);
    runLayout->addWidget(run_);
    runLayout->addStretch(1);

    language_->setObjectName(QStringLiteral("languageCombo"));
    language_->addItem(tr("System language"), QString());
    // Each language in its own name, so that it can be found whatever the current language.
    language_->addItem(QStringLiteral("English"), QStringLiteral("en"));
    language_->addItem(QString::fromUtf8("简体中文"), QStringLiteral("zh_CN"));
    language_->setCurrentIndex(std::max(0, language_->findData(prefs::language.get())));
    auto* uiPage = new QWidget;
    auto* uiLayout = new QFormLayout(uiPage);
    uiLayout->addRow(tr("Language:"), language_);
    auto* restart = new QLabel(tr("A new language applies the next time Kernel Foundry starts."));
    restart->setWordWrap(true);
    uiLayout->addRow(QString(), restart);

    auto* tabs = new QTabWidget;
    tabs->addTab(runPage, tr("Runs and backend"));
    tabs->addTab(executor_, tr("Executor"));
    tabs->addTab(llm_, tr("LLM providers"));
    tabs->addTab(uiPage, tr("Interface"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tabs);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, [this, tabs] {
        if (save()) accept();
        else tabs->setCurrentWidget(llm_);  // its error says what to fix
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

bool SettingsDialog::save() {
    saveDefaultRunConfig(run_->config());
    prefs::language.set(language_->currentData().toString());
    executor_->save();
    return llm_->save();
}

}  // namespace kfgui
