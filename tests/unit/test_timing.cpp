// The worker's timing loop (engine/src/worker/timing.cpp) on a device that does nothing and
// calls whose times the test chooses: when the timed calls stop, and which are checked.
#include <QtTest>

#include "timing.h"

using namespace kf;
using namespace kf::worker;

namespace {

/** A device with no work of its own: the timing loop's flushes and syncs are no-ops. */
class IdleDevice final : public Device {
public:
    DeviceInfo info() override { return {}; }
    Peaks measure_peaks() override { return {}; }
    Buffer alloc(std::size_t) override { return {}; }
    void release(Buffer&) override {}
    std::unique_ptr<Arena> new_arena(std::size_t) override { return nullptr; }
    void fill_random(const Buffer&, DType, std::int64_t, const InitSpec&, std::uint64_t) override {}
    void fill_bytes(const Buffer&, std::size_t, std::size_t, std::uint8_t) override {}
    bool bytes_equal(const Buffer&, std::size_t, std::size_t, std::uint8_t) override { return true; }
    std::uint64_t checksum(const Buffer&) override { return 0; }
    CompareResult compare(const Buffer&, const Buffer&, DType, std::int64_t, const Tolerance&, std::uint8_t) override {
        return {};
    }
    void copy(const Buffer&, const Buffer&, std::size_t) override {}
    void* stream() override { return nullptr; }
    void synchronize() override {}
    void flush_cache() override {}
    CallTime timed_call(const std::function<void()>& fn) override {
        fn();
        return {};
    }
    LaunchReport account_launches(const std::function<void()>& fn, int) override {
        fn();
        return {};
    }
};

/** Calls that take `times` in turn (event and wall time alike); every `after` recorded. */
struct Calls {
    explicit Calls(std::vector<double> t) : times(std::move(t)) {}
    std::vector<double> times;
    std::size_t made = 0;
    std::vector<bool> verified;  ///< one per call after the warm-ups and the estimate

    TimedCalls timed(double check_fraction) {
        TimedCalls tc;
        tc.prepare = [](std::size_t) {};
        tc.call = [this](std::size_t) {
            CallTime t;
            t.event_ms = t.wall_ms = times[made++ % times.size()];
            return t;
        };
        tc.after = [this](std::size_t, bool verify) { verified.push_back(verify); };
        tc.check_fraction = check_fraction;
        return tc;
    }
};

EvalSettings settings(double precision) {
    EvalSettings st;
    st.warmup = 0;
    st.min_time_ms = 100;
    st.min_reps = 10;
    st.max_reps = 1000;
    st.precision = precision;
    return st;
}

}  // namespace

class TestTiming : public QObject {
    Q_OBJECT

private slots:
    /** Calls that all take 1 ms: the median is known after the fewest calls that may say so. */
    void steady_calls_stop_once_the_median_is_known() {
        IdleDevice dev;
        Calls calls({1.0});
        const TimingStats s = time_calls(dev, calls.timed(0.25), settings(0.005));
        QCOMPARE(s.reps, kMinCallsForPrecision);
        QCOMPARE(s.median_ms, 1.0);
        // The estimate's call is followed by an unchecked after(); then one per timed call.
        QCOMPARE(static_cast<int>(calls.verified.size()), 1 + s.reps);
        QVERIFY2(calls.verified.back(), "the last timed call is checked");
    }

    /** With precision 0 the calls run until they total min_time_ms, as without it. */
    void precision_zero_runs_to_the_time_budget() {
        IdleDevice dev;
        Calls calls({1.0});
        const TimingStats s = time_calls(dev, calls.timed(0.25), settings(0));
        QCOMPARE(s.reps, 100);  // 100 ms of 1 ms calls
        QVERIFY(calls.verified.back());
    }

    /** Calls that alternate between 1 and 3 ms never agree to 0.5%: the time budget ends them. */
    void spread_calls_run_to_the_time_budget() {
        IdleDevice dev;
        Calls calls({1.0, 3.0});
        const TimingStats s = time_calls(dev, calls.timed(0.25), settings(0.005));
        QVERIFY2(s.reps >= 50, std::to_string(s.reps).c_str());
    }

    /** About one timed call in four is checked, drawn at random; the reference's calls (a check
     *  fraction of 0) never are. */
    void checks_are_drawn_at_random() {
        IdleDevice dev;
        Calls calls({1.0});
        EvalSettings st = settings(0);
        st.min_time_ms = 1000;
        const TimingStats s = time_calls(dev, calls.timed(0.25), st);
        QCOMPARE(s.reps, 1000);
        const auto checked = std::count(calls.verified.begin(), calls.verified.end(), true);
        QVERIFY2(checked > 150 && checked < 350, std::to_string(checked).c_str());
        Calls reference({1.0});
        (void)time_calls(dev, reference.timed(0), st);
        QCOMPARE(std::count(reference.verified.begin(), reference.verified.end(), true), std::ptrdiff_t(0));
    }

    void median_known_reads_the_order_statistics() {
        std::vector<double> tight(20, 1.0);
        QVERIFY(median_known(tight, 0.005));
        QVERIFY(!median_known(tight, 0));
        std::vector<double> wide;
        for (int i = 0; i < 20; ++i) wide.push_back(1.0 + 0.01 * i);  // 1.00 .. 1.19
        QVERIFY(!median_known(wide, 0.005));
        QVERIFY(median_known(wide, 0.1));
    }
};

QTEST_GUILESS_MAIN(TestTiming)
#include "test_timing.moc"
