#pragma once
#include <QWidget>

class QComboBox;
class QLabel;
class QTabWidget;
class QTableView;

namespace kfgui {

class DiffModel;
class MetricsComparison;
class RooflineChart;

/** Two candidates side by side (source diff and metrics), or a whole run on a roofline. */
class CompareView : public QWidget {
    Q_OBJECT

public:
    explicit CompareView(QWidget* parent = nullptr);

    /** Diffs and compares candidates `a` and `b` of the project in `projectDir`. */
    void compare(const QString& projectDir, qint64 a, qint64 b);
    /** Plots every evaluated candidate of run `runId` on a roofline. */
    void showRun(const QString& projectDir, qint64 runId);

    DiffModel* diffModel() const { return diff_; }
    MetricsComparison* metrics() const { return metrics_; }
    RooflineChart* roofline() const { return roofline_; }
    /** The tab shown now: 0 diff, 1 metrics, 2 roofline. */
    int currentPage() const;

Q_SIGNALS:
    /** A candidate was picked (clicked on the roofline). */
    void candidateActivated(qint64 id);

private:
    void showError(const QString& message);

    QTabWidget* tabs_;
    QLabel* summary_;
    QComboBox* mode_;
    DiffModel* diff_;
    QTableView* diffTable_;
    MetricsComparison* metrics_;
    RooflineChart* roofline_;
};

}  // namespace kfgui
