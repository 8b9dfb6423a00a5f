#include "runs/deviceprobe.h"

#include <QtConcurrent/QtConcurrentRun>

#include "engine.h"
#include "kf/evaluator.h"
#include "paths.h"

namespace kfgui {

namespace {

QString probeCuda(const QString& workerPath) {
    try {
        // The app engine's evaluator of the device: the worker that searches and hand
        // evaluations there use afterwards (one worker per device), not one of its own.
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Cuda;
        if (!workerPath.isEmpty()) cfg.worker.worker = toPath(workerPath);
        const nlohmann::json hello = engine().evaluator(cfg)->hello();
        const nlohmann::json device = hello.value("device", nlohmann::json());
        if (!device.is_object()) return {};
        const std::string name = device.value("name", std::string("CUDA device"));
        return fromUtf8(name.empty() ? std::string("CUDA device") : name);
    } catch (const std::exception&) {
        return {};  // no device, no CUDA backend in this worker, or no worker at all
    }
}

}  // namespace

DeviceProbe::DeviceProbe(QObject* parent) : QObject(parent) {
    connect(&watcher_, &QFutureWatcher<QString>::finished, this, [this] { Q_EMIT finished(watcher_.result()); });
}

DeviceProbe::~DeviceProbe() { watcher_.waitForFinished(); }

void DeviceProbe::start(const QString& workerPath) {
    if (watcher_.isRunning()) return;
    watcher_.setFuture(QtConcurrent::run(probeCuda, workerPath));
}

}  // namespace kfgui
