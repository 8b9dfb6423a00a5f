#pragma once
#include <QDialog>

#include <vector>

#include "kf/kernelbench.h"
#include "project/kernelbenchset.h"

class QLabel;
class QTableWidget;

namespace kfgui {

/**
 * KernelBench's metrics over a project's problems, as `kfoundry kernelbench report` gives them
 * (kf::kb::make_report over the latest run of each problem): correctness, fast_p against eager
 * PyTorch and torch.compile, geometric-mean speedups, and one row per problem. A problem of the
 * project's problem sets that was never run counts as a failure ("not run"), as KernelBench
 * scores a missing problem. Refresh reads the project again (the app refreshes an open report
 * when a run ends); Copy as Markdown and Save JSON… give the CLI's two formats.
 */
class KernelBenchReportDialog : public QDialog {
    Q_OBJECT

public:
    explicit KernelBenchReportDialog(QWidget* parent = nullptr);

    /** The project to report on and its problem sets (whose problems are all counted). */
    void setProject(const QString& projectDir, const std::vector<KernelBenchSet>& sets);
    /** Reads the project again; false, with the reason shown, where it cannot be read. */
    bool refresh();

    const kf::kb::Report& report() const { return report_; }
    QString markdown() const;
    /** Writes the report's JSON (kf::kb::to_json) to `path`; false with `error` on failure. */
    bool saveJson(const QString& path, QString* error = nullptr) const;

private:
    void display(const kf::kb::Report& r);
    void saveJsonDialog();

    QString projectDir_;
    std::vector<KernelBenchSet> sets_;
    kf::kb::Report report_;
    QLabel* summary_;
    QTableWidget* fastP_;
    QTableWidget* rows_;
};

}  // namespace kfgui
