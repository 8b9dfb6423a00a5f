// The engine's fixed words as types (kf/vocabulary.h): every value has one spelling that
// reads back to itself, the spellings are those older projects hold, stop reasons keep
// their figures, and the layers keep to their direction (evolve knows nothing of llm).
#include <QtTest>

#include <fstream>
#include <set>

#include "kf/llm/accounting.h"
#include "kf/router.h"
#include "kf/vocabulary.h"
#include "testsupport.h"

using namespace kf;

class TestVocabulary : public QObject {
    Q_OBJECT

private slots:
    void statuses_round_trip() {
        for (Status s : kStatuses) QCOMPARE(status_from_string(to_string(s)), s);
        QCOMPARE(std::string(to_string(Status::IntegrityViolation)), std::string("integrity_violation"));
        QVERIFY(!parse_status("hand-edit"));
        QVERIFY_THROWS_EXCEPTION(Error, status_from_string("bogus"));
    }

    void diagnosis_classes_round_trip() {
        int failures = 0;
        for (DiagnosisClass c : kDiagnosisClasses) {
            QCOMPARE(diagnosis_class_from_string(to_string(c)), c);
            failures += is_failure(c);
            QCOMPARE(is_bound(c), !is_failure(c));
        }
        QCOMPARE(failures, static_cast<int>(kStatuses.size()) - 1);  // one per failed status
        for (Status s : kStatuses) {
            if (s == Status::Ok) {
                QVERIFY(!failure_class(s));
                continue;
            }
            QCOMPARE(std::string(to_string(*failure_class(s))), std::string(to_string(s)));
            QCOMPARE(status_of(*failure_class(s)), s);
        }
        QCOMPARE(status_of(DiagnosisClass::Memory), Status::Ok);
    }

    void event_kinds_round_trip() {
        std::set<std::string> spellings;
        for (EventKind k : kEventKinds) {
            QCOMPARE(parse_event_kind(to_string(k)), std::optional<EventKind>(k));
            spellings.insert(std::string(to_string(k)));
        }
        QCOMPARE(spellings.size(), kEventKinds.size());  // one spelling per kind
        // The spellings projects already hold in their events table.
        QCOMPARE(std::string(to_string(EventKind::LlmUsage)), std::string("llm_usage"));
        QCOMPARE(std::string(to_string(EventKind::Migrated)), std::string("migrated"));
        QCOMPARE(std::string(to_string(EventKind::Confirmation)), std::string("confirmation"));
        // A word this build does not know: no kind (the store reads such an event as Log).
        QVERIFY(!parse_event_kind("checkpoint"));
        QVERIFY(!parse_event_kind(""));
        QVERIFY(!parse_event_kind("Seeded"));
    }

    void members_are_classed_by_status_then_bound() {
        Member m;
        m.status = Status::Timeout;
        QCOMPARE(diagnosis_class(m), DiagnosisClass::Timeout);
        m.status = Status::Ok;
        QCOMPARE(diagnosis_class(m), DiagnosisClass::Latency);  // no bound measured
        m.bound = "memory";
        QCOMPARE(diagnosis_class(m), DiagnosisClass::Memory);
    }

    void stop_reasons_keep_their_text_and_figures() {
        const StopReason reasons[] = {
            StopReason::requested(),
            StopReason::evaluation_budget(60),
            StopReason::time_limit(30),
            StopReason::stagnation(7),
            StopReason::exhausted(),
            {StopKind::LlmCalls, 6, 6, {}},
            {StopKind::LlmTokens, 1600, 1000, {}},
            {StopKind::LlmCost, 0.25, 0.2, {}},
        };
        for (const StopReason& r : reasons) QCOMPARE(stop_reason_from_string(to_string(r)), r);
        // The wording projects already hold.
        QCOMPARE(to_string(StopReason::requested()), std::string("stopped on request"));
        QCOMPARE(to_string(StopReason::evaluation_budget(60)), std::string("evaluation budget of 60 spent"));
        QCOMPARE(to_string(StopReason::time_limit(30.7)), std::string("time limit of 30 s reached"));
        QCOMPARE(to_string(StopReason::stagnation(7)), std::string("no improvement in 7 rounds"));
        QCOMPARE(to_string(StopReason{StopKind::LlmCost, 0.25, 0.2, {}}), std::string("LLM budget spent: cost 0.2500 of 0.2000"));
        // What this build has no word for is kept as it was written.
        const StopReason other = stop_reason_from_string("budget exhausted");
        QCOMPARE(other.kind, StopKind::Other);
        QCOMPARE(to_string(other), std::string("budget exhausted"));
        // Stopped (by the user or an LLM budget) versus finished.
        QVERIFY(StopReason::requested().stopped());
        QVERIFY((StopReason{StopKind::LlmTokens, 1, 1, {}}.stopped()));
        QVERIFY(!StopReason::evaluation_budget(5).stopped());
        QVERIFY(!StopReason::exhausted().stopped());
        QVERIFY(!other.stopped());
    }

    void llm_accounting_says_which_budget_is_spent() {
        llm::Budgets b;
        b.max_calls = 2;
        llm::Accounting a(b);
        QVERIFY(!a.spent_budget());
        std::string why;
        QVERIFY(a.begin_call(why));
        a.end_call({});
        QVERIFY(a.begin_call(why));
        a.end_call({});
        const std::optional<StopReason> spent = a.spent_budget();
        QVERIFY(spent);
        QCOMPARE(spent->kind, StopKind::LlmCalls);
        QCOMPARE(to_string(*spent), std::string("LLM budget spent: 2 of 2 calls"));
        QVERIFY(a.spent(&why));
        QCOMPARE(why, to_string(*spent));
    }

    void evolve_does_not_include_llm() {
        // The LLM experts plug into the search through kf::ExpertProvider; the evolve folder
        // (its sources and its public headers) includes nothing of llm/, so the two folders do
        // not form a cycle. (scripts/check-module-graph.cmake checks every module the same way.)
        namespace fs = std::filesystem;
        const fs::path src = kftest::source_dir() / "engine" / "src";
        std::vector<fs::path> files;
        for (const auto& e : fs::recursive_directory_iterator(src / "evolve"))
            if (e.is_regular_file()) files.push_back(e.path());
        files.push_back(src / "diagnosis" / "include" / "kf" / "vocabulary.h");
        for (const auto& f : files) {
            std::ifstream in(f);
            QVERIFY2(in.good(), f.string().c_str());
            int lines = 0;
            for (std::string line; std::getline(in, line); ++lines) {
                // A preprocessor line that brings in an llm header.
                const bool directive = line.find_first_not_of(" \t") == line.find('#') && line.find('#') != std::string::npos;
                QVERIFY2(!(directive && line.find("\"kf/llm") != std::string::npos), (f.string() + ": " + line).c_str());
            }
            QVERIFY2(lines > 0, f.string().c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestVocabulary)
#include "test_vocabulary.moc"
