#include "runs/runpanel.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

#include "runs/runconfigwidget.h"

namespace kfgui {

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent),
      task_(new QLabel(this)),
      config_(new RunConfigWidget(this)),
      llm_(new QCheckBox(tr("LLM experts"), this)),
      start_(new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Start search"), this)),
      pause_(new QPushButton(style()->standardIcon(QStyle::SP_MediaPause), tr("Pause"), this)),
      resume_(new QPushButton(style()->standardIcon(QStyle::SP_MediaSeekForward), tr("Resume"), this)),
      stop_(new QPushButton(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this)),
      state_(new QLabel(this)) {
    setObjectName(QStringLiteral("runPanel"));
    task_->setObjectName(QStringLiteral("runTask"));
    task_->setWordWrap(true);
    start_->setObjectName(QStringLiteral("startButton"));
    pause_->setObjectName(QStringLiteral("pauseButton"));
    resume_->setObjectName(QStringLiteral("resumeButton"));
    stop_->setObjectName(QStringLiteral("stopButton"));
    state_->setObjectName(QStringLiteral("runState"));
    llm_->setObjectName(QStringLiteral("llmExpertsCheck"));
    state_->setWordWrap(true);
    start_->setDefault(true);

    auto* buttons = new QGridLayout;
    buttons->addWidget(start_, 0, 0, 1, 3);
    buttons->addWidget(pause_, 1, 0);
    buttons->addWidget(resume_, 1, 1);
    buttons->addWidget(stop_, 1, 2);

    auto* settings = new QGroupBox(tr("Run configuration"), this);
    auto* settingsLayout = new QVBoxLayout(settings);
    settingsLayout->addWidget(config_);
    settingsLayout->addWidget(llm_);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(task_);
    layout->addLayout(buttons);
    layout->addWidget(state_);
    layout->addWidget(settings);
    layout->addStretch(1);

    connect(start_, &QPushButton::clicked, this, &RunPanel::startRequested);
    connect(pause_, &QPushButton::clicked, this, &RunPanel::pauseRequested);
    connect(resume_, &QPushButton::clicked, this, &RunPanel::resumeRequested);
    connect(stop_, &QPushButton::clicked, this, &RunPanel::stopRequested);
    setTask({});
    setLlmAvailable(false);
    setState(RunPhase::Idle);
}

void RunPanel::setLlmAvailable(bool available) {
    llm_->setProperty("available", available);
    if (!available) llm_->setChecked(false);
    llm_->setToolTip(available ? tr("Let the LLM experts of Settings › LLM providers propose children beside the built-in experts")
                               : tr("Configure LLM providers in Settings › LLM providers to use LLM experts"));
    updateButtons();
}

bool RunPanel::llmExperts() const { return llm_->isChecked() && llm_->property("available").toBool(); }

void RunPanel::setTask(const QString& name, const QString& problem) {
    taskReady_ = !name.isEmpty() && problem.isEmpty();
    if (name.isEmpty()) task_->setText(tr("Select a task in the Tasks tab."));
    else if (!problem.isEmpty()) task_->setText(tr("Task <b>%1</b>: %2").arg(name.toHtmlEscaped(), problem.toHtmlEscaped()));
    else task_->setText(tr("Task <b>%1</b>").arg(name.toHtmlEscaped()));
    updateButtons();
}

void RunPanel::setState(RunPhase state, const QString& detail) {
    phase_ = state;
    const QString text = tr("State: %1").arg(runPhaseText(state));
    state_->setText(detail.isEmpty() ? text : text + QLatin1Char('\n') + detail);
    updateButtons();
}

void RunPanel::updateButtons() {
    const RunPhase s = phase_;
    const bool active = s == RunPhase::Starting || s == RunPhase::Running || s == RunPhase::Pausing ||
                        s == RunPhase::Paused || s == RunPhase::Stopping;
    start_->setEnabled(!active && taskReady_);
    pause_->setEnabled(s == RunPhase::Running || s == RunPhase::Starting);
    resume_->setEnabled(s == RunPhase::Paused || s == RunPhase::Pausing);
    stop_->setEnabled(active && s != RunPhase::Stopping);
    config_->setEnabled(!active);
    llm_->setEnabled(!active && llm_->property("available").toBool());
}

}  // namespace kfgui
