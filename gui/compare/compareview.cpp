#include "compare/compareview.h"

namespace kfgui {

CompareView::CompareView(QWidget* parent) : QWidget(parent) {}

void CompareView::compare(const QString& projectDir, qint64 a, qint64 b) {
    Q_UNUSED(projectDir);
    Q_UNUSED(a);
    Q_UNUSED(b);
}

void CompareView::showRun(const QString& projectDir, qint64 runId) {
    Q_UNUSED(projectDir);
    Q_UNUSED(runId);
}

}  // namespace kfgui
