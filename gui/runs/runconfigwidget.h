#pragma once
#include <QWidget>

#include "runs/runconfig.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace kfgui {

/**
 * The fields of a RunConfig: islands, population, budget, time limit, seed, backend and
 * device, compile parallelism and timing per candidate. The CUDA backend is offered only once
 * a worker has reported a device (setCudaDevice).
 */
class RunConfigWidget : public QWidget {
    Q_OBJECT

public:
    explicit RunConfigWidget(QWidget* parent = nullptr);

    RunConfig config() const;
    void setConfig(const RunConfig& config);
    /** A CUDA device was found (name non-empty) or not: adds or removes the cuda backend. */
    void setCudaDevice(const QString& deviceName);
    bool cudaOffered() const;

private:
    void updateDeviceRow();

    QSpinBox* islands_;
    QSpinBox* population_;
    QSpinBox* budget_;
    QDoubleSpinBox* timeLimit_;
    QSpinBox* seed_;
    QComboBox* backend_;
    QSpinBox* device_;
    QLabel* deviceName_;
    QSpinBox* compileThreads_;
    QDoubleSpinBox* minTime_;
    QString pendingBackend_;  ///< asked for before the device probe answered
};

}  // namespace kfgui
