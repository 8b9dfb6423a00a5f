#include "editor/codeeditor.h"

#include "enginewords.h"

#include <Qsci/qscistyle.h>

#include <QFontDatabase>
#include <QRegularExpression>
#include <QTimer>

#include "editor/cudalexer.h"
#include "editor/editormarkers.h"

namespace kfgui {

namespace {

int markerFor(kf::Severity s) {
    switch (s) {
        case kf::Severity::Error: return editor::kErrorMarker;
        case kf::Severity::Warning: return editor::kWarningMarker;
        case kf::Severity::Note: break;
    }
    return editor::kNoteMarker;
}

// Annotation styles live past the lexer's styles (QsciStyle picks a free number itself).
const QsciStyle& annotationStyle(kf::Severity s) {
    static const QsciStyle error(-1, QString(), QColor(0x90, 0x10, 0x10), QColor(0xff, 0xe4, 0xe4),
                                 QFontDatabase::systemFont(QFontDatabase::FixedFont));
    static const QsciStyle warning(-1, QString(), QColor(0x70, 0x50, 0x00), QColor(0xff, 0xf4, 0xd0),
                                   QFontDatabase::systemFont(QFontDatabase::FixedFont));
    static const QsciStyle note(-1, QString(), QColor(0x20, 0x40, 0x70), QColor(0xe4, 0xee, 0xff),
                                QFontDatabase::systemFont(QFontDatabase::FixedFont));
    if (s == kf::Severity::Error) return error;
    if (s == kf::Severity::Warning) return warning;
    return note;
}

}  // namespace

CodeEditor::CodeEditor(QWidget* parent) : QsciScintilla(parent), tunableTimer_(new QTimer(this)) {
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    auto* lexer = new CudaLexer(this);
    lexer->setDefaultFont(mono);
    lexer->setFont(mono);
    setLexer(lexer);
    setUtf8(true);
    setTabWidth(4);
    setIndentationsUseTabs(false);
    setAutoIndent(true);
    setBraceMatching(QsciScintilla::SloppyBraceMatch);
    setCaretLineVisible(true);
    setCaretLineBackgroundColor(QColor(0xf4, 0xf4, 0xf8));

    setMarginType(0, QsciScintilla::NumberMargin);
    setMarginWidth(0, QStringLiteral("00000"));
    setMarginType(editor::kMarkerMargin, QsciScintilla::SymbolMargin);
    setMarginWidth(editor::kMarkerMargin, 16);
    setMarginSensitivity(editor::kMarkerMargin, false);
    markerDefine(QsciScintilla::Circle, editor::kErrorMarker);
    setMarkerBackgroundColor(QColor(0xd0, 0x20, 0x20), editor::kErrorMarker);
    markerDefine(QsciScintilla::RightTriangle, editor::kWarningMarker);
    setMarkerBackgroundColor(QColor(0xe0, 0xa0, 0x00), editor::kWarningMarker);
    markerDefine(QsciScintilla::SmallRectangle, editor::kNoteMarker);
    setMarkerBackgroundColor(QColor(0x30, 0x70, 0xc0), editor::kNoteMarker);
    setMarginMarkerMask(editor::kMarkerMargin, (1 << editor::kErrorMarker) | (1 << editor::kWarningMarker) |
                                                   (1 << editor::kNoteMarker));
    setAnnotationDisplay(QsciScintilla::AnnotationBoxed);

    indicatorDefine(QsciScintilla::StraightBoxIndicator, editor::kTunableIndicator);
    setIndicatorForegroundColor(QColor(0x20, 0xa0, 0x40, 0x60), editor::kTunableIndicator);
    setIndicatorDrawUnder(true, editor::kTunableIndicator);

    // Re-marking on every keystroke is wasteful; a short pause is enough.
    tunableTimer_->setSingleShot(true);
    tunableTimer_->setInterval(200);
    connect(tunableTimer_, &QTimer::timeout, this, &CodeEditor::markTunables);
    connect(this, &QsciScintilla::textChanged, tunableTimer_, qOverload<>(&QTimer::start));
}

void CodeEditor::clearDiagnostics() {
    markerDeleteAll(editor::kErrorMarker);
    markerDeleteAll(editor::kWarningMarker);
    markerDeleteAll(editor::kNoteMarker);
    clearAnnotations();
}

void CodeEditor::setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics) {
    clearDiagnostics();
    // Several messages on one line share its annotation, worst severity first.
    QMap<int, QStringList> text;
    QMap<int, kf::Severity> worst;
    for (const kf::Diagnostic& d : diagnostics) {
        if (d.line <= 0 || d.line > lines()) continue;
        const int line = d.line - 1;
        markerAdd(line, markerFor(d.severity));
        QString head = severityText(QString::fromStdString(std::string(kf::to_string(d.severity))));
        if (d.column > 0) head += tr(" (column %1)").arg(d.column);
        text[line] << tr("%1: %2").arg(head, QString::fromStdString(d.message));
        if (!worst.contains(line) || int(d.severity) < int(worst[line])) worst[line] = d.severity;
    }
    for (auto it = text.cbegin(); it != text.cend(); ++it)
        annotate(it.key(), it.value().join(QLatin1Char('\n')), annotationStyle(worst[it.key()]));
}

QList<int> CodeEditor::markedLines(kf::Severity severity) const {
    QList<int> out;
    const int mask = 1 << markerFor(severity);
    for (int line = markerFindNext(0, mask); line >= 0; line = markerFindNext(line + 1, mask))
        out << line + 1;
    return out;
}

void CodeEditor::markTunables() {
    static const QRegularExpression annotation(QStringLiteral("//\\s*@kf\\s+(tunable|constraint)\\b.*$"));
    clearIndicatorRange(0, 0, qMax(0, lines() - 1), lineLength(qMax(0, lines() - 1)), editor::kTunableIndicator);
    tunableCount_ = 0;
    for (int line = 0; line < lines(); ++line) {
        const QString t = text(line);
        const QRegularExpressionMatch m = annotation.match(t);
        if (!m.hasMatch()) continue;
        // Indicator positions are byte offsets in the UTF-8 line.
        const int start = t.left(m.capturedStart()).toUtf8().size();
        const int end = t.left(m.capturedEnd()).toUtf8().size();
        fillIndicatorRange(line, start, line, end, editor::kTunableIndicator);
        ++tunableCount_;
    }
}

}  // namespace kfgui
