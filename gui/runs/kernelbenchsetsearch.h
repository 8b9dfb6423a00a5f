#pragma once
#include <QDialog>

#include <vector>

#include "project/kernelbenchset.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace kfgui {

/** A search over the problems of one KernelBench set, with budgets over the whole set (0: no limit). */
struct KernelBenchSetSearch {
    KernelBenchSet set;
    qint64 evaluations = 0;  ///< over all the set's problems
    qint64 tokens = 0;       ///< LLM tokens over all the set's problems
    double cost = 0;         ///< LLM cost over all the set's problems
    double timeS = 0;        ///< wall time of the whole search
    bool skipFinished = true;  ///< problems finished in the project with the same tolerance policy are not searched again
};

/**
 * Run › Search KernelBench Problem Set…: picks one of the project's sets and the budgets
 * shared over its problems, as `kfoundry kernelbench run --level-budget --level-tokens
 * --level-cost --level-time` takes them. Each problem also keeps the run panel's own limits
 * (its evaluations and wall time). The budgets last accepted are offered again.
 */
class KernelBenchSetSearchDialog : public QDialog {
    Q_OBJECT

public:
    KernelBenchSetSearchDialog(const std::vector<KernelBenchSet>& sets, int perProblemBudget, QWidget* parent = nullptr);

    KernelBenchSetSearch search() const;
    /** Keeps the budgets entered for the next time (Settings), then closes. */
    void accept() override;

private:
    void updateCount();

    std::vector<KernelBenchSet> sets_;
    QComboBox* set_;
    QLabel* count_;
    QSpinBox* evaluations_;
    QSpinBox* tokens_;
    QDoubleSpinBox* cost_;
    QSpinBox* minutes_;
    QCheckBox* skipFinished_;
};

}  // namespace kfgui
