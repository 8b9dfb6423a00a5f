// The CUDA instances of the op-class templates, judged on a real GPU: every instance for the
// test tasks and the bundled tasks that declare a computation, at its defaults and at the
// first and last points of its tunable space, must be correct on every case of the task.
// The sources are compiled first, several at a time, then evaluated one after the other.
// KF_GPU_TEMPLATE_TASKS (comma-separated) narrows the tasks. Skips itself without a GPU.
#include <QtTest>

#include <filesystem>
#include <string>
#include <vector>

#include "kf/evaluator.h"
#include "kf/experts.h"
#include "kf/task.h"
#include "kf/templates.h"
#include "instances.h"
#include "testsupport.h"

namespace {

const char* const kTasks[] = {"sigmoid", "row_max", "rmsnorm", "matvec", "scaled_transpose", "linear_tanh", "row_cummax",
                              "blur3x3", "bucket_count", "col_std", "dwconv1d", "add_layernorm", "smooth_clamp",
                              "col_cumsum", "level1/stencil2d", "level1/histogram", "level1/layernorm", "level1/softmax",
                              "level2/masked_softmax", "bias_relu_cols", "leaky_rows"};

std::filesystem::path task_dir(const std::string& name) {
    return name.find('/') == std::string::npos ? kftest::data("tasks/" + name) : kftest::source_dir() / "tasks" / name;
}

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
        std::vector<kftest::Instance> all;
        for (const auto& name : names) {
            kf::Task t = kf::load_task(task_dir(name));
            std::string why;
            std::vector<kf::TemplateKernel> ks = kf::templates_for_task(t, kf::Backend::Cuda, &why);
            QVERIFY2(!ks.empty(), (name + ": " + why).c_str());
            kftest::add_points(all, name, t, ks);
        }
        kftest::judge(cfg_, all);
    }
};

QTEST_GUILESS_MAIN(TestTemplatesGpu)
#include "test_templates_gpu.moc"
