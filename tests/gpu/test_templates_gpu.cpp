// The CUDA instances of the op-class templates, judged on a real GPU: every instance for the
// test tasks and the bundled tasks that declare a computation, at its defaults and at the
// first and last points of its tunable space, must be correct on every case of the task.
// The sources are compiled first, several at a time, then evaluated one after the other.
// KF_GPU_TEMPLATE_TASKS (comma-separated) narrows the tasks. Skips itself without a GPU.
#include <QtTest>

#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "kf/diagnosis.h"
#include "kf/evaluator.h"
#include "kf/experts.h"
#include "kf/task.h"
#include "kf/templates.h"
#include "kf/tunables.h"
#include "testsupport.h"

namespace {

const char* const kTasks[] = {"sigmoid", "row_max", "rmsnorm", "matvec", "scaled_transpose", "linear_tanh", "row_cummax",
                              "blur3x3", "bucket_count", "col_std", "dwconv1d", "add_layernorm", "smooth_clamp",
                              "col_cumsum", "level1/stencil2d", "level1/histogram", "level1/layernorm", "level1/softmax",
                              "level2/masked_softmax", "bias_relu_cols", "leaky_rows"};

std::filesystem::path task_dir(const std::string& name) {
    return name.find('/') == std::string::npos ? kftest::data("tasks/" + name) : kftest::source_dir() / "tasks" / name;
}

struct Instance {
    std::string label;  ///< task, template and point, for the messages
    kf::Task task;
    kf::Candidate candidate;
};

}  // namespace

class TestTemplatesGpu : public QObject {
    Q_OBJECT

    kf::EvaluatorConfig cfg_;

private slots:
    void initTestCase() {
        if (!kftest::gpu_available()) QSKIP("no CUDA device");
        auto tmp = kftest::temp_dir("templates-gpu");
        cfg_.worker.backend = kf::Backend::Cuda;
        cfg_.worker.device = 0;
        cfg_.worker.worker = kftest::worker_path();
        cfg_.worker.log = tmp / "worker.log";
        cfg_.cache_dir = tmp / "cache";
    }

    void cuda_instances_are_correct() {
        std::vector<std::string> names(std::begin(kTasks), std::end(kTasks));
        const QString only = qEnvironmentVariable("KF_GPU_TEMPLATE_TASKS");
        if (!only.isEmpty()) {
            names.clear();
            for (const QString& n : only.split(',', Qt::SkipEmptyParts)) names.push_back(n.trimmed().toStdString());
        }
        std::vector<Instance> all;
        for (const auto& name : names) {
            kf::Task t = kf::load_task(task_dir(name));
            std::string why;
            std::vector<kf::TemplateKernel> ks = kf::templates_for_task(t, kf::Backend::Cuda, &why);
            QVERIFY2(!ks.empty(), (name + ": " + why).c_str());
            for (const auto& k : ks) {
                kf::TunableSpace space = kf::parse_tunables(k.source);
                std::vector<kf::Assignment> points = space.enumerate(1000);
                QVERIFY2(!points.empty(), (name + " " + k.name).c_str());
                for (const kf::Assignment& a : {space.defaults(), points.front(), points.back()})
                    all.push_back({name + " " + k.name + " " + kf::to_string(a), t,
                                   {kf::instantiate(k.source, space, a), k.name}});
            }
        }
        // Compile ahead, four at a time (each through its own evaluator; the cache is shared).
        std::vector<std::future<std::string>> builds;
        for (std::size_t from = 0; from < 4 && from < all.size(); ++from)
            builds.push_back(std::async(std::launch::async, [this, &all, from] {
                kf::Evaluator ev(cfg_);
                std::string failed;
                for (std::size_t i = from; i < all.size(); i += 4) {
                    kf::CompileResult r = ev.compile(all[i].task, all[i].candidate);
                    if (r.ok) continue;
                    failed += all[i].label + ":\n" + r.info.log + "\n";
                    for (const auto& d : r.info.diagnostics) failed += "  " + d.message + "\n";
                }
                return failed;
            }));
        // Compile failures are reported one by one, and the instances that compiled are still evaluated.
        std::string failed;
        for (auto& b : builds) failed += b.get();
        if (!failed.empty()) qWarning().noquote() << "did not compile:\n" << QString::fromStdString(failed);
        kf::Evaluator ev(cfg_);
        kf::EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        int wrong = 0;
        for (const auto& in : all) {
            kf::Diagnosis d = ev.evaluate(in.task, in.candidate, opt);
            qInfo().noquote() << QString::fromStdString(in.label) << "->" << QString::fromUtf8(kf::to_string(d.status).data());
            if (d.status != kf::Status::Ok) {
                ++wrong;
                qWarning().noquote() << QString::fromStdString(d.message);
            }
        }
        qInfo() << all.size() << "instances," << wrong << "not correct";
        QVERIFY2(failed.empty(), "some instances did not compile (above)");
        QCOMPARE(wrong, 0);
    }
};

QTEST_GUILESS_MAIN(TestTemplatesGpu)
#include "test_templates_gpu.moc"
