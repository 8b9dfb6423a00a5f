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
    void showLoadError(const QString& relativePath, const QString& error);
    void clear();

private:
    static QPlainTextEdit* makeSourceView(const QString& objectName);
    void fillCases(const kf::Task& task);
    void setSourcesVisible(bool visible);

    QLabel* title_;
    QLabel* summary_;
    QLabel* description_;
    QLabel* sizes_;
    QTreeWidget* cases_;
    QTabWidget* tabs_;
    QPlainTextEdit* header_;
    QPlainTextEdit* cudaReference_;
    QPlainTextEdit* hostReference_;
};

}  // namespace kfgui
