#pragma once
// Typed settings: each key and its default are written once, here.
#include <QByteArray>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <QVariant>

namespace kfgui {

/** A QSettings entry of type T with its key and default value. */
template <typename T>
struct Preference {
    const char* key;
    T fallback;

    T get() const {
        QSettings settings;
        return settings.value(QLatin1String(key), QVariant::fromValue(fallback)).template value<T>();
    }
    void set(const T& value) const {
        QSettings settings;
        settings.setValue(QLatin1String(key), QVariant::fromValue(value));
    }
};

namespace prefs {
inline const Preference<QByteArray> windowGeometry{"mainwindow/geometry", {}};
inline const Preference<QByteArray> windowState{"mainwindow/state", {}};
inline const Preference<QByteArray> browserSplitter{"taskbrowser/splitter", {}};
// Projects.
inline const Preference<QStringList> recentProjects{"projects/recent", {}};
inline const Preference<QString> lastTask{"projects/lastTask", QStringLiteral("level1/softmax")};
// Default run configuration (the run panel starts from these; Settings edits them).
inline const Preference<int> runIslands{"run/islands", 4};
inline const Preference<int> runPopulation{"run/population", 12};
inline const Preference<int> runBudget{"run/budget", 60};
inline const Preference<double> runTimeLimit{"run/timeLimitS", 0.0};
inline const Preference<qint64> runSeed{"run/seed", 1};
inline const Preference<double> runMinTimeMs{"run/minTimeMs", 100.0};
// Backend and device.
inline const Preference<QString> backend{"engine/backend", QStringLiteral("host")};
inline const Preference<int> device{"engine/device", 0};
inline const Preference<int> compileThreads{"engine/compileThreads", 0};
// Where evaluation workers run (docs/cluster.md): "local" or "slurm", and the Slurm job's options.
inline const Preference<QString> executor{"engine/executor", QStringLiteral("local")};
inline const Preference<QString> slurmPartition{"slurm/partition", {}};
inline const Preference<int> slurmGpus{"slurm/gpus", -1};
inline const Preference<QString> slurmTime{"slurm/time", {}};
inline const Preference<QString> slurmAccount{"slurm/account", {}};
inline const Preference<QString> slurmSpool{"slurm/spool", {}};
// KernelBench problems (the Python worker): empty means $KF_PYTHON or python3, and the bundled worker.
inline const Preference<QString> kbPython{"kernelbench/python", {}};
inline const Preference<QString> kbWorker{"kernelbench/worker", {}};
// How the worker evaluates a ModelNew (`kfoundry kernelbench run`'s --trials, --reps, --tolerance, --baselines).
inline const Preference<int> kbTrials{"kernelbench/trials", 5};
inline const Preference<int> kbReps{"kernelbench/reps", 100};
inline const Preference<QString> kbTolerance{"kernelbench/tolerance", QStringLiteral("current")};
inline const Preference<QString> kbBaselines{"kernelbench/baselines", QStringLiteral("eager,compile")};
// Run › Search KernelBench Problem Set…: the budgets over a set last entered (0: no limit).
inline const Preference<int> kbSetEvaluations{"kernelbench/setEvaluations", 0};
inline const Preference<int> kbSetTokens{"kernelbench/setTokens", 0};
inline const Preference<double> kbSetCost{"kernelbench/setCost", 0.0};
inline const Preference<int> kbSetMinutes{"kernelbench/setMinutes", 0};
inline const Preference<bool> kbSetSkipFinished{"kernelbench/setSkipFinished", true};
// Interface: "" follows the system locale, else "en" or "zh_CN" (applied on restart).
inline const Preference<QString> language{"ui/language", {}};
// Window layout beyond geometry and dock state.
inline const Preference<QByteArray> searchSplitter{"search/splitter", {}};
inline const Preference<QByteArray> chartsSplitter{"search/chartsSplitter", {}};
inline const Preference<QByteArray> tableSplitter{"search/tableSplitter", {}};
inline const Preference<int> currentTab{"mainwindow/currentTab", 0};
}  // namespace prefs

}  // namespace kfgui
