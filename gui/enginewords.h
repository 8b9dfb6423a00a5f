#pragma once
// The fixed words of the engine (diagnosis status and stage, run states, stop reasons,
// compiler severities) in the user's language, in one place. Typed words (kf/vocabulary.h)
// are looked up by value; a word the engine adds later and this table does not know is
// shown as the engine wrote it.
#include <QList>
#include <QString>
#include <QStringList>

#include "kf/kernelbench_search.h"
#include "kf/vocabulary.h"

namespace kfgui {

/** ok, compile_error, load_error, runtime_error, timeout, incorrect, integrity_violation. */
QString statusText(const QString& status);
/** compile, load, correctness, integrity, timing, profile, done. */
QString stageText(const QString& stage);
/** running, paused, done, stopped, failed (the run controller's own steps: runPhaseText()). */
QString runStateText(kf::RunState state);
QString statusText(kf::Status status);
/** The engine's own word for a status ("compile_error"), as the store and the events hold it. */
QString statusWord(kf::Status status);
/** Why a search stopped, from its kind and figures; StopKind::Other shows the engine's text. */
QString stopReasonText(const kf::StopReason& reason);
/** A KernelBench problem of a set that was not searched (`key`, e.g. "level1/1_Scale"), with
 *  why, as one sentence: "level1/1_Scale (already finished)". */
QString problemSkipText(const QString& key, const kf::kb::ProblemSkip& skip);
/** error, warning, note. */
QString severityText(const QString& severity);

/** The engine words each function above knows (for tests). */
QStringList knownStatuses();
QStringList knownStages();
QStringList knownSeverities();
/** The stop kinds with a translated text (every kind but StopKind::Other). */
QList<kf::StopKind> knownStopKinds();

}  // namespace kfgui
