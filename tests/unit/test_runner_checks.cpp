// The judge's process checks (engine/src/worker/runner_checks.cpp), decided from what it saw
// of a runner: here on findings made up for each case, so that the thresholds are tested
// without a process that would have to produce them.
#include <QtTest>

#include "runner_checks.h"

using namespace kf;
using namespace kf::worker;

namespace {

ProcessFindings measured() {
    ProcessFindings f;
    f.activity.measured = true;
    f.activity.cpu_measured = true;
    f.activity.baseline_threads = 4;
    f.activity.max_threads = 4;
    f.activity.calls = 30;
    f.activity.call_cpu_ms = 60;
    return f;
}

std::string outcome(const nlohmann::json& checks, const std::string& name) {
    for (const auto& c : checks)
        if (c.value("name", "") == name) return c.value("outcome", "");
    return "missing";
}

}  // namespace

class TestRunnerChecks : public QObject {
    Q_OBJECT

private slots:
    /** What the clock still charges of each stop in progress adds up over many stops: an
        honest runner stopped 17 times showed 0.56 ms in all. That is no work. */
    void clock_residue_over_many_stops_passes() {
        ProcessFindings f = measured();
        f.activity.stops = 17;
        f.activity.idle_cpu_ms = 0.56;
        f.activity.idle_cpu_max_ms = 0.09;
        nlohmann::json checks = nlohmann::json::array();
        const ProcessVerdict v = judge_process(f, Backend::Cuda, checks);
        QVERIFY2(v.status.empty(), v.message.c_str());
        QCOMPARE(outcome(checks, "work_between_calls"), std::string("pass"));
    }

    /** Work in one stop the stop did not hold fails, however few the stops. */
    void work_in_one_stop_fails() {
        ProcessFindings f = measured();
        f.activity.stops = 40;
        f.activity.idle_cpu_ms = 2.5;
        f.activity.idle_cpu_max_ms = 2.4;
        nlohmann::json checks = nlohmann::json::array();
        const ProcessVerdict v = judge_process(f, Backend::Host, checks);
        QCOMPARE(v.status, std::string("integrity_violation"));
        QCOMPARE(outcome(checks, "work_between_calls"), std::string("fail"));
    }

    /** Work spread thinly over the stops fails once it passes what residue explains. */
    void work_spread_over_the_stops_fails() {
        ProcessFindings f = measured();
        f.activity.stops = 10;
        f.activity.idle_cpu_ms = 8;  // 0.8 ms a stop: under the one-stop limit, far over the residue
        f.activity.idle_cpu_max_ms = 0.8;
        nlohmann::json checks = nlohmann::json::array();
        const ProcessVerdict v = judge_process(f, Backend::Host, checks);
        QCOMPARE(v.status, std::string("integrity_violation"));
        QVERIFY(v.message.find("while it was stopped") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRunnerChecks)
#include "test_runner_checks.moc"
