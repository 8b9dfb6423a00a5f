#pragma once
#include <QWidget>

class QTreeWidget;
class QLabel;

namespace kf {
class ProjectView;
}

namespace kfgui {

/**
 * The lineage of the selected candidate (kf::ProjectView::lineage): from the seed down to
 * the candidate, each step with the expert that made it, its speedup and the gain over its
 * parent.
 */
class LineageView : public QWidget {
    Q_OBJECT

public:
    explicit LineageView(QWidget* parent = nullptr);

    void clear();
    /** Reads the chain of first parents of `candidate` from `store` (the GUI's connection). */
    void showLineage(const kf::ProjectView& store, qint64 candidate);
    QTreeWidget* tree() const { return tree_; }

Q_SIGNALS:
    void candidateActivated(qint64 id);

private:
    QLabel* title_;
    QTreeWidget* tree_;
};

}  // namespace kfgui
