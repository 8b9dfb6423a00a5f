#include "settings/executorpage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include "kf/kernelbench.h"
#include "preferences.h"

namespace kfgui {

ExecutorPage::ExecutorPage(QWidget* parent)
    : QWidget(parent),
      kind_(new QComboBox),
      partition_(new QLineEdit),
      gpus_(new QSpinBox),
      time_(new QLineEdit),
      account_(new QLineEdit),
      spool_(new QLineEdit),
      python_(new QLineEdit),
      kbWorker_(new QLineEdit),
      kbTrials_(new QSpinBox),
      kbReps_(new QSpinBox),
      kbTolerance_(new QComboBox),
      kbCompile_(new QCheckBox(tr("Also time torch.compile (eager PyTorch always is)"))) {
    setObjectName(QStringLiteral("executorPage"));
    kind_->setObjectName(QStringLiteral("executorCombo"));
    kind_->addItem(tr("This machine"), QStringLiteral("local"));
    kind_->addItem(tr("Slurm cluster (one job per worker)"), QStringLiteral("slurm"));
    kind_->setCurrentIndex(std::max(0, kind_->findData(prefs::executor.get())));
    partition_->setPlaceholderText(tr("the cluster's default"));
    partition_->setText(prefs::slurmPartition.get());
    gpus_->setRange(-1, 64);
    gpus_->setSpecialValueText(tr("one on CUDA, none on the host"));
    gpus_->setValue(prefs::slurmGpus.get());
    time_->setPlaceholderText(tr("the partition's default (minutes, or D-HH:MM:SS)"));
    time_->setText(prefs::slurmTime.get());
    account_->setPlaceholderText(tr("your default account"));
    account_->setText(prefs::slurmAccount.get());
    spool_->setPlaceholderText(tr("the project's slurm folder (must be visible to the nodes)"));
    spool_->setText(prefs::slurmSpool.get());
    python_->setObjectName(QStringLiteral("kbPython"));
    python_->setPlaceholderText(tr("$KF_PYTHON or python3"));
    python_->setText(prefs::kbPython.get());
    kbWorker_->setObjectName(QStringLiteral("kbWorker"));
    kbWorker_->setPlaceholderText(tr("the bundled resources/kernelbench/kb_worker.py"));
    kbWorker_->setText(prefs::kbWorker.get());
    kbTrials_->setObjectName(QStringLiteral("kbTrials"));
    kbTrials_->setRange(1, 1000);
    kbTrials_->setValue(prefs::kbTrials.get());
    kbTrials_->setToolTip(tr("Correctness trials per evaluation, each on fresh random inputs (--trials)"));
    kbReps_->setObjectName(QStringLiteral("kbReps"));
    kbReps_->setRange(1, 100000);
    kbReps_->setValue(prefs::kbReps.get());
    kbReps_->setToolTip(tr("Timed calls per evaluation; the median is kept (--reps)"));
    kbTolerance_->setObjectName(QStringLiteral("kbTolerance"));
    for (const char* policy : kf::kb::kTolerancePolicies) kbTolerance_->addItem(QString::fromLatin1(policy));
    kbTolerance_->setCurrentIndex(std::max(0, kbTolerance_->findText(prefs::kbTolerance.get())));
    kbTolerance_->setToolTip(tr("How outputs are compared with the reference's (--tolerance; docs/kernelbench.md)"));
    const QStringList baselines = prefs::kbBaselines.get().split(QLatin1Char(','), Qt::SkipEmptyParts);
    kbCompile_->setObjectName(QStringLiteral("kbCompile"));
    kbCompile_->setChecked(baselines.contains(QStringLiteral("compile")));

    auto* form = new QFormLayout(this);
    auto* note = new QLabel(tr("Where searches run their evaluation workers. With Slurm, each worker is a job "
                               "submitted with sbatch that connects back to the app; a job that is cancelled "
                               "or pre-empted is submitted again and no evaluation is lost."));
    note->setWordWrap(true);
    form->addRow(note);
    form->addRow(tr("Workers run on:"), kind_);
    form->addRow(tr("Partition:"), partition_);
    form->addRow(tr("GPUs per job:"), gpus_);
    form->addRow(tr("Time limit:"), time_);
    form->addRow(tr("Account:"), account_);
    form->addRow(tr("Spool folder:"), spool_);
    auto* kbNote = new QLabel(tr("KernelBench problems are evaluated by a Python worker: the Python with PyTorch "
                                 "and the worker script it runs."));
    kbNote->setWordWrap(true);
    form->addRow(kbNote);
    form->addRow(tr("Python (KernelBench):"), python_);
    form->addRow(tr("KernelBench worker:"), kbWorker_);
    form->addRow(tr("Correctness trials:"), kbTrials_);
    form->addRow(tr("Timed calls:"), kbReps_);
    form->addRow(tr("Tolerance policy:"), kbTolerance_);
    form->addRow(tr("Baselines:"), kbCompile_);
    connect(kind_, &QComboBox::currentIndexChanged, this, [this] { updateEnabled(); });
    updateEnabled();
}

void ExecutorPage::updateEnabled() {
    const bool slurm = kind_->currentData().toString() == QLatin1String("slurm");
    for (QWidget* w : {static_cast<QWidget*>(partition_), static_cast<QWidget*>(gpus_), static_cast<QWidget*>(time_),
                       static_cast<QWidget*>(account_), static_cast<QWidget*>(spool_)})
        w->setEnabled(slurm);
}

void ExecutorPage::save() {
    prefs::executor.set(kind_->currentData().toString());
    prefs::slurmPartition.set(partition_->text().trimmed());
    prefs::slurmGpus.set(gpus_->value());
    prefs::slurmTime.set(time_->text().trimmed());
    prefs::slurmAccount.set(account_->text().trimmed());
    prefs::slurmSpool.set(spool_->text().trimmed());
    prefs::kbPython.set(python_->text().trimmed());
    prefs::kbWorker.set(kbWorker_->text().trimmed());
    prefs::kbTrials.set(kbTrials_->value());
    prefs::kbReps.set(kbReps_->value());
    prefs::kbTolerance.set(kbTolerance_->currentText());
    prefs::kbBaselines.set(kbCompile_->isChecked() ? QStringLiteral("eager,compile") : QStringLiteral("eager"));
}

kf::ExecutorOptions ExecutorPage::fromPreferences(const QString& projectDir) {
    kf::ExecutorOptions ex;
    ex.kind = kf::executor_from_string(prefs::executor.get().toStdString()).value_or(kf::ExecutorKind::Local);
    ex.slurm.partition = prefs::slurmPartition.get().toStdString();
    ex.slurm.gpus = prefs::slurmGpus.get();
    ex.slurm.time_limit = prefs::slurmTime.get().toStdString();
    ex.slurm.account = prefs::slurmAccount.get().toStdString();
    const QString spool = prefs::slurmSpool.get();
    ex.slurm.spool_dir = (spool.isEmpty() ? projectDir + QStringLiteral("/slurm") : spool).toStdString();
    return ex;
}

}  // namespace kfgui
