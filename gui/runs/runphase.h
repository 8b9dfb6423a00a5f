#pragma once
// Where the app's run controller is, as a type: the engine's run states and the steps between
// them that only the app knows.
#include <QString>

#include "kf/vocabulary.h"

namespace kfgui {

/**
 * The run controller's state: no run (Idle), one of the engine's run states (kf::RunState:
 * Running, Paused, Done, Stopped, Failed), or a step that only the app knows: a run asked for
 * and not started yet (Starting), a pause or a stop asked for and not reached yet (Pausing,
 * Stopping: the batch in flight finishes first).
 */
enum class RunPhase { Idle, Starting, Running, Pausing, Paused, Stopping, Done, Stopped, Failed };

/** The phase an engine run state stands for. */
RunPhase runPhase(kf::RunState state);
/** The phase in the user's language (the engine's states as runStateText() shows them). */
QString runPhaseText(RunPhase phase);

}  // namespace kfgui
