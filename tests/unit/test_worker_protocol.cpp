// The worker protocol's one spelling (kf/worker_protocol.h): its commands, and the evaluate
// options that the engine sends (kf::EvalOptions) and the worker reads (kf::EvalSettings).
#include <QtTest>

#include "kf/evaluator.h"
#include "kf/worker_protocol.h"

using namespace kf;

class TestWorkerProtocol : public QObject {
    Q_OBJECT

private slots:
    void commands_round_trip() {
        for (WorkerCommand c : {WorkerCommand::Hello, WorkerCommand::DeviceInfo, WorkerCommand::Evaluate,
                                WorkerCommand::Shutdown}) {
            const std::optional<WorkerCommand> back = parse_worker_command(to_string(c));
            QVERIFY(back.has_value());
            QCOMPARE(static_cast<int>(*back), static_cast<int>(c));
        }
        QCOMPARE(to_string(WorkerCommand::DeviceInfo), std::string_view("device_info"));
        QVERIFY(!parse_worker_command("evaluate ").has_value());
        QVERIFY(!parse_worker_command("").has_value());
    }

    /** What the engine sends is what the worker reads: every setting, and nothing of the
     *  engine's own side (its time limit, tunables, cancel). */
    void options_sent_are_the_settings_read() {
        EvalOptions o;
        o.trials = 5;
        o.time = false;
        o.warmup = 7;
        o.min_time_ms = 12.5;
        o.min_reps = 4;
        o.max_reps = 40;
        o.precision = 0.01;
        o.rotate_buffers = 2;
        o.seed = 99;
        o.memory_mb = 512;
        o.timeout_s = 3;
        const nlohmann::json sent = o.to_json();
        QVERIFY2(!sent.contains("timeout_s"), sent.dump().c_str());
        const EvalSettings read = EvalSettings::from_json(sent);
        QCOMPARE(read.to_json(), sent);
        QCOMPARE(read.trials, 5);
        QCOMPARE(read.seed, std::uint64_t{99});
        QCOMPARE(read.memory_mb, std::uint64_t{512});
        // Defaults for what a request does not name.
        QCOMPARE(EvalSettings::from_json(nlohmann::json::object()).to_json(), EvalSettings{}.to_json());
    }

    void settings_are_clamped_where_read() {
        const EvalSettings s = EvalSettings::from_json(
            {{"trials", 0}, {"min_reps", 50}, {"max_reps", 3}, {"rotate_buffers", 99}, {"memory_mb", 1}, {"precision", -1}});
        QCOMPARE(s.trials, 1);
        QCOMPARE(s.min_reps, 50);
        QCOMPARE(s.max_reps, 50);  // never fewer than min_reps
        QCOMPARE(s.rotate_buffers, 16);
        QCOMPARE(s.memory_mb, std::uint64_t{64});
        QCOMPARE(s.precision, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestWorkerProtocol)
#include "test_worker_protocol.moc"
