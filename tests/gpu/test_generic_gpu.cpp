// The generic expert's CUDA instances (kf/generic.h), judged on a real GPU: every instance for
// the test tasks no template knows (a gather, a strided window, a broadcast epilogue, a
// ternary with a per-row operand, a scatter-add, a row reduction, a kept while loop, bags of
// gathered rows summed through a pointer) and for a few bundled tasks, at its defaults and at
// the first and last points of its tunable space, must be correct on every case of the task.
// Compiled first, several at a time, then evaluated one after the other. KF_GPU_GENERIC_TASKS
// (comma-separated) narrows the tasks.
// Skips itself without a GPU; fails where libclang cannot be loaded (KF_LIBCLANG names it).
#include <QtTest>

#include <filesystem>
#include <string>
#include <vector>

#include "kf/evaluator.h"
#include "kf/experts.h"
#include "kf/task.h"
#include "kf/generic.h"
#include "instances.h"
#include "testsupport.h"

namespace {

const char* const kTasks[] = {"embedding_gather", "maxpool2d", "bias_relu_cols", "leaky_rows", "scatter_add",
                              "absmax_scale", "bucketize", "row_max", "embedding_bag", "level1/softmax", "level1/stencil2d"};

std::filesystem::path task_dir(const std::string& name) {
    return name.find('/') == std::string::npos ? kftest::data("tasks/" + name) : kftest::source_dir() / "tasks" / name;
}

}  // namespace

class TestGenericGpu : public QObject {
    Q_OBJECT

    kf::EvaluatorConfig cfg_;

private slots:
    void initTestCase() {
        if (!kftest::gpu_available()) QSKIP("no CUDA device");
        auto tmp = kftest::temp_dir("generic-gpu");
        cfg_.worker.backend = kf::Backend::Cuda;
        cfg_.worker.device = 0;
        cfg_.worker.worker = kftest::worker_path();
        cfg_.worker.log = tmp / "worker.log";
        cfg_.cache_dir = tmp / "cache";
    }

    void cuda_instances_are_correct() {
        std::vector<std::string> names(std::begin(kTasks), std::end(kTasks));
        const QString only = qEnvironmentVariable("KF_GPU_GENERIC_TASKS");
        if (!only.isEmpty()) {
            names.clear();
            for (const QString& n : only.split(',', Qt::SkipEmptyParts)) names.push_back(n.trimmed().toStdString());
        }
        std::vector<kftest::Instance> all;
        for (const auto& name : names) {
            kf::Task t = kf::load_task(task_dir(name));
            kf::GenericKernels g = kf::generic_kernels(t, kf::Backend::Cuda);
            const std::vector<kf::TemplateKernel>& ks = g.kernels;
            QVERIFY2(!ks.empty(), (name + ": " + g.reason).c_str());
            kftest::add_points(all, name, t, ks);
        }
        kftest::judge(cfg_, all);
    }
};

QTEST_GUILESS_MAIN(TestGenericGpu)
#include "test_generic_gpu.moc"
