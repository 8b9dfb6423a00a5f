#include "compare/compareview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <exception>

#include "compare/metricscomparison.h"
#include "compare/rooflinechart.h"
#include "compare/sourcediff.h"
#include "kf/store.h"

namespace kfgui {

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      tabs_(new QTabWidget(this)),
      summary_(new QLabel(this)),
      mode_(new QComboBox(this)),
      diff_(new DiffModel(this)),
      diffTable_(new QTableView(this)),
      metrics_(new MetricsComparison(this)),
      roofline_(new RooflineChart(this)) {
    tabs_->setObjectName(QStringLiteral("compareTabs"));
    summary_->setObjectName(QStringLiteral("compareSummary"));
    mode_->setObjectName(QStringLiteral("diffMode"));
    mode_->addItem(tr("Side by side"), int(DiffModel::Mode::SideBySide));
    mode_->addItem(tr("Unified"), int(DiffModel::Mode::Unified));
    diffTable_->setObjectName(QStringLiteral("diffTable"));
    diffTable_->setModel(diff_);
    diffTable_->setShowGrid(false);
    diffTable_->setWordWrap(false);
    diffTable_->verticalHeader()->hide();
    diffTable_->verticalHeader()->setDefaultSectionSize(diffTable_->fontMetrics().height() + 2);
    diffTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    metrics_->setObjectName(QStringLiteral("metricsComparison"));
    roofline_->setObjectName(QStringLiteral("roofline"));

    auto* diffPage = new QWidget(this);
    auto* bar = new QHBoxLayout;
    bar->addWidget(summary_, 1);
    bar->addWidget(new QLabel(tr("View:"), diffPage));
    bar->addWidget(mode_);
    auto* diffLayout = new QVBoxLayout(diffPage);
    diffLayout->addLayout(bar);
    diffLayout->addWidget(diffTable_, 1);
    tabs_->addTab(diffPage, tr("Source diff"));
    tabs_->addTab(metrics_, tr("Metrics"));
    tabs_->addTab(roofline_, tr("Roofline"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_);

    connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
        diff_->setMode(DiffModel::Mode(mode_->currentData().toInt()));
        diffTable_->resizeColumnsToContents();
    });
    connect(roofline_, &RooflineChart::candidateActivated, this, &CompareView::candidateActivated);
}

int CompareView::currentPage() const { return tabs_->currentIndex(); }

void CompareView::showError(const QString& message) {
    summary_->setText(message);
    diff_->setSources(QString(), QString());
    tabs_->setCurrentIndex(0);
}

void CompareView::compare(const QString& projectDir, qint64 a, qint64 b) {
    try {
        const kf::ProjectView store = kf::ProjectView::open(projectDir.toStdString());
        const auto ca = store.candidate(a), cb = store.candidate(b);
        if (!ca || !cb) {
            showError(tr("Candidate %1 is not in the project.").arg(!ca ? a : b));
            return;
        }
        const auto ea = store.evaluation_of(a), eb = store.evaluation_of(b);
        diff_->setSources(QString::fromStdString(ca->source), QString::fromStdString(cb->source));
        summary_->setText(tr("Candidate %1 → candidate %2: %3 lines added, %4 removed")
                              .arg(a).arg(b).arg(diff_->added()).arg(diff_->removed()));
        metrics_->setDiagnoses(ea ? ea->diagnosis : nlohmann::json(), eb ? eb->diagnosis : nlohmann::json(),
                               tr("Candidate %1").arg(a), tr("Candidate %1").arg(b));
        diffTable_->resizeColumnsToContents();
        tabs_->setCurrentIndex(0);
    } catch (const std::exception& e) {
        showError(tr("Cannot read the project: %1").arg(QString::fromUtf8(e.what())));
    }
}

void CompareView::showRun(const QString& projectDir, qint64 runId) {
    try {
        const kf::ProjectView store = kf::ProjectView::open(projectDir.toStdString());
        const auto run = store.run(runId);
        const QString task = run ? QString::fromStdString(run->task) : QString();
        roofline_->setEvaluations(store.evaluations(runId), tr("Run %1 — %2").arg(runId).arg(task));
    } catch (const std::exception& e) {
        roofline_->setEvaluations({}, tr("Cannot read the project: %1").arg(QString::fromUtf8(e.what())));
    }
    tabs_->setCurrentIndex(2);
}

}  // namespace kfgui
