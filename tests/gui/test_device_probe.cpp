// The app's device probe asks the app engine's CUDA worker, the one that searches and hand
// evaluations on the device then use: it adds one evaluator to the engine the first time,
// none after, whether or not this machine has a CUDA device.
#include <QSignalSpy>
#include <QtTest>

#include "engine.h"
#include "kf/evaluator.h"
#include "paths.h"
#include "runs/deviceprobe.h"
#include "testsupport.h"

class TestDeviceProbe : public QObject {
    Q_OBJECT

    /** Probes with the tests' worker and returns what it found. */
    QString probe() {
        kfgui::DeviceProbe p;
        QSignalSpy done(&p, &kfgui::DeviceProbe::finished);
        p.start(kfgui::fromUtf8(kftest::worker_path().string()));
        if (!done.wait(120000)) return QStringLiteral("<no answer>");
        return done.takeFirst().at(0).toString();
    }

private slots:
    void probe_uses_the_engines_worker() {
        const std::size_t before = kfgui::engine().evaluators();
        const QString device = probe();
        QVERIFY2(device != QStringLiteral("<no answer>"), "the probe did not finish");
        qInfo("CUDA device: %s", device.isEmpty() ? "none" : qPrintable(device));
        QCOMPARE(kfgui::engine().evaluators(), before + 1);
        // Asked again: the same evaluator, no new worker.
        QCOMPARE(probe(), device);
        QCOMPARE(kfgui::engine().evaluators(), before + 1);
        // A search or hand evaluation on device 0 with this worker gets that same evaluator.
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Cuda;
        cfg.worker.worker = kftest::worker_path();
        (void)kfgui::engine().evaluator(cfg);
        QCOMPARE(kfgui::engine().evaluators(), before + 1);
    }
};

QTEST_MAIN(TestDeviceProbe)
#include "test_device_probe.moc"
