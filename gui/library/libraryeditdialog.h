#pragma once
#include <QDialog>

#include "kf/library.h"

class QFormLayout;
class QLineEdit;
class QPlainTextEdit;

namespace kfgui {

/** Edits the fields a user may change: a pattern's class, family, tags and description, or
    an insight's condition and action. */
class LibraryEditDialog : public QDialog {
    Q_OBJECT

public:
    /** Shows the dialog; true (and `p` changed) when the user accepted. */
    static bool editPattern(QWidget* parent, kf::Pattern& p);
    static bool editInsight(QWidget* parent, kf::Insight& in);

    /** "a, b ,c" → {"a", "b", "c"}. */
    static std::vector<std::string> splitTags(const QString& text);
    static QString joinTags(const std::vector<std::string>& tags);

private:
    explicit LibraryEditDialog(QWidget* parent);
    QLineEdit* addLine(const QString& label, const std::string& value);
    QPlainTextEdit* addText(const QString& label, const std::string& value);

    QFormLayout* form_;
};

}  // namespace kfgui
