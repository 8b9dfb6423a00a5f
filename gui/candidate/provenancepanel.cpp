#include "candidate/provenancepanel.h"

#include <QFormLayout>
#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "enginewords.h"

namespace kfgui {

namespace {
enum Row { kTask, kRun, kExpert, kIsland, kGeneration, kParents, kAuthor, kFamily, kTunables, kCreated, kRowCount };
}

ProvenancePanel::ProvenancePanel(QWidget* parent)
    : QWidget(parent), form_(new QFormLayout), rationale_(new QTextBrowser(this)) {
    const QString labels[kRowCount] = {tr("Task"),    tr("Run"),    tr("Expert"), tr("Island"),   tr("Generation"),
                                       tr("Parents"), tr("Author"), tr("Family"), tr("Tunables"), tr("Created")};
    for (const QString& label : labels) {
        auto* value = new QLabel(this);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setWordWrap(true);
        form_->addRow(label, value);
        values_ << value;
    }
    rationale_->setObjectName(QStringLiteral("rationale"));
    rationale_->setPlaceholderText(tr("No rationale recorded."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form_);
    layout->addWidget(new QLabel(tr("Rationale"), this));
    layout->addWidget(rationale_, 1);
}

void ProvenancePanel::setRow(int row, const QString& value) {
    values_[row]->setText(value.isEmpty() ? QStringLiteral("—") : value);
}

void ProvenancePanel::setCandidate(const kf::CandidateRecord& c, const std::optional<kf::RunRecord>& run) {
    setRow(kTask, QString::fromStdString(c.task));
    setRow(kRun, run ? tr("%1 (%2, %3)").arg(run->id).arg(runStateText(run->state),
                                              QString::fromStdString(run->config.value("backend", std::string())))
                     : QString::number(c.run_id));
    setRow(kExpert, QString::fromStdString(c.expert));
    setRow(kIsland, QString::number(c.island));
    setRow(kGeneration, QString::number(c.generation));
    QStringList parents;
    for (std::int64_t p : c.parents) parents << QString::number(p);
    setRow(kParents, parents.isEmpty() ? tr("none (seed)") : parents.join(QStringLiteral(", ")));
    setRow(kAuthor, QString::fromStdString(c.author));
    setRow(kFamily, QString::fromStdString(c.family));
    setRow(kTunables, c.tunables.empty() ? QString() : QString::fromStdString(c.tunables.dump()));
    setRow(kCreated, QString::fromStdString(c.created));
    rationale_->setPlainText(QString::fromStdString(c.rationale));
}

void ProvenancePanel::clear() {
    for (int r = 0; r < kRowCount; ++r) setRow(r, QString());
    rationale_->clear();
}

QString ProvenancePanel::field(const QString& name) const {
    for (int r = 0; r < form_->rowCount(); ++r) {
        auto* label = qobject_cast<QLabel*>(form_->itemAt(r, QFormLayout::LabelRole)->widget());
        if (label && label->text() == name) return values_[r]->text();
    }
    return {};
}

QString ProvenancePanel::rationale() const { return rationale_->toPlainText(); }

}  // namespace kfgui
