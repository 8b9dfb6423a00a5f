#pragma once
#include <QElapsedTimer>
#include <QWidget>

#include "runs/engineevent.h"

class QLabel;
class QPlainTextEdit;
class QSplitter;
class QTimer;

namespace kf {
class ProjectView;
}

namespace kfgui {

class LineageView;
class OutcomeChart;
class PopulationView;
class RunPicker;
class SpeedupChart;

/**
 * The live views of a search: best speedup per island, outcomes over time, the population
 * table and the lineage of the selected candidate. Events are buffered as they arrive and
 * applied to every view together on a 150 ms timer, so that a flood of events costs one
 * model insertion and one chart update per tick.
 */
class SearchView : public QWidget {
    Q_OBJECT

public:
    static constexpr int kRefreshMs = 150;
    /** At most this many events reach the views in one go (see applyPending). */
    static constexpr int kMaxEventsPerTick = 50;

    explicit SearchView(QWidget* parent = nullptr);

    /** Empties every view (a new run starts). */
    void clear();
    /** Buffers events; they reach the views on the next tick. */
    void appendEvents(const kfgui::EngineEventList& events);
    /** Applies the buffered events now (a large backlog in slices, between event-loop turns). */
    void applyPending();
    /** Events received but not yet shown. */
    int pendingCount() const { return static_cast<int>(pending_.size()); }
    /** Shows a finished or earlier run from the store (the GUI's own connection). */
    void loadRun(const kf::ProjectView& store, qint64 runId);
    void setSummary(const QString& text);
    /** The run's log: the engine's log lines, improvements, migrations and its stop. */
    QString logText() const;
    /** "LLM: n calls, ... tokens, cost ..." while the run uses LLM experts; empty otherwise. */
    QString llmUsageText() const;

    SpeedupChart* speedupChart() const { return speedup_; }
    OutcomeChart* outcomeChart() const { return outcomes_; }
    PopulationView* population() const { return population_; }
    LineageView* lineage() const { return lineage_; }
    /** Which run the view shows: the live one or an earlier one of the project. */
    RunPicker* runPicker() const { return picker_; }

    QList<QByteArray> saveSplitters() const;
    void restoreSplitters(const QList<QByteArray>& states);

private:
    EngineEventList pending_;
    QElapsedTimer chartClock_;  ///< since the charts were last redrawn
    QTimer* timer_;
    QLabel* summary_;
    RunPicker* picker_;
    QLabel* llmUsage_;
    QPlainTextEdit* log_;
    SpeedupChart* speedup_;
    OutcomeChart* outcomes_;
    PopulationView* population_;
    LineageView* lineage_;
    QSplitter* vertical_;
    QSplitter* charts_;
    QSplitter* table_;
};

}  // namespace kfgui
