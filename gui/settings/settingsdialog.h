#pragma once
#include <QDialog>

class QComboBox;

namespace kfgui {

class RunConfigWidget;

/**
 * Settings, all kept in the typed preferences (preferences.h): the default run configuration
 * with the backend, device and compile parallelism, and the interface language (applied on
 * the next start).
 */
class SettingsDialog : public QDialog {
    Q_OBJECT

public:
    explicit SettingsDialog(QWidget* parent = nullptr);

    RunConfigWidget* runDefaults() const { return run_; }
    QComboBox* language() const { return language_; }
    /** Writes the dialog's values to the settings (what OK does). */
    void save();

private:
    RunConfigWidget* run_;
    QComboBox* language_;
};

}  // namespace kfgui
