#pragma once
#include <QWidget>

#include "runs/runphase.h"

class QCheckBox;
class QLabel;
class QPushButton;

namespace kfgui {

class RunConfigWidget;

/**
 * The run dock: which task a search would run on, its configuration, Start search / Pause /
 * Resume / Stop, and the state of the run. It only asks; MainWindow does.
 */
class RunPanel : public QWidget {
    Q_OBJECT

public:
    explicit RunPanel(QWidget* parent = nullptr);

    RunConfigWidget* configWidget() const { return config_; }
    /** The task a search would run on; empty `name` when none is selected or it is broken. */
    void setTask(const QString& name, const QString& problem = {});
    /**
     * LLM providers are configured (Settings › LLM providers) or not: the "LLM experts" option
     * is offered only when they are; it is off by default.
     */
    void setLlmAvailable(bool available);
    /** The run should use the LLM experts beside the built-in ones. */
    bool llmExperts() const;
    QCheckBox* llmCheck() const { return llm_; }
    /** Enables the buttons that make sense in `state` (RunController::state()). */
    void setState(RunPhase state, const QString& detail = {});

Q_SIGNALS:
    void startRequested();
    void pauseRequested();
    void resumeRequested();
    void stopRequested();

private:
    void updateButtons();

    QLabel* task_;
    RunConfigWidget* config_;
    QCheckBox* llm_;
    QPushButton* start_;
    QPushButton* pause_;
    QPushButton* resume_;
    QPushButton* stop_;
    QLabel* state_;
    RunPhase phase_ = RunPhase::Idle;
    bool taskReady_ = false;
};

}  // namespace kfgui
