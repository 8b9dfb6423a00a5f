#include "enginewords.h"

#include <QCoreApplication>
#include <QRegularExpression>

namespace kfgui {

namespace {

struct Word {
    const char* key;
    const char* text;
};

constexpr const char* kContext = "kfgui::EngineWords";

const Word kStatuses[] = {
    {"ok", QT_TRANSLATE_NOOP("kfgui::EngineWords", "correct")},
    {"compile_error", QT_TRANSLATE_NOOP("kfgui::EngineWords", "compile error")},
    {"load_error", QT_TRANSLATE_NOOP("kfgui::EngineWords", "load error")},
    {"runtime_error", QT_TRANSLATE_NOOP("kfgui::EngineWords", "runtime error")},
    {"timeout", QT_TRANSLATE_NOOP("kfgui::EngineWords", "timeout")},
    {"incorrect", QT_TRANSLATE_NOOP("kfgui::EngineWords", "incorrect")},
    {"integrity_violation", QT_TRANSLATE_NOOP("kfgui::EngineWords", "integrity violation")},
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

const Word kRunStates[] = {
    {"idle", QT_TRANSLATE_NOOP("kfgui::EngineWords", "idle")},
    {"starting", QT_TRANSLATE_NOOP("kfgui::EngineWords", "starting…")},
    {"running", QT_TRANSLATE_NOOP("kfgui::EngineWords", "running")},
    {"pausing", QT_TRANSLATE_NOOP("kfgui::EngineWords", "pausing after the batch in flight…")},
    {"paused", QT_TRANSLATE_NOOP("kfgui::EngineWords", "paused")},
    {"stopping", QT_TRANSLATE_NOOP("kfgui::EngineWords", "stopping after the batch in flight…")},
    {"done", QT_TRANSLATE_NOOP("kfgui::EngineWords", "done")},
    {"stopped", QT_TRANSLATE_NOOP("kfgui::EngineWords", "stopped")},
    {"failed", QT_TRANSLATE_NOOP("kfgui::EngineWords", "failed")},
};

const Word kSeverities[] = {
    {"error", QT_TRANSLATE_NOOP("kfgui::EngineWords", "error")},
    {"warning", QT_TRANSLATE_NOOP("kfgui::EngineWords", "warning")},
    {"note", QT_TRANSLATE_NOOP("kfgui::EngineWords", "note")},
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

QString statusText(const QString& status) { return lookup(kStatuses, status); }
QString stageText(const QString& stage) { return lookup(kStages, stage); }
QString runStateText(const QString& state) { return lookup(kRunStates, state); }
QString severityText(const QString& severity) { return lookup(kSeverities, severity); }

QString stopReasonText(const QString& reason) {
    if (reason == QLatin1String("stopped on request")) return QCoreApplication::translate("kfgui::EngineWords", "stopped on request");
    if (reason == QLatin1String("search space exhausted: no expert can propose a new child on any island"))
        return QCoreApplication::translate("kfgui::EngineWords", "search space exhausted: no expert can propose a new child on any island");
    static const QRegularExpression budget(QStringLiteral("^evaluation budget of (\\d+) spent$"));
    static const QRegularExpression time(QStringLiteral("^time limit of (\\d+) s reached$"));
    static const QRegularExpression stale(QStringLiteral("^no improvement in (\\d+) rounds$"));
    static const QRegularExpression calls(QStringLiteral("^LLM budget spent: (\\d+) of (\\d+) calls$"));
    static const QRegularExpression tokens(QStringLiteral("^LLM budget spent: (\\d+) of (\\d+) tokens$"));
    static const QRegularExpression cost(QStringLiteral("^LLM budget spent: cost ([0-9.]+) of ([0-9.]+)$"));
    QRegularExpressionMatch m;
    if ((m = budget.match(reason)).hasMatch())
        return QCoreApplication::translate("kfgui::EngineWords", "evaluation budget of %1 spent").arg(m.captured(1));
    if ((m = time.match(reason)).hasMatch())
        return QCoreApplication::translate("kfgui::EngineWords", "time limit of %1 s reached").arg(m.captured(1));
    if ((m = stale.match(reason)).hasMatch())
        return QCoreApplication::translate("kfgui::EngineWords", "no improvement in %1 rounds").arg(m.captured(1));
    if ((m = calls.match(reason)).hasMatch())
        return QCoreApplication::translate("kfgui::EngineWords", "LLM budget spent: %1 of %2 calls").arg(m.captured(1), m.captured(2));
    if ((m = tokens.match(reason)).hasMatch())
        return QCoreApplication::translate("kfgui::EngineWords", "LLM budget spent: %1 of %2 tokens").arg(m.captured(1), m.captured(2));
    if ((m = cost.match(reason)).hasMatch())
        return QCoreApplication::translate("kfgui::EngineWords", "LLM budget spent: cost %1 of %2").arg(m.captured(1), m.captured(2));
    return reason;
}

QStringList knownStatuses() { return keys(kStatuses); }
QStringList knownStages() { return keys(kStages); }
QStringList knownRunStates() { return keys(kRunStates); }
QStringList knownSeverities() { return keys(kSeverities); }

}  // namespace kfgui
