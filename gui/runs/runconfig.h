#pragma once
// What the user sets for one search run, and how it becomes the engine's options.
#include <QByteArray>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "kf/exec.h"

namespace kf {
struct EvolveOptions;
}

namespace kfgui {

/** The run configuration shown in the run panel and, as defaults, in the settings dialog. */
struct RunConfig {
    int islands = 4;
    int population = 12;
    int budget = 60;            ///< evaluations, seeds included; 0: unlimited
    double timeLimitS = 0;      ///< wall time; 0: unlimited
    qint64 seed = 1;
    QString backend = QStringLiteral("host");  ///< host | cuda
    int device = 0;
    int compileThreads = 0;     ///< 0: all cores
    double minTimeMs = 100;     ///< timed region per candidate (EvalOptions::min_time_ms)

    bool operator==(const RunConfig&) const = default;
};

/** The defaults stored in the settings (prefs::run*). */
RunConfig loadDefaultRunConfig();
void saveDefaultRunConfig(const RunConfig& config);

/** Fills the search and evaluation parts of the engine's options. */
void applyRunConfig(const RunConfig& config, kf::EvolveOptions& options);

/** Everything the engine thread needs to run a search. */
struct RunRequest {
    QString projectDir;
    QString taskDir;
    RunConfig config;
    QString workerPath;   ///< kfoundry-worker; empty: next to the executable
    QString libraryPath;  ///< experience library receiving the librarian's evidence; empty: none
    /** The LLM experts' configuration (the engine's JSON, without keys); empty: built-in experts only. */
    QByteArray llmConfig;
    /** Keys by provider name, read from the OS keyring; in memory only, never stored or logged. */
    QMap<QString, QString> llmKeys;
    /** Where the evaluation worker runs (the settings' Executor page). */
    kf::ExecutorOptions executor;

    /** A KernelBench problem to search instead of the task in taskDir (kbRoot empty: a native task). */
    QString kbRoot;        ///< the KernelBench folder, as `kfoundry kernelbench run --kb` takes it
    int kbLevel = 0;
    int kbId = 0;
    QString python;        ///< Python with PyTorch; empty: $KF_PYTHON or python3
    QString kbWorker;      ///< the Python worker script; empty: resources/kernelbench/kb_worker.py
    int kbTrials = 5;      ///< correctness trials per evaluation
    int kbReps = 100;      ///< timed calls per evaluation
    QString kbTolerance = QStringLiteral("current");  ///< a kf::kb::kTolerancePolicies name
    QStringList kbBaselines = {QStringLiteral("eager"), QStringLiteral("compile")};
    /**
     * Several problems of kbLevel searched one after the other (a problem set), each with
     * config.budget evaluations at most and a share of the level's budgets below
     * (kf::kb::share_level_budgets); empty: kbId alone.
     */
    QList<int> kbIds;
    qint64 kbLevelEvaluations = 0;  ///< over all of kbIds; 0: no limit
    qint64 kbLevelTokens = 0;       ///< LLM tokens over all of kbIds; 0: no limit
    double kbLevelCost = 0;         ///< LLM cost over all of kbIds; 0: no limit
    double kbLevelTimeS = 0;        ///< wall time of the whole set; 0: no limit
    bool kbSkipFinished = true;     ///< a problem finished in the project with kbTolerance is not searched again (kf::kb::finished_problems)
    bool isKernelBench() const { return !kbRoot.isEmpty(); }
};

}  // namespace kfgui

Q_DECLARE_METATYPE(kfgui::RunConfig)
Q_DECLARE_METATYPE(kfgui::RunRequest)
