#pragma once
// The fixed words of the engine (diagnosis status and stage, run states, stop reasons,
// compiler severities) in the user's language, in one place. A word the engine adds later
// and this table does not know is shown as the engine wrote it.
#include <QString>
#include <QStringList>

namespace kfgui {

/** ok, compile_error, load_error, runtime_error, timeout, incorrect, integrity_violation. */
QString statusText(const QString& status);
/** compile, load, correctness, integrity, timing, profile, done. */
QString stageText(const QString& stage);
/** Run states of the store and of the run controller: idle, starting, running, pausing, paused, stopping, done, stopped, failed. */
QString runStateText(const QString& state);
/** Why a search stopped: the engine's fixed reasons and those with a number in them. */
QString stopReasonText(const QString& reason);
/** error, warning, note. */
QString severityText(const QString& severity);

/** The engine words each function above knows (for tests). */
QStringList knownStatuses();
QStringList knownStages();
QStringList knownRunStates();
QStringList knownSeverities();

}  // namespace kfgui
