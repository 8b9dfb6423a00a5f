#pragma once
#include <QWidget>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace kfgui {

/**
 * One diagnosis as a structured tree: summary, compile (diagnostics and resources),
 * correctness, timing, roofline, integrity checks and, when collected, the profiler metrics.
 */
class DiagnosisPanel : public QWidget {
    Q_OBJECT

public:
    explicit DiagnosisPanel(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    void setDiagnosis(const kf::Diagnosis& d);
    /** Shows a line instead of a diagnosis (no evaluation, or one that cannot be read). */
    void showMessage(const QString& message);
    /** The value in `section`'s row `key` (top level when section is empty); for tests. */
    QString value(const QString& section, const QString& key) const;
    QStringList sections() const;
    QTreeWidget* tree() const { return tree_; }

private:
    QTreeWidgetItem* addSection(const QString& title);
    static void addJson(QTreeWidgetItem* parent, const nlohmann::json& j);

    QLabel* title_;
    QTreeWidget* tree_;
};

}  // namespace kfgui
