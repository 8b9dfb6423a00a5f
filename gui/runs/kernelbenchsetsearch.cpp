#include "runs/kernelbenchsetsearch.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QPushButton>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include "preferences.h"

namespace kfgui {

KernelBenchSetSearchDialog::KernelBenchSetSearchDialog(const std::vector<KernelBenchSet>& sets, int perProblemBudget, QWidget* parent)
    : QDialog(parent), sets_(sets) {
    setWindowTitle(tr("Search KernelBench Problem Set"));
    auto* form = new QFormLayout;
    set_ = new QComboBox(this);
    set_->setObjectName(QStringLiteral("kbSetCombo"));
    for (const KernelBenchSet& s : sets_)
        set_->addItem(tr("Level %1 of %2 (%3)")
                          .arg(s.level)
                          .arg(QDir::toNativeSeparators(s.root), s.problems.isEmpty() ? tr("every problem") : s.problems));
    form->addRow(tr("Problem set:"), set_);
    count_ = new QLabel(this);
    count_->setObjectName(QStringLiteral("kbSetCount"));
    count_->setWordWrap(true);
    form->addRow(QString(), count_);
    // A budget over the set; 0 means no limit, as on the command line.
    auto limit = [this, form](auto* box, const char* name, auto max, const QString& label, const QString& tip) {
        box->setObjectName(QLatin1String(name));
        box->setRange(0, max);
        box->setSpecialValueText(tr("no limit"));
        box->setToolTip(tip);
        form->addRow(label, box);
        return box;
    };
    evaluations_ = limit(new QSpinBox(this), "kbLevelEvaluations", 1000000, tr("Evaluations for the set:"),
                         tr("Evaluations over all the set's problems, shared out as they run: what one problem leaves goes to the next"));
    tokens_ = limit(new QSpinBox(this), "kbLevelTokens", 2000000000, tr("LLM tokens for the set:"),
                    tr("LLM tokens (input and output) over all the set's problems"));
    tokens_->setSingleStep(10000);
    cost_ = limit(new QDoubleSpinBox(this), "kbLevelCost", 1e6, tr("LLM cost for the set:"),
                  tr("LLM cost over all the set's problems, in the unit of the providers' prices"));
    cost_->setDecimals(2);
    minutes_ = limit(new QSpinBox(this), "kbLevelMinutes", 60 * 24 * 30, tr("Time for the set:"), tr("Wall time of the whole search over the set"));
    minutes_->setSuffix(tr(" min"));
    skipFinished_ = new QCheckBox(tr("Skip problems already searched to the end in this project"), this);
    skipFinished_->setObjectName(QStringLiteral("kbSkipFinished"));
    form->addRow(QString(), skipFinished_);
    auto* note = new QLabel(tr("Each problem also keeps the run panel's limits: at most %1 evaluations, and its time limit. "
                               "The problems are searched one after the other; Stop ends the whole set.")
                                .arg(perProblemBudget),
                            this);
    note->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Start"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    connect(set_, &QComboBox::currentIndexChanged, this, &KernelBenchSetSearchDialog::updateCount);
    updateCount();
    // The budgets last entered, kept when the dialog is accepted.
    evaluations_->setValue(prefs::kbSetEvaluations.get());
    tokens_->setValue(prefs::kbSetTokens.get());
    cost_->setValue(prefs::kbSetCost.get());
    minutes_->setValue(prefs::kbSetMinutes.get());
    skipFinished_->setChecked(prefs::kbSetSkipFinished.get());
}

void KernelBenchSetSearchDialog::accept() {
    prefs::kbSetEvaluations.set(evaluations_->value());
    prefs::kbSetTokens.set(tokens_->value());
    prefs::kbSetCost.set(cost_->value());
    prefs::kbSetMinutes.set(minutes_->value());
    prefs::kbSetSkipFinished.set(skipFinished_->isChecked());
    QDialog::accept();
}

void KernelBenchSetSearchDialog::updateCount() {
    const int i = set_->currentIndex();
    if (i < 0 || i >= static_cast<int>(sets_.size())) {
        count_->clear();
        return;
    }
    try {
        const auto problems = kernelBenchProblems(sets_[static_cast<std::size_t>(i)]);
        int unsupported = 0;
        for (const auto& p : problems) unsupported += !p.unsupported.isEmpty();
        count_->setText(unsupported ? tr("%1 problem(s), %2 of them not supported (skipped)").arg(problems.size()).arg(unsupported)
                                    : tr("%1 problem(s)").arg(problems.size()));
    } catch (const std::exception& e) {
        count_->setText(tr("The set cannot be read: %1").arg(QString::fromUtf8(e.what())));
    }
}

KernelBenchSetSearch KernelBenchSetSearchDialog::search() const {
    KernelBenchSetSearch s;
    const int i = set_->currentIndex();
    if (i >= 0 && i < static_cast<int>(sets_.size())) s.set = sets_[static_cast<std::size_t>(i)];
    s.evaluations = evaluations_->value();
    s.tokens = tokens_->value();
    s.cost = cost_->value();
    s.timeS = minutes_->value() * 60.0;
    s.skipFinished = skipFinished_->isChecked();
    return s;
}

}  // namespace kfgui
