#pragma once
#include <QFutureWatcher>
#include <QObject>
#include <QString>

namespace kfgui {

/**
 * Asks the app engine's CUDA worker (the one its searches and hand evaluations on device 0
 * share), off the GUI thread, whether it has a CUDA device. The answer decides whether the
 * run configuration offers the CUDA backend. The probe is waited for (never abandoned) when
 * the object is destroyed.
 */
class DeviceProbe : public QObject {
    Q_OBJECT

public:
    explicit DeviceProbe(QObject* parent = nullptr);
    ~DeviceProbe() override;

    /** Starts the probe with the worker at `workerPath` (empty: next to the executable). */
    void start(const QString& workerPath = {});
    bool isRunning() const { return watcher_.isRunning(); }

Q_SIGNALS:
    /** The device's name, or empty when there is none (or the worker has no CUDA backend). */
    void finished(const QString& cudaDevice);

private:
    QFutureWatcher<QString> watcher_;
};

}  // namespace kfgui
