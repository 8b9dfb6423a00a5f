#include "library/libraryeditdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace kfgui {

LibraryEditDialog::LibraryEditDialog(QWidget* parent) : QDialog(parent), form_(new QFormLayout) {
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form_);
    layout->addWidget(buttons);
    resize(520, 360);
}

QLineEdit* LibraryEditDialog::addLine(const QString& label, const std::string& value) {
    auto* edit = new QLineEdit(QString::fromStdString(value), this);
    form_->addRow(label, edit);
    return edit;
}

QPlainTextEdit* LibraryEditDialog::addText(const QString& label, const std::string& value) {
    auto* edit = new QPlainTextEdit(QString::fromStdString(value), this);
    form_->addRow(label, edit);
    return edit;
}

std::vector<std::string> LibraryEditDialog::splitTags(const QString& text) {
    std::vector<std::string> out;
    for (const QString& t : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!t.trimmed().isEmpty()) out.push_back(t.trimmed().toStdString());
    return out;
}

QString LibraryEditDialog::joinTags(const std::vector<std::string>& tags) {
    QStringList out;
    for (const auto& t : tags) out << QString::fromStdString(t);
    return out.join(QStringLiteral(", "));
}

bool LibraryEditDialog::editPattern(QWidget* parent, kf::Pattern& p) {
    LibraryEditDialog d(parent);
    d.setWindowTitle(tr("Edit pattern %1").arg(QString::fromStdString(p.name)));
    QLineEdit* opClass = d.addLine(tr("Op class"), p.op_class);
    QLineEdit* family = d.addLine(tr("Family"), p.family);
    QLineEdit* tags = d.addLine(tr("Bound tags"), joinTags(p.bound_tags).toStdString());
    tags->setPlaceholderText(tr("memory, compute, latency, occupancy…"));
    QPlainTextEdit* description = d.addText(tr("Description"), p.description);
    if (d.exec() != QDialog::Accepted) return false;
    p.op_class = opClass->text().trimmed().toStdString();
    p.family = family->text().trimmed().toStdString();
    p.bound_tags = splitTags(tags->text());
    p.description = description->toPlainText().toStdString();
    return true;
}

bool LibraryEditDialog::editInsight(QWidget* parent, kf::Insight& in) {
    LibraryEditDialog d(parent);
    d.setWindowTitle(tr("Edit insight"));
    QLineEdit* opClass = d.addLine(tr("When op class"), in.condition.op_class);
    QLineEdit* bound = d.addLine(tr("When bound"), in.condition.bound);
    QLineEdit* status = d.addLine(tr("When diagnosis status"), in.condition.status);
    QLineEdit* expert = d.addLine(tr("When expert"), in.condition.expert);
    for (QLineEdit* e : {opClass, bound, status, expert}) e->setPlaceholderText(tr("any"));
    QPlainTextEdit* action = d.addText(tr("Action"), in.action);
    if (d.exec() != QDialog::Accepted) return false;
    in.condition.op_class = opClass->text().trimmed().toStdString();
    in.condition.bound = bound->text().trimmed().toStdString();
    in.condition.status = status->text().trimmed().toStdString();
    in.condition.expert = expert->text().trimmed().toStdString();
    in.action = action->toPlainText().trimmed().toStdString();
    return true;
}

}  // namespace kfgui
