#pragma once
#include <QWidget>

#include "kf/exec.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace kfgui {

/**
 * Where the app's evaluation workers run (docs/cluster.md): on this machine, or as Slurm
 * jobs submitted with the cluster's own tools, with the job's partition, GPUs, time limit,
 * account and spool folder; and for KernelBench problems the Python worker and how it
 * evaluates a ModelNew (trials, timed calls, tolerance policy, whether torch.compile is timed too). Kept in the typed
 * preferences (preferences.h).
 */
class ExecutorPage : public QWidget {
    Q_OBJECT

public:
    explicit ExecutorPage(QWidget* parent = nullptr);

    QComboBox* kind() const { return kind_; }
    QLineEdit* partition() const { return partition_; }
    QSpinBox* gpus() const { return gpus_; }
    QLineEdit* timeLimit() const { return time_; }
    QLineEdit* account() const { return account_; }
    QLineEdit* spool() const { return spool_; }
    QLineEdit* python() const { return python_; }
    QLineEdit* kbWorker() const { return kbWorker_; }
    QSpinBox* kbTrials() const { return kbTrials_; }
    QSpinBox* kbReps() const { return kbReps_; }
    QComboBox* kbTolerance() const { return kbTolerance_; }
    QCheckBox* kbCompile() const { return kbCompile_; }

    /** Writes the page's values to the preferences. */
    void save();
    /** The executor the preferences describe; a Slurm spool left empty is `projectDir`/slurm. */
    static kf::ExecutorOptions fromPreferences(const QString& projectDir);

private:
    void updateEnabled();

    QComboBox* kind_;
    QLineEdit* partition_;
    QSpinBox* gpus_;
    QLineEdit* time_;
    QLineEdit* account_;
    QLineEdit* spool_;
    QLineEdit* python_;
    QLineEdit* kbWorker_;
    QSpinBox* kbTrials_;
    QSpinBox* kbReps_;
    QComboBox* kbTolerance_;
    QCheckBox* kbCompile_;
};

}  // namespace kfgui
