#include "candidate/diagnosispanel.h"

#include "enginewords.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kfgui {

namespace {

QString str(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

QString scalar(const nlohmann::json& j) {
    if (j.is_null()) return QStringLiteral("—");
    if (j.is_string()) return QString::fromStdString(j.get<std::string>());
    if (j.is_boolean()) return j.get<bool>() ? DiagnosisPanel::tr("yes") : DiagnosisPanel::tr("no");
    if (j.is_number_integer()) return QString::number(j.get<qint64>());
    if (j.is_number()) return QString::number(j.get<double>(), 'g', 6);
    return QString::fromStdString(j.dump());
}

QColor statusColor(kf::Status s) { return s == kf::Status::Ok ? QColor(0x10, 0x80, 0x30) : QColor(0xb0, 0x20, 0x20); }

}  // namespace

DiagnosisPanel::DiagnosisPanel(QWidget* parent)
    : QWidget(parent), title_(new QLabel(this)), tree_(new QTreeWidget(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    title_->setObjectName(QStringLiteral("diagnosisTitle"));
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    tree_->setObjectName(QStringLiteral("diagnosisTree"));
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Field"), tr("Value")});
    tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree_->setAlternatingRowColors(true);
    tree_->setUniformRowHeights(true);
    layout->addWidget(title_);
    layout->addWidget(tree_);
    title_->setText(tr("Diagnosis"));
}

void DiagnosisPanel::setTitle(const QString& title) { title_->setText(title); }

QTreeWidgetItem* DiagnosisPanel::addSection(const QString& title) {
    auto* item = new QTreeWidgetItem(tree_, {title});
    QFont bold = item->font(0);
    bold.setBold(true);
    item->setFont(0, bold);
    item->setFirstColumnSpanned(true);
    return item;
}

void DiagnosisPanel::addJson(QTreeWidgetItem* parent, const nlohmann::json& j) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            auto* row = new QTreeWidgetItem(parent, {QString::fromStdString(it.key())});
            if (it->is_structured()) addJson(row, *it);
            else row->setText(1, scalar(*it));
        }
    } else if (j.is_array()) {
        int i = 0;
        for (const auto& v : j) {
            auto* row = new QTreeWidgetItem(parent, {QStringLiteral("[%1]").arg(i++)});
            if (v.is_structured()) addJson(row, v);
            else row->setText(1, scalar(v));
        }
    } else {
        parent->setText(1, scalar(j));
    }
}

void DiagnosisPanel::setDiagnosis(const kf::Diagnosis& d) {
    tree_->clear();
    auto row = [](QTreeWidgetItem* parent, const QString& key, const QString& value) {
        return new QTreeWidgetItem(parent, {key, value});
    };
    QTreeWidgetItem* summary = addSection(tr("Summary"));
    QTreeWidgetItem* status = row(summary, tr("status"), statusText(str(kf::to_string(d.status))));
    status->setForeground(1, statusColor(d.status));
    row(summary, tr("stage"), stageText(str(kf::to_string(d.stage))));
    row(summary, tr("message"), QString::fromStdString(d.message))->setToolTip(1, QString::fromStdString(d.message));
    row(summary, tr("backend"), QString::fromStdString(d.backend));
    row(summary, tr("device"), QString::fromStdString(d.device));
    row(summary, tr("fitness"), QString::number(d.fitness(), 'g', 4));
    row(summary, tr("kernel launches"), d.kernel_launches < 0 ? QStringLiteral("—") : QString::number(d.kernel_launches));
    row(summary, tr("eval seconds"), QString::number(d.eval_seconds, 'g', 3));
    QStringList advice;
    for (const auto& a : d.advice) advice << QString::fromStdString(a);
    row(summary, tr("advice"), advice.isEmpty() ? QStringLiteral("—") : advice.join(QStringLiteral(", ")));

    QTreeWidgetItem* compile = addSection(tr("Compile"));
    row(compile, tr("ok"), d.compile.ok ? tr("yes") : tr("no"));
    row(compile, tr("cached"), d.compile.cached ? tr("yes") : tr("no"));
    row(compile, tr("seconds"), QString::number(d.compile.seconds, 'g', 3));
    row(compile, tr("compiler"), QString::fromStdString(d.compile.compiler));
    QTreeWidgetItem* diags = row(compile, tr("diagnostics"), QString::number(d.compile.diagnostics.size()));
    for (const kf::Diagnostic& m : d.compile.diagnostics) {
        auto* item = row(diags, tr("%1:%2:%3 %4").arg(QString::fromStdString(m.file)).arg(m.line).arg(m.column)
                                     .arg(severityText(str(kf::to_string(m.severity)))),
                         QString::fromStdString(m.message));
        item->setToolTip(1, QString::fromStdString(m.message));
        if (m.severity == kf::Severity::Error) item->setForeground(1, QColor(0xb0, 0x20, 0x20));
    }
    if (!d.compile.resources.empty()) {
        nlohmann::json resources = d.compile.resources;
        addJson(row(compile, tr("resources"), QString()), resources);
    }
    compile->setExpanded(!d.compile.ok);
    diags->setExpanded(true);

    if (d.correctness) {
        QTreeWidgetItem* c = addSection(tr("Correctness"));
        addJson(c, nlohmann::json(*d.correctness));
        c->setExpanded(!d.correctness->passed);
    }
    if (d.timing) {
        QTreeWidgetItem* t = addSection(tr("Timing"));
        addJson(t, nlohmann::json(*d.timing));
        t->setExpanded(true);
    }
    if (d.roofline) {
        QTreeWidgetItem* r = addSection(tr("Roofline"));
        addJson(r, nlohmann::json(*d.roofline));
        r->setExpanded(true);
    }
    if (!d.integrity.empty()) {
        QTreeWidgetItem* integrity = addSection(tr("Integrity"));
        for (const kf::IntegrityCheck& c : d.integrity) {
            auto* item = row(integrity, QString::fromStdString(c.name),
                             tr("%1 — %2").arg(QString::fromStdString(c.outcome), QString::fromStdString(c.detail)));
            if (c.outcome == "fail") item->setForeground(1, QColor(0xb0, 0x20, 0x20));
        }
        integrity->setExpanded(true);
    }
    if (!d.profile.is_null()) {
        QTreeWidgetItem* p = addSection(tr("Profile"));
        addJson(p, d.profile);
        p->setExpanded(true);
    }
    summary->setExpanded(true);
}

void DiagnosisPanel::showMessage(const QString& message) {
    tree_->clear();
    auto* item = new QTreeWidgetItem(tree_, {message});
    item->setFirstColumnSpanned(true);
}

QStringList DiagnosisPanel::sections() const {
    QStringList out;
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) out << tree_->topLevelItem(i)->text(0);
    return out;
}

QString DiagnosisPanel::value(const QString& section, const QString& key) const {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        QTreeWidgetItem* top = tree_->topLevelItem(i);
        if (top->text(0) != section) continue;
        for (int k = 0; k < top->childCount(); ++k)
            if (top->child(k)->text(0) == key) return top->child(k)->text(1);
    }
    return {};
}

}  // namespace kfgui
