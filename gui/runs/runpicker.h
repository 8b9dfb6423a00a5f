#pragma once
#include <QComboBox>

namespace kf {
class ProjectStore;
}

namespace kfgui {

/**
 * The runs of the project, newest first, each with its date, task, state, evaluations and
 * best speedup; the run in progress is marked live. Choosing one asks the search view to
 * show it (runChosen); refreshing keeps the choice when it still exists.
 */
class RunPicker : public QComboBox {
    Q_OBJECT

public:
    explicit RunPicker(QWidget* parent = nullptr);

    /** Re-reads the runs from the store (the GUI's connection); `liveRun`: the run in progress, 0: none. */
    void refresh(kf::ProjectStore& store, qint64 liveRun = 0);
    /** Selects a run without emitting runChosen; false when it is not listed. */
    bool selectRun(qint64 runId);
    /** The run shown; 0 when none. */
    qint64 selectedRun() const;
    qint64 liveRun() const { return liveRun_; }
    /** True while the live run is the one shown. */
    bool showsLiveRun() const { return liveRun_ != 0 && selectedRun() == liveRun_; }

Q_SIGNALS:
    /** The user chose a run. */
    void runChosen(qint64 runId);

private:
    qint64 liveRun_ = 0;
};

}  // namespace kfgui
