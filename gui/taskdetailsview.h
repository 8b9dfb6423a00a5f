#pragma once
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QTreeWidget;

namespace kf {
struct Task;
}

namespace kfgui {

struct KernelBenchProblem;

/**
 * The right-hand side of the task browser: what a task asks for (title, description, op
 * class, sizes and cases), the typed entry point a candidate implements and the reference
 * sources. Read-only.
 */
class TaskDetailsView : public QWidget {
    Q_OBJECT

public:
    explicit TaskDetailsView(QWidget* parent = nullptr);

    void showTask(const kf::Task& task);
    /** A task folder that failed to load: its path and the loader's message. */
    /**
     * A KernelBench problem: its PyTorch source, op class, operations and input shapes, why the
     * bridge does not run it (Level 4), and `latestRun` (what the project's latest run of it reached).
     */
    void showKernelBenchProblem(const KernelBenchProblem& problem, const QString& latestRun);
    void showLoadError(const QString& relativePath, const QString& error);
    void clear();

private:
    static QPlainTextEdit* makeSourceView(const QString& objectName);
    void fillCases(const kf::Task& task);
    void setSourcesVisible(bool visible);
    /** Shows the task's computation, deriving it in the background where the manifest declares none. */
    void showComputation(const kf::Task& task);
    /** Shows the PyTorch tab alone (a KernelBench problem) or the native tabs alone. */
    void showTabsFor(bool kernelBench);

    QLabel* title_;
    QLabel* summary_;
    QLabel* description_;
    QLabel* sizes_;
    /**
     * The computation the op-class templates write kernels from: the manifest's, or derived
     * from the host reference off the GUI thread (libclang parses it), or why there is none.
     */
    QLabel* computation_;
    quint64 computationGeneration_ = 0;  ///< the task shown; a derivation for an older one is dropped
    QTreeWidget* cases_;
    QTabWidget* tabs_;
    QPlainTextEdit* header_;
    QPlainTextEdit* cudaReference_;
    QPlainTextEdit* hostReference_;
    QPlainTextEdit* pytorchSource_;
};

}  // namespace kfgui
