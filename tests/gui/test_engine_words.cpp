// The engine's fixed words (diagnosis status and stage, run states, stop reasons, compiler
// severities) shown in the user's language from one table: every kf::Status, kf::Stage,
// kf::RunState and kf::Severity is in it (and every phase of the run controller), each goes
// through the translator, and unknown words pass unchanged.
#include <QtTest>

#include "enginewords.h"
#include "kf/diagnosis.h"
#include "runs/runphase.h"

namespace {

/** Translates every string of the engine-words table into "«text»". */
class MarkingTranslator : public QTranslator {
public:
    bool isEmpty() const override { return false; }
    QString translate(const char* context, const char* source, const char*, int) const override {
        if (QLatin1String(context) != QLatin1String("kfgui::EngineWords")) return {};
        return QStringLiteral("«") + QString::fromUtf8(source) + QStringLiteral("»");
    }
};

QString word(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

class TestEngineWords : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QCoreApplication::installTranslator(&translator_); }
    void cleanupTestCase() { QCoreApplication::removeTranslator(&translator_); }

    void everyStatusIsTranslated() {
        const int last = static_cast<int>(kf::Status::IntegrityViolation);
        QCOMPARE(kfgui::knownStatuses().size(), last + 1);
        for (int i = 0; i <= last; ++i) {
            const QString s = word(kf::to_string(static_cast<kf::Status>(i)));
            QVERIFY2(kfgui::knownStatuses().contains(s), qPrintable(s));
            const QString shown = kfgui::statusText(s);
            QVERIFY2(shown.startsWith(QStringLiteral("«")) && shown.endsWith(QStringLiteral("»")), qPrintable(shown));
        }
        QCOMPARE(kfgui::statusText(QStringLiteral("compile_error")), QStringLiteral("«compile error»"));
    }

    void everyStageIsTranslated() {
        const int last = static_cast<int>(kf::Stage::Done);
        QCOMPARE(kfgui::knownStages().size(), last + 1);
        for (int i = 0; i <= last; ++i) {
            const QString s = word(kf::to_string(static_cast<kf::Stage>(i)));
            QVERIFY2(kfgui::knownStages().contains(s), qPrintable(s));
            QCOMPARE(kfgui::stageText(s), QStringLiteral("«") + s + QStringLiteral("»"));
        }
    }

    void everySeverityIsTranslated() {
        for (kf::Severity v : {kf::Severity::Error, kf::Severity::Warning, kf::Severity::Note}) {
            const QString s = word(kf::to_string(v));
            QVERIFY2(kfgui::knownSeverities().contains(s), qPrintable(s));
            QCOMPARE(kfgui::severityText(s), QStringLiteral("«") + s + QStringLiteral("»"));
        }
    }

    void everyRunStateAndPhaseIsTranslated() {
        // The engine's states are shown by value in their own words; the run controller's
        // phases include them and add the steps only the app knows.
        for (kf::RunState st : kf::kRunStates) {
            QCOMPARE(kfgui::runStateText(st), QStringLiteral("«") + word(kf::to_string(st)) + QStringLiteral("»"));
            QCOMPARE(kfgui::runPhaseText(kfgui::runPhase(st)), kfgui::runStateText(st));
        }
        const int last = static_cast<int>(kfgui::RunPhase::Failed);
        for (int i = 0; i <= last; ++i) {
            const QString shown = kfgui::runPhaseText(static_cast<kfgui::RunPhase>(i));
            QVERIFY2(shown.startsWith(QStringLiteral("«")) && shown.endsWith(QStringLiteral("»")), qPrintable(shown));
        }
        QCOMPARE(kfgui::runPhaseText(kfgui::RunPhase::Stopping), QStringLiteral("«stopping after the batch in flight…»"));
    }

