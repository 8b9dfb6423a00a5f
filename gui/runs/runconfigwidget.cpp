#include "runs/runconfigwidget.h"

#include <algorithm>
#include <limits>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <QThread>

namespace kfgui {

RunConfigWidget::RunConfigWidget(QWidget* parent)
    : QWidget(parent),
      islands_(new QSpinBox(this)),
      population_(new QSpinBox(this)),
      budget_(new QSpinBox(this)),
      timeLimit_(new QDoubleSpinBox(this)),
      seed_(new QSpinBox(this)),
      backend_(new QComboBox(this)),
      device_(new QSpinBox(this)),
      deviceName_(new QLabel(this)),
      compileThreads_(new QSpinBox(this)),
      minTime_(new QDoubleSpinBox(this)) {
    islands_->setObjectName(QStringLiteral("runIslands"));
    islands_->setRange(1, 64);
    population_->setObjectName(QStringLiteral("runPopulation"));
    population_->setRange(2, 512);
    budget_->setObjectName(QStringLiteral("runBudget"));
    budget_->setRange(0, 1000000);
    budget_->setSpecialValueText(tr("unlimited"));
    budget_->setSuffix(tr(" evaluations"));
    timeLimit_->setObjectName(QStringLiteral("runTimeLimit"));
    timeLimit_->setRange(0, 7 * 24 * 3600);
    timeLimit_->setDecimals(0);
    timeLimit_->setSpecialValueText(tr("none"));
    timeLimit_->setSuffix(tr(" s"));
    seed_->setObjectName(QStringLiteral("runSeed"));
    seed_->setRange(0, std::numeric_limits<int>::max());
    backend_->setObjectName(QStringLiteral("runBackend"));
    backend_->addItem(tr("Host (CPU)"), QStringLiteral("host"));
    backend_->setToolTip(tr("CUDA appears once a worker has found a device."));
    device_->setObjectName(QStringLiteral("runDevice"));
    device_->setRange(0, 63);
    compileThreads_->setObjectName(QStringLiteral("runCompileThreads"));
    compileThreads_->setRange(0, 256);
    compileThreads_->setSpecialValueText(tr("all cores (%1)").arg(QThread::idealThreadCount()));
    minTime_->setObjectName(QStringLiteral("runMinTime"));
    minTime_->setRange(1, 10000);
    minTime_->setDecimals(0);
    minTime_->setSuffix(tr(" ms"));
    minTime_->setToolTip(tr("Timed region per candidate: repetitions adapt until it lasts this long."));

    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("Islands:"), islands_);
    form->addRow(tr("Population per island:"), population_);
    form->addRow(tr("Budget:"), budget_);
    form->addRow(tr("Time limit:"), timeLimit_);
    form->addRow(tr("Seed:"), seed_);
    form->addRow(tr("Backend:"), backend_);
    form->addRow(tr("Device:"), device_);
    form->addRow(QString(), deviceName_);
    form->addRow(tr("Compile in parallel:"), compileThreads_);
    form->addRow(tr("Timing per candidate:"), minTime_);
    connect(backend_, &QComboBox::currentIndexChanged, this, &RunConfigWidget::updateDeviceRow);
    setConfig(RunConfig{});
}

RunConfig RunConfigWidget::config() const {
    RunConfig c;
    c.islands = islands_->value();
    c.population = population_->value();
    c.budget = budget_->value();
    c.timeLimitS = timeLimit_->value();
    c.seed = seed_->value();
    c.backend = backend_->currentData().toString();
    c.device = device_->value();
    c.compileThreads = compileThreads_->value();
    c.minTimeMs = minTime_->value();
    return c;
}

void RunConfigWidget::setConfig(const RunConfig& c) {
    islands_->setValue(c.islands);
    population_->setValue(c.population);
    budget_->setValue(c.budget);
    timeLimit_->setValue(c.timeLimitS);
    seed_->setValue(static_cast<int>(std::min<qint64>(c.seed, std::numeric_limits<int>::max())));
    const int index = backend_->findData(c.backend);
    backend_->setCurrentIndex(index >= 0 ? index : 0);
    pendingBackend_ = index >= 0 ? QString() : c.backend;
    device_->setValue(c.device);
    compileThreads_->setValue(c.compileThreads);
    minTime_->setValue(c.minTimeMs);
    updateDeviceRow();
}

void RunConfigWidget::setCudaDevice(const QString& deviceName) {
    const int index = backend_->findData(QStringLiteral("cuda"));
    if (deviceName.isEmpty()) {
        if (index >= 0) backend_->removeItem(index);
        deviceName_->setText(tr("No CUDA device found: the host backend runs on the CPU."));
    } else {
        if (index < 0) backend_->addItem(tr("CUDA (GPU)"), QStringLiteral("cuda"));
        deviceName_->setText(deviceName);
        if (pendingBackend_ == QLatin1String("cuda")) backend_->setCurrentIndex(backend_->findData(pendingBackend_));
    }
    pendingBackend_.clear();
    updateDeviceRow();
}

bool RunConfigWidget::cudaOffered() const { return backend_->findData(QStringLiteral("cuda")) >= 0; }

void RunConfigWidget::updateDeviceRow() { device_->setEnabled(backend_->currentData() == QStringLiteral("cuda")); }

}  // namespace kfgui
