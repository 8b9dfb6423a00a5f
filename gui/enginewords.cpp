#include "enginewords.h"

#include <QCoreApplication>

namespace kfgui {

namespace {

struct Word {
    const char* key;
    const char* text;
};

constexpr const char* kContext = "kfgui::EngineWords";

struct StatusWord {
    kf::Status status;
    const char* text;
};

const StatusWord kStatuses[] = {
    {kf::Status::Ok, QT_TRANSLATE_NOOP("kfgui::EngineWords", "correct")},
    {kf::Status::CompileError, QT_TRANSLATE_NOOP("kfgui::EngineWords", "compile error")},
    {kf::Status::LoadError, QT_TRANSLATE_NOOP("kfgui::EngineWords", "load error")},
    {kf::Status::RuntimeError, QT_TRANSLATE_NOOP("kfgui::EngineWords", "runtime error")},
    {kf::Status::Timeout, QT_TRANSLATE_NOOP("kfgui::EngineWords", "timeout")},
    {kf::Status::Incorrect, QT_TRANSLATE_NOOP("kfgui::EngineWords", "incorrect")},
    {kf::Status::IntegrityViolation, QT_TRANSLATE_NOOP("kfgui::EngineWords", "integrity violation")},
};

const Word kStages[] = {
    {"compile", QT_TRANSLATE_NOOP("kfgui::EngineWords", "compile")},
    {"load", QT_TRANSLATE_NOOP("kfgui::EngineWords", "load")},
    {"correctness", QT_TRANSLATE_NOOP("kfgui::EngineWords", "correctness")},
    {"integrity", QT_TRANSLATE_NOOP("kfgui::EngineWords", "integrity")},
    {"timing", QT_TRANSLATE_NOOP("kfgui::EngineWords", "timing")},
    {"profile", QT_TRANSLATE_NOOP("kfgui::EngineWords", "profile")},
    {"done", QT_TRANSLATE_NOOP("kfgui::EngineWords", "done")},
};

struct RunStateWord {
    kf::RunState state;
    const char* text;
};

const RunStateWord kRunStates[] = {
    {kf::RunState::Running, QT_TRANSLATE_NOOP("kfgui::EngineWords", "running")},
    {kf::RunState::Paused, QT_TRANSLATE_NOOP("kfgui::EngineWords", "paused")},
    {kf::RunState::Done, QT_TRANSLATE_NOOP("kfgui::EngineWords", "done")},
    {kf::RunState::Stopped, QT_TRANSLATE_NOOP("kfgui::EngineWords", "stopped")},
    {kf::RunState::Failed, QT_TRANSLATE_NOOP("kfgui::EngineWords", "failed")},
};

const Word kSeverities[] = {
    {"error", QT_TRANSLATE_NOOP("kfgui::EngineWords", "error")},
    {"warning", QT_TRANSLATE_NOOP("kfgui::EngineWords", "warning")},
    {"note", QT_TRANSLATE_NOOP("kfgui::EngineWords", "note")},
};

/** Which figures of a stop reason its text shows, as %1 (and %2). */
enum class Figures { None, Used, Limit, UsedThenLimit };

/** Why a search stopped, by kind. */
struct StopWord {
    kf::StopKind kind;
    Figures figures;
    const char* text;
};

const StopWord kStopReasons[] = {
    {kf::StopKind::Requested, Figures::None, QT_TRANSLATE_NOOP("kfgui::EngineWords", "stopped on request")},
    {kf::StopKind::EvaluationBudget, Figures::Limit, QT_TRANSLATE_NOOP("kfgui::EngineWords", "evaluation budget of %1 spent")},
    {kf::StopKind::TimeLimit, Figures::Limit, QT_TRANSLATE_NOOP("kfgui::EngineWords", "time limit of %1 s reached")},
    {kf::StopKind::Stagnation, Figures::Used, QT_TRANSLATE_NOOP("kfgui::EngineWords", "no improvement in %1 rounds")},
    {kf::StopKind::Exhausted, Figures::None,
     QT_TRANSLATE_NOOP("kfgui::EngineWords", "search space exhausted: no expert can propose a new child on any island")},
    {kf::StopKind::LlmCalls, Figures::UsedThenLimit, QT_TRANSLATE_NOOP("kfgui::EngineWords", "LLM budget spent: %1 of %2 calls")},
    {kf::StopKind::LlmTokens, Figures::UsedThenLimit, QT_TRANSLATE_NOOP("kfgui::EngineWords", "LLM budget spent: %1 of %2 tokens")},
    {kf::StopKind::LlmCost, Figures::UsedThenLimit, QT_TRANSLATE_NOOP("kfgui::EngineWords", "LLM budget spent: cost %1 of %2")},
};

template <std::size_t N>
QString lookup(const Word (&words)[N], const QString& key) {
    for (const Word& w : words)
        if (key == QLatin1String(w.key)) return QCoreApplication::translate(kContext, w.text);
    return key;
}

template <std::size_t N>
QStringList keys(const Word (&words)[N]) {
    QStringList out;
    for (const Word& w : words) out << QLatin1String(w.key);
    return out;
}

}  // namespace

QString statusWord(kf::Status status) {
    const std::string_view word = kf::to_string(status);
    return QString::fromLatin1(word.data(), static_cast<qsizetype>(word.size()));
}

QString statusText(const QString& status) {
    const std::optional<kf::Status> typed = kf::parse_status(status.toStdString());
    return typed ? statusText(*typed) : status;
}
QString stageText(const QString& stage) { return lookup(kStages, stage); }
QString severityText(const QString& severity) { return lookup(kSeverities, severity); }

QString statusText(kf::Status status) {
    for (const StatusWord& w : kStatuses)
        if (w.status == status) return QCoreApplication::translate(kContext, w.text);
    return statusWord(status);
}

QString runStateText(kf::RunState state) {
    for (const RunStateWord& w : kRunStates)
        if (w.state == state) return QCoreApplication::translate(kContext, w.text);
    const std::string_view word = kf::to_string(state);
    return QString::fromLatin1(word.data(), static_cast<qsizetype>(word.size()));
}

QString stopReasonText(const kf::StopReason& reason) {
    const bool money = reason.kind == kf::StopKind::LlmCost;
    auto figure = [&](double v) { return money ? QString::number(v, 'f', 4) : QString::number(static_cast<qint64>(v)); };
    for (const StopWord& w : kStopReasons) {
        if (w.kind != reason.kind) continue;
        const QString text = QCoreApplication::translate(kContext, w.text);
        switch (w.figures) {
        case Figures::None: return text;
        case Figures::Used: return text.arg(figure(reason.used));
        case Figures::Limit: return text.arg(figure(reason.limit));
        case Figures::UsedThenLimit: return text.arg(figure(reason.used), figure(reason.limit));
        }
        return text;
    }
    return QString::fromStdString(reason.text);
}

namespace {

/** The set's budget that share_level_budgets names, in words. */
QString budgetName(const std::string& name) {
    if (name == "evaluations") return QCoreApplication::translate("kfgui::EngineWords", "evaluations");
    if (name == "tokens") return QCoreApplication::translate("kfgui::EngineWords", "tokens");
    if (name == "cost") return QCoreApplication::translate("kfgui::EngineWords", "cost");
    if (name == "calls") return QCoreApplication::translate("kfgui::EngineWords", "LLM calls");
    if (name == "time") return QCoreApplication::translate("kfgui::EngineWords", "wall time");
    return QString::fromStdString(name);
}

}  // namespace

QString problemSkipText(const QString& key, const kf::kb::ProblemSkip& skip) {
    using Why = kf::kb::ProblemSkip::Why;
    switch (skip.why) {
    case Why::Unsupported: return QCoreApplication::translate("kfgui::EngineWords", "%1 (not supported)").arg(key);
    case Why::Finished: return QCoreApplication::translate("kfgui::EngineWords", "%1 (already finished)").arg(key);
    case Why::BudgetSpent:
        return QCoreApplication::translate("kfgui::EngineWords", "%1 (the set's %2 budget is spent)").arg(key, budgetName(skip.detail));
    }
    return key;
}

QStringList knownStatuses() {
    QStringList out;
    for (const StatusWord& w : kStatuses) out << statusWord(w.status);
    return out;
}
QStringList knownStages() { return keys(kStages); }
QStringList knownSeverities() { return keys(kSeverities); }

QList<kf::StopKind> knownStopKinds() {
    QList<kf::StopKind> out;
    for (const StopWord& w : kStopReasons) out << w.kind;
    return out;
}

}  // namespace kfgui