    /** Each reason a problem of a KernelBench set is skipped is one whole sentence, the set's
     *  budgets named in words too. */
    void everyProblemSkipIsOneSentence() {
        using Why = kf::kb::ProblemSkip::Why;
        const QString key = QStringLiteral("level1/1_Scale");
        QCOMPARE(kfgui::problemSkipText(key, {Why::Unsupported, "Level 4 problems are whole Hugging Face models"}),
                 QStringLiteral("«level1/1_Scale (not supported)»"));
        QCOMPARE(kfgui::problemSkipText(key, {Why::Finished, {}}), QStringLiteral("«level1/1_Scale (already finished)»"));
        QCOMPARE(kfgui::problemSkipText(key, {Why::BudgetSpent, "tokens"}),
                 QStringLiteral("«level1/1_Scale (the set's «tokens» budget is spent)»"));
        QCOMPARE(kfgui::problemSkipText(key, {Why::BudgetSpent, "calls"}),
                 QStringLiteral("«level1/1_Scale (the set's «LLM calls» budget is spent)»"));
        // The engine's words for a log say the same.
        QCOMPARE(kf::kb::ProblemSkip({Why::BudgetSpent, "tokens"}).message(), std::string("the set's tokens budget is spent"));
        QCOMPARE(kf::kb::ProblemSkip({Why::Finished, {}}).message(), std::string("already finished"));
    }

    void everyStopKindIsTranslated() {
        // Every kind but Other has a text, and it is the engine's own wording once the
        // figures are filled in (the marking translator only wraps it).
        const QList<kf::StopKind> known = kfgui::knownStopKinds();
        QCOMPARE(known.size(), static_cast<int>(kf::StopKind::Other));
        const kf::StopReason reasons[] = {
            kf::StopReason::requested(),
            kf::StopReason::evaluation_budget(60),
            kf::StopReason::time_limit(30),
            kf::StopReason::stagnation(7),
            kf::StopReason::exhausted(),
            {kf::StopKind::LlmCalls, 6, 6, {}},
            {kf::StopKind::LlmTokens, 1600, 1000, {}},
            {kf::StopKind::LlmCost, 0.25, 0.2, {}},
        };
        for (const kf::StopReason& r : reasons) {
            QVERIFY(known.contains(r.kind));
            const QString engine = QString::fromStdString(kf::to_string(r));
            QCOMPARE(kfgui::stopReasonText(r), QStringLiteral("«") + engine + QStringLiteral("»"));
        }
        QCOMPARE(kfgui::stopReasonText(kf::StopReason::evaluation_budget(60)), QStringLiteral("«evaluation budget of 60 spent»"));
        QCOMPARE(kfgui::stopReasonText({kf::StopKind::LlmCalls, 6, 6, {}}), QStringLiteral("«LLM budget spent: 6 of 6 calls»"));
    }

    void storedReasonsReadBackTyped() {
        // A run stored by an older build keeps only the text: the engine reads it back typed.
        const kf::StopReason r = kf::stop_reason_from_string("time limit of 30 s reached");
        QCOMPARE(r.kind, kf::StopKind::TimeLimit);
        QCOMPARE(kfgui::stopReasonText(r), QStringLiteral("«time limit of 30 s reached»"));
        QCOMPARE(kf::stop_reason_from_string("LLM budget spent: cost 0.2500 of 0.2000").kind, kf::StopKind::LlmCost);
        QCOMPARE(kfgui::stopReasonText(kf::stop_reason_from_string("stopped on request")), QStringLiteral("«stopped on request»"));
    }

    void unknownWordsPassUnchanged() {
        QCOMPARE(kfgui::statusText(QStringLiteral("brand_new_status")), QStringLiteral("brand_new_status"));
        QCOMPARE(kfgui::stageText(QStringLiteral("link")), QStringLiteral("link"));
        QCOMPARE(kfgui::stopReasonText(kf::stop_reason_from_string("the engine thread crashed")),
                 QStringLiteral("the engine thread crashed"));
        QCOMPARE(kfgui::statusText(kf::Status::Timeout), QStringLiteral("«timeout»"));
        QCOMPARE(kfgui::severityText(QStringLiteral("remark")), QStringLiteral("remark"));
    }

private:
    MarkingTranslator translator_;
};

QTEST_GUILESS_MAIN(TestEngineWords)
#include "test_engine_words.moc"
