#pragma once
#include <QWidget>

namespace kfgui {

/** Two candidates side by side (source diff and metrics), or a whole run on a roofline. */
class CompareView : public QWidget {
    Q_OBJECT

public:
    explicit CompareView(QWidget* parent = nullptr);

    /** Diffs and compares candidates `a` and `b` of the project in `projectDir`. */
    void compare(const QString& projectDir, qint64 a, qint64 b);
    /** Plots every evaluated candidate of run `runId` on a roofline. */
    void showRun(const QString& projectDir, qint64 runId);

Q_SIGNALS:
    /** A candidate was picked (clicked on the roofline). */
    void candidateActivated(qint64 id);
};

}  // namespace kfgui
