#pragma once
// Value types that cross from the engine thread to the GUI thread in queued signals.
#include <QList>
#include <QMetaType>
#include <QString>

#include "kf/vocabulary.h"

namespace kf {
struct SearchEvent;
}

namespace kfgui {

/**
 * One engine event (kf::SearchEvent) in Qt types. The engine thread fills in what the event
 * itself carries and, for evaluated candidates, the generation, timing and roofline read from
 * its own project store, so that the GUI never has to look them up per event.
 */
struct EngineEvent {
    kf::EventKind kind = kf::EventKind::Log;
    int island = -1;
    qint64 member = 0;
    QString message;
    QString status;  ///< ok, compile_error, incorrect, ... (seeded / evaluated)
    kf::StopReason stop;  ///< stopped: why
    double fitness = 0;
    double gain = 0;
    QString expert;
    int generation = -1;     ///< -1: unknown
    double medianMs = -1;    ///< timing.median_ms; -1: not timed
    double gbps = -1;        ///< roofline.achieved_gbps; -1: unknown
    QString bound;           ///< roofline.bound
    // llm_usage: the run's LLM totals so far.
    qint64 llmCalls = 0;
    qint64 llmInputTokens = 0;
    qint64 llmOutputTokens = 0;
    double llmCost = 0;

    /** A seeded or evaluated candidate: one row of the population. */
    bool isEvaluation() const;
};

using EngineEventList = QList<EngineEvent>;

/** The fields the event itself carries; nothing is looked up. */
EngineEvent toEngineEvent(const kf::SearchEvent& e);

/** What a run came to. */
struct RunOutcome {
    qint64 runId = 0;
    kf::RunState state = kf::RunState::Done;  ///< Done, Stopped or Failed
    kf::StopReason reason;  ///< why it ended; a failure's message as StopKind::Other
    int evaluations = 0;
    double bestFitness = 0;
    qint64 bestCandidate = 0;
};

}  // namespace kfgui

Q_DECLARE_METATYPE(kfgui::EngineEvent)
Q_DECLARE_METATYPE(kfgui::RunOutcome)
Q_DECLARE_METATYPE(kf::RunState)
