#pragma once
#include <vector>

#include <QString>

#include "kf/kernelbench.h"

namespace kfgui {

/**
 * A KernelBench problem set opened in a project (File › Add KernelBench Problems…): the
 * KernelBench folder as `kfoundry kernelbench run --kb` takes it, a level and the selected
 * problem ids in `--problems` syntax (empty: the whole level). Kept in
 * <project>/kernelbench.json so that the project shows the problems when it is reopened.
 */
struct KernelBenchSet {
    QString root;      ///< absolute
    int level = 1;
    QString problems;  ///< "1-20,25"; empty: every problem of the level

    bool operator==(const KernelBenchSet&) const = default;
};

/** One problem of a set as the task list shows it. */
struct KernelBenchProblem {
    kf::kb::Problem problem;
    QString root;         ///< the set's KernelBench folder
    QString unsupported;  ///< kf::kb::unsupported_reason ("Not supported: …"); empty when the bridge runs it
};

/** <project>/kernelbench.json */
QString kernelBenchFile(const QString& projectDir);

/**
 * The problems a set selects, sorted by id. Throws kf::Error saying what is wrong: a folder
 * without the level, a level without problems, a selection that does not parse or names ids
 * the level does not have.
 */
std::vector<KernelBenchProblem> kernelBenchProblems(const KernelBenchSet& set);

/** The sets kept in a project (none when the file is missing); `error` says why a file does not read. */
std::vector<KernelBenchSet> loadKernelBenchSets(const QString& projectDir, QString* error = nullptr);
/** Writes the sets to kernelBenchFile(); false with `error` on failure. */
bool saveKernelBenchSets(const QString& projectDir, const std::vector<KernelBenchSet>& sets, QString* error = nullptr);

}  // namespace kfgui
