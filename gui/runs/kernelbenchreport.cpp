#include "runs/kernelbenchreport.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "kf/store.h"
#include "paths.h"

namespace kfgui {

namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    item->setTextAlignment(align);
    return item;
}

QString ms(double v) { return v > 0 ? QString::number(v, 'f', 4) : QStringLiteral("—"); }
QString times(double v) { return v > 0 ? QStringLiteral("%1x").arg(v, 0, 'f', 2) : QStringLiteral("—"); }
QString percent(double share) { return QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 1); }

}  // namespace

KernelBenchReportDialog::KernelBenchReportDialog(QWidget* parent)
    : QDialog(parent), summary_(new QLabel), fastP_(new QTableWidget), rows_(new QTableWidget) {
    setObjectName(QStringLiteral("kernelBenchReport"));
    setWindowTitle(tr("KernelBench Report"));
    summary_->setObjectName(QStringLiteral("kbReportSummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    fastP_->setObjectName(QStringLiteral("kbReportFastP"));
    fastP_->setColumnCount(3);
    fastP_->setHorizontalHeaderLabels({tr("p"), tr("fast_p vs eager"), tr("fast_p vs torch.compile")});
    fastP_->verticalHeader()->hide();
    fastP_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    fastP_->setToolTip(tr("The share of all problems whose kernel is correct and more than p times as fast as the "
                          "baseline; a problem without a correct kernel counts as a failure."));
    rows_->setObjectName(QStringLiteral("kbReportRows"));
    rows_->setColumnCount(9);
    rows_->setHorizontalHeaderLabels({tr("Problem"), tr("Status"), tr("Kernel ms"), tr("Eager ms"), tr("Compile ms"),
                                      tr("vs eager"), tr("vs compile"), tr("Evaluations"), tr("Message")});
    rows_->verticalHeader()->hide();
    rows_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    rows_->horizontalHeader()->setStretchLastSection(true);
    rows_->setSortingEnabled(true);
    rows_->setSelectionBehavior(QAbstractItemView::SelectRows);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(fastP_);
    split->addWidget(rows_);
    split->setStretchFactor(1, 3);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QPushButton* refresh = buttons->addButton(tr("&Refresh"), QDialogButtonBox::ActionRole);
    refresh->setObjectName(QStringLiteral("kbReportRefresh"));
    QPushButton* copy = buttons->addButton(tr("&Copy as Markdown"), QDialogButtonBox::ActionRole);
    copy->setObjectName(QStringLiteral("kbReportCopy"));
    QPushButton* save = buttons->addButton(tr("&Save JSON…"), QDialogButtonBox::ActionRole);
    save->setObjectName(QStringLiteral("kbReportSave"));
    connect(refresh, &QPushButton::clicked, this, [this] { this->refresh(); });
    connect(copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(markdown()); });
    connect(save, &QPushButton::clicked, this, &KernelBenchReportDialog::saveJsonDialog);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    layout->addWidget(buttons);
    resize(980, 620);
}

void KernelBenchReportDialog::setProject(const QString& projectDir, const std::vector<KernelBenchSet>& sets) {
    projectDir_ = projectDir;
    sets_ = sets;
}

bool KernelBenchReportDialog::refresh() {
    std::vector<kf::kb::ProblemOutcome> rows;
    QStringList problems;
    try {
        rows = kf::kb::outcomes_from_view(kf::ProjectView::open(toPath(projectDir_)));
    } catch (const std::exception& e) {
        report_ = kf::kb::Report{};
        display(report_);
        summary_->setText(tr("The project cannot be read: %1").arg(fromUtf8(e.what())));
        return false;
    }
    // Every problem of the project's sets counts; one never run is a failure, as KernelBench
    // scores a missing problem. A set whose folder no longer reads adds what was run only.
    QStringList unread;
    for (const KernelBenchSet& set : sets_) {
        std::vector<KernelBenchProblem> listed;
        try {
            listed = kernelBenchProblems(set);
        } catch (const std::exception& e) {
            unread << tr("level %1 of %2: %3").arg(set.level).arg(set.root, fromUtf8(e.what()));
            continue;
        }
        for (const KernelBenchProblem& p : listed) {
            const bool have = std::any_of(rows.begin(), rows.end(), [&](const kf::kb::ProblemOutcome& o) {
                return o.level == p.problem.level && o.id == p.problem.id;
            });
            if (have) continue;
            kf::kb::ProblemOutcome o;
            o.level = p.problem.level;
            o.id = p.problem.id;
            o.name = p.problem.name;
            o.message = p.unsupported.isEmpty() ? "not run" : p.unsupported.toStdString();
            rows.push_back(std::move(o));
        }
    }
    std::sort(rows.begin(), rows.end(), [](const kf::kb::ProblemOutcome& a, const kf::kb::ProblemOutcome& b) {
        return std::tie(a.level, a.id) < std::tie(b.level, b.id);
    });
    report_ = kf::kb::make_report(std::move(rows));
    display(report_);
    if (!unread.isEmpty())
        summary_->setText(summary_->text() + QStringLiteral("<br>") + tr("Not counted (the folder does not read): %1")
                                                                        .arg(unread.join(QStringLiteral("; ")).toHtmlEscaped()));
    return true;
}

void KernelBenchReportDialog::display(const kf::kb::Report& r) {
    if (r.problems == 0) {
        summary_->setText(tr("No KernelBench problem in this project: add a problem set (File › Add KernelBench "
                             "Problems…) and search its problems."));
    } else {
        QString compile = r.geomean_compile > 0 ? times(r.geomean_compile) : QStringLiteral("—");
        QString text = tr("<b>%1 problem(s)</b>: %2 attempted, %3 correct (%4). Geometric-mean speedup of the correct "
                          "kernels: %5 over eager PyTorch, %6 over torch.compile. Tolerance: %7.")
                           .arg(r.problems)
                           .arg(r.attempted)
                           .arg(r.correct)
                           .arg(percent(r.correctness_rate), times(r.geomean_eager), compile,
                                fromUtf8(r.tolerance).toHtmlEscaped());
        if (r.without_compile_baseline > 0)
            text += QLatin1Char(' ') + tr("%1 correct problem(s) have no torch.compile time.").arg(r.without_compile_baseline);
        summary_->setText(text);
    }
    fastP_->setRowCount(static_cast<int>(r.fast_eager.size()));
    for (size_t i = 0; i < r.fast_eager.size(); ++i) {
        const int row = static_cast<int>(i);
        fastP_->setItem(row, 0, cell(QString::number(r.fast_eager[i].first), Qt::AlignRight | Qt::AlignVCenter));
        fastP_->setItem(row, 1, cell(percent(r.fast_eager[i].second), Qt::AlignRight | Qt::AlignVCenter));
        const double c = i < r.fast_compile.size() ? r.fast_compile[i].second : 0.0;
        fastP_->setItem(row, 2, cell(percent(c), Qt::AlignRight | Qt::AlignVCenter));
    }
    rows_->setSortingEnabled(false);
    rows_->setRowCount(static_cast<int>(r.rows.size()));
    const Qt::Alignment right = Qt::AlignRight | Qt::AlignVCenter;
    for (size_t i = 0; i < r.rows.size(); ++i) {
        const kf::kb::ProblemOutcome& o = r.rows[i];
        const int row = static_cast<int>(i);
        rows_->setItem(row, 0, cell(QStringLiteral("level%1/%2_%3").arg(o.level).arg(o.id).arg(fromUtf8(o.name))));
        auto* status = cell(o.correct ? tr("correct") : fromUtf8(o.status));
        if (!o.correct) status->setForeground(QColor(o.status == "missing" ? 0x80 : 0xb0, 0x30, 0x30));
        rows_->setItem(row, 1, status);
        rows_->setItem(row, 2, cell(o.correct ? ms(o.candidate_ms) : QStringLiteral("—"), right));
        rows_->setItem(row, 3, cell(ms(o.eager_ms), right));
        rows_->setItem(row, 4, cell(ms(o.compile_ms), right));
        rows_->setItem(row, 5, cell(times(o.speedup_eager()), right));
        rows_->setItem(row, 6, cell(times(o.speedup_compile()), right));
        auto* evals = new QTableWidgetItem;
        evals->setData(Qt::DisplayRole, o.evaluations);
        evals->setFlags(evals->flags() & ~Qt::ItemIsEditable);
        evals->setTextAlignment(right);
        rows_->setItem(row, 7, evals);
        rows_->setItem(row, 8, cell(fromUtf8(o.message).simplified()));
        rows_->item(row, 8)->setToolTip(fromUtf8(o.message));
    }
    rows_->setSortingEnabled(true);
}

QString KernelBenchReportDialog::markdown() const { return fromUtf8(kf::kb::to_markdown(report_)); }

bool KernelBenchReportDialog::saveJson(const QString& path, QString* error) const {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error) *error = f.errorString();
        return false;
    }
    const std::string text = kf::kb::to_json(report_).dump(2) + "\n";
    if (f.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()) || !f.flush()) {
        if (error) *error = f.errorString();
        return false;
    }
    return true;
}

void KernelBenchReportDialog::saveJsonDialog() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save KernelBench Report"),
                                                      projectDir_ + QStringLiteral("/kernelbench-report.json"),
                                                      tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!saveJson(path, &error))
        QMessageBox::warning(this, tr("Save KernelBench Report"), tr("Cannot write %1: %2").arg(path, error));
}

}  // namespace kfgui
