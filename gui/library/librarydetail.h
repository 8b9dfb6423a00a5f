#pragma once
#include <QWidget>

#include "library/librarytablemodel.h"

class QChartView;
class QLabel;
class QStackedWidget;
class QTreeWidget;

namespace kfgui {

class CodeEditor;

/**
 * The selected library entry: a pattern's source (read-only, highlighted), tunables and
 * use counts, or an insight's condition, action, provenance and a chart of its gains.
 */
class LibraryDetail : public QWidget {
    Q_OBJECT

public:
    explicit LibraryDetail(QWidget* parent = nullptr);

    void showEntry(const LibraryEntry* entry);
    CodeEditor* sourceView() const { return source_; }
    QTreeWidget* tunables() const { return tunables_; }
    /** Bars in the gains chart (one per successful application of the insight). */
    int gainBars() const { return gainBars_; }

private:
    void showPattern(const kf::Pattern& p);
    void showInsight(const kf::Insight& in);

    QStackedWidget* pages_;
    QLabel* patternHeader_;
    CodeEditor* source_;
    QTreeWidget* tunables_;
    QLabel* insightHeader_;
    QChartView* gains_;
    int gainBars_ = 0;
};

}  // namespace kfgui
