#pragma once
#include <Qsci/qsciscintilla.h>

#include <vector>

#include "kf/diagnosis.h"

class QTimer;

namespace kfgui {

/**
 * A CUDA/C++ source editor: line numbers, the CUDA lexer, compiler diagnostics as margin
 * markers with the message annotated under the line, and `@kf` tunable annotations marked.
 */
class CodeEditor : public QsciScintilla {
    Q_OBJECT

public:
    explicit CodeEditor(QWidget* parent = nullptr);

    /** Replaces the markers and annotations with those of `diagnostics` (lines are 1-based). */
    void setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics);
    void clearDiagnostics();
    /** 1-based lines that carry a marker of the given severity. */
    QList<int> markedLines(kf::Severity severity) const;
    /** How many `@kf` annotations are marked. */
    int tunableAnnotationCount() const { return tunableCount_; }

private:
    void markTunables();

    QTimer* tunableTimer_;
    int tunableCount_ = 0;
};

}  // namespace kfgui
