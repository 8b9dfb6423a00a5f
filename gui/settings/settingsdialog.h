#pragma once
#include <QDialog>

class QComboBox;

namespace kfgui {

class ExecutorPage;
class LlmProvidersPage;
class RunConfigWidget;

/**
 * Settings, all kept in the typed preferences (preferences.h): the default run configuration
 * with the backend, device and compile parallelism, and the interface language (applied on
 * the next start); where evaluation workers run (executorpage.h); and the LLM providers
 * (llmproviderspage.h), kept in the engine's LLM
 * configuration file with their keys in the OS keyring.
 */
class SettingsDialog : public QDialog {
    Q_OBJECT

public:
    explicit SettingsDialog(QWidget* parent = nullptr);

    RunConfigWidget* runDefaults() const { return run_; }
    QComboBox* language() const { return language_; }
    LlmProvidersPage* llmProviders() const { return llm_; }
    ExecutorPage* executor() const { return executor_; }
    /** Writes the dialog's values to the settings (what OK does); false when the LLM page is not valid. */
    bool save();

private:
    RunConfigWidget* run_;
    QComboBox* language_;
    LlmProvidersPage* llm_;
    ExecutorPage* executor_;
};

}  // namespace kfgui
