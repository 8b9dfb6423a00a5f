// Launch accounting in the worker's evaluation (engine/src/worker/evaluation.cpp), on a site
// of the test's own that records what it is asked: on CUDA every correctness trial of the
// primary case runs under accounting, and only the first goes on counting after the call's
// work (late work), the others end with it.
#include <QtTest>

#include <vector>

#include "candidate_site.h"
#include "evaluation.h"
#include "testsupport.h"

using namespace kf;
using namespace kf::worker;

namespace {

/** z = alpha * x + y, in this process: the task's reference and an honest candidate. */
void scale_add(void* const* t, const long long* sizes, const double* params, void*) {
    const auto* x = static_cast<const float*>(t[0]);
    const auto* y = static_cast<const float*>(t[1]);
    auto* z = static_cast<float*>(t[2]);
    const float alpha = static_cast<float>(params[0]);
    for (long long i = 0; i < sizes[0]; ++i) z[i] = alpha * x[i] + y[i];
}

/** Calls scale_add in this process and writes down each accounted call's late-work wait. */
class RecordingSite final : public CandidateSite {
public:
    explicit RecordingSite(Device& dev) : dev_(dev) {}
    std::vector<TensorSet*> new_sets(CaseContext& cc, std::size_t count) override {
        cc_ = &cc;
        sets_.clear();
        for (std::size_t i = 0; i < count; ++i) sets_.push_back(&cc.new_set());
        return sets_;
    }
    CallTime call(std::size_t i) override {
        ++calls;
        return dev_.timed_call(cc_->call(scale_add, *sets_.at(i)));
    }
    LaunchReport account(std::size_t i, int late_work_ms) override {
        late_work.push_back(late_work_ms);
        cc_->call(scale_add, *sets_.at(i))();
        LaunchReport r;
        r.supported = true;
        r.kernels = 1;
        return r;
    }
    std::vector<int> late_work;  ///< one per accounted call, in order
    int calls = 0;

private:
    Device& dev_;
    CaseContext* cc_ = nullptr;
    std::vector<TensorSet*> sets_;
};

}  // namespace

class TestAccounting : public QObject {
    Q_OBJECT

private slots:
    void first_accounted_trial_alone_waits_for_late_work() {
        std::unique_ptr<Device> dev = make_host_device();
        Task task = load_task(kftest::data("tasks/scale_add"));
        RecordingSite cand(*dev);
        EvalInputs in;
        in.task = &task;
        in.backend = Backend::Cuda;
        in.candidate = &cand;
        in.reference = scale_add;
        in.reference_key = "scale_add";
        in.reference_timer = [&dev] { return std::unique_ptr<CandidateSite>(new RecordingSite(*dev)); };
        in.settings.time = false;
        ReferenceTimes times;
        const nlohmann::json result = evaluate_candidate(*dev, in, times, {});
        QVERIFY2(result.value("status", "") == "ok", result.dump().c_str());
        QCOMPARE(static_cast<int>(cand.late_work.size()), in.settings.trials);
        QVERIFY2(cand.late_work.front() > 0, "the first accounted trial does not count late work");
        for (std::size_t k = 1; k < cand.late_work.size(); ++k) QCOMPARE(cand.late_work[k], 0);
    }
};

QTEST_GUILESS_MAIN(TestAccounting)
#include "test_accounting.moc"
