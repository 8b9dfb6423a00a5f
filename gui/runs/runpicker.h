#pragma once
#include <QComboBox>
#include <QList>
#include <QString>

#include "kf/vocabulary.h"

template <typename T>
class QFutureWatcher;

namespace kfgui {

/** One line of the run picker, read from the store off the GUI thread. */
struct RunSummary {
    qint64 id = 0;
    QString created;  ///< ISO-8601 UTC
    QString task;
    kf::RunState state = kf::RunState::Running;
    int evaluations = 0;
    double best = 0;
    bool hasBest = false;
};

/** The runs of a project, newest first (opens its own store connection; throws kf::Error). */
QList<RunSummary> readRunSummaries(const QString& projectDir);

/**
 * The runs of the project, newest first, each with its date, task, state, evaluations and
 * best speedup; the run in progress is marked live. The list is read on a pool thread and
 * filled in when it arrives. Choosing one asks the search view to show it (runChosen);
 * refreshing keeps the choice when it still exists.
 */
class RunPicker : public QComboBox {
    Q_OBJECT

public:
    explicit RunPicker(QWidget* parent = nullptr);
    ~RunPicker() override;

    /** Re-reads the runs of the project in the background; `liveRun`: the run in progress, 0: none. */
    void refresh(const QString& projectDir, qint64 liveRun = 0);
    /** Empties the list (no project). */
    void reset();
    /** Selects a run without emitting runChosen; when it is not listed yet, once it is. */
    bool selectRun(qint64 runId);
    /** The run shown; 0 when none. */
    qint64 selectedRun() const;
    qint64 liveRun() const { return liveRun_; }
    /** True while the live run is the one shown. */
    bool showsLiveRun() const { return liveRun_ != 0 && selectedRun() == liveRun_; }

Q_SIGNALS:
    /** The user chose a run. */
    void runChosen(qint64 runId);
    /** A refresh has filled the list. */
    void refreshed();

private:
    void fill(const QList<RunSummary>& runs);

    qint64 liveRun_ = 0;
    qint64 wanted_ = 0;        ///< to select once listed
    quint64 generation_ = 0;   ///< answers to older refreshes are dropped
    QFutureWatcher<QList<RunSummary>>* watcher_ = nullptr;
};

}  // namespace kfgui
