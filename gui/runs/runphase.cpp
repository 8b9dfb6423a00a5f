#include "runs/runphase.h"

#include <QCoreApplication>

#include "enginewords.h"

namespace kfgui {

namespace {

/** The steps only the app knows, in the engine words' translation context. */
struct PhaseWord {
    RunPhase phase;
    const char* text;
};

const PhaseWord kAppPhases[] = {
    {RunPhase::Idle, QT_TRANSLATE_NOOP("kfgui::EngineWords", "idle")},
    {RunPhase::Starting, QT_TRANSLATE_NOOP("kfgui::EngineWords", "starting…")},
    {RunPhase::Pausing, QT_TRANSLATE_NOOP("kfgui::EngineWords", "pausing after the batch in flight…")},
    {RunPhase::Stopping, QT_TRANSLATE_NOOP("kfgui::EngineWords", "stopping after the batch in flight…")},
};

/** The engine's state a phase is; nullopt for the steps only the app knows. */
std::optional<kf::RunState> engineState(RunPhase phase) {
    switch (phase) {
    case RunPhase::Running: return kf::RunState::Running;
    case RunPhase::Paused: return kf::RunState::Paused;
    case RunPhase::Done: return kf::RunState::Done;
    case RunPhase::Stopped: return kf::RunState::Stopped;
    case RunPhase::Failed: return kf::RunState::Failed;
    case RunPhase::Idle:
    case RunPhase::Starting:
    case RunPhase::Pausing:
    case RunPhase::Stopping: return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace

RunPhase runPhase(kf::RunState state) {
    switch (state) {
    case kf::RunState::Running: return RunPhase::Running;
    case kf::RunState::Paused: return RunPhase::Paused;
    case kf::RunState::Done: return RunPhase::Done;
    case kf::RunState::Stopped: return RunPhase::Stopped;
    case kf::RunState::Failed: return RunPhase::Failed;
    }
    return RunPhase::Failed;
}

QString runPhaseText(RunPhase phase) {
    if (const std::optional<kf::RunState> state = engineState(phase)) return runStateText(*state);
    for (const PhaseWord& w : kAppPhases)
        if (w.phase == phase) return QCoreApplication::translate("kfgui::EngineWords", w.text);
    return {};
}

}  // namespace kfgui
