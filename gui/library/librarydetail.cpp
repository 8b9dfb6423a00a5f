#include "library/librarydetail.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "editor/codeeditor.h"
#include "enginewords.h"
#include "kf/tunables.h"

namespace kfgui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString join(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) out << QString::fromStdString(s);
    return out.join(QStringLiteral(", ")).toHtmlEscaped();
}

QString orAny(const std::string& s) { return s.empty() ? LibraryDetail::tr("any") : qs(s); }

}  // namespace

LibraryDetail::LibraryDetail(QWidget* parent)
    : QWidget(parent),
      pages_(new QStackedWidget(this)),
      patternHeader_(new QLabel(this)),
      source_(new CodeEditor(this)),
      tunables_(new QTreeWidget(this)),
      insightHeader_(new QLabel(this)),
      gains_(new QChartView(this)) {
    auto* empty = new QLabel(tr("Select a pattern or an insight."), this);
    empty->setAlignment(Qt::AlignCenter);
    pages_->addWidget(empty);

    patternHeader_->setObjectName(QStringLiteral("patternHeader"));
    patternHeader_->setWordWrap(true);
    patternHeader_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    source_->setObjectName(QStringLiteral("patternSource"));
    source_->setReadOnly(true);
    tunables_->setObjectName(QStringLiteral("patternTunables"));
    tunables_->setHeaderLabels({tr("Tunable"), tr("Values"), tr("Default"), tr("Line")});
    tunables_->setRootIsDecorated(false);
    tunables_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* patternPage = new QSplitter(Qt::Vertical, this);
    patternPage->addWidget(patternHeader_);
    patternPage->addWidget(source_);
    patternPage->addWidget(tunables_);
    patternPage->setStretchFactor(1, 3);
    pages_->addWidget(patternPage);

    insightHeader_->setObjectName(QStringLiteral("insightHeader"));
    insightHeader_->setWordWrap(true);
    insightHeader_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    insightHeader_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    gains_->setObjectName(QStringLiteral("insightGains"));
    gains_->setRenderHint(QPainter::Antialiasing);
    gains_->setMinimumHeight(180);
    auto* insightPage = new QSplitter(Qt::Vertical, this);
    insightPage->addWidget(insightHeader_);
    insightPage->addWidget(gains_);
    pages_->addWidget(insightPage);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_);
}

void LibraryDetail::showEntry(const LibraryEntry* entry) {
    if (!entry) {
        pages_->setCurrentIndex(0);
        return;
    }
    if (const auto* p = std::get_if<kf::Pattern>(entry)) showPattern(*p);
    else showInsight(std::get<kf::Insight>(*entry));
}

void LibraryDetail::showPattern(const kf::Pattern& p) {
    QString html = tr("<b>%1</b> — %2, %3 backend<br>").arg(qs(p.name), orAny(p.op_class), qs(p.backend));
    html += tr("Family: %1 · bound: %2 · provenance: %3<br>").arg(orAny(p.family), join(p.bound_tags), qs(p.provenance));
    html += tr("Status: %1%2 · used %3 times, kept %4<br>")
                .arg(qs(p.status), p.broken_reason.empty() ? QString() : tr(" (%1)").arg(qs(p.broken_reason)))
                .arg(p.applications)
                .arg(p.successes);
    if (!p.signature.empty()) html += QStringLiteral("<code>%1</code><br>").arg(qs(p.signature));
    html += qs(p.description);
    patternHeader_->setText(html);
    source_->setReadOnly(false);
    source_->setText(QString::fromStdString(p.source));
    source_->setReadOnly(true);
    tunables_->clear();
    try {
        const kf::TunableSpace space = kf::parse_tunables(p.source);
        for (const kf::Tunable& t : space.params) {
            QStringList values;
            for (std::int64_t v : t.values) values << QString::number(v);
            new QTreeWidgetItem(tunables_, {QString::fromStdString(t.name), values.join(QStringLiteral(", ")),
                                            QString::number(t.default_value), QString::number(t.line)});
        }
        for (const kf::TunableConstraint& c : space.constraints)
            new QTreeWidgetItem(tunables_, {tr("constraint"), QString::fromStdString(c.text), QString(), QString::number(c.line)});
    } catch (const std::exception& e) {
        new QTreeWidgetItem(tunables_, {tr("error"), QString::fromUtf8(e.what())});
    }
    pages_->setCurrentIndex(1);
}

void LibraryDetail::showInsight(const kf::Insight& in) {
    const kf::InsightCondition& c = in.condition;
    QString html = tr("<b>When</b> op class %1, bound %2, status %3, expert %4<br>")
                       .arg(orAny(c.op_class), orAny(c.bound),
                            c.status.empty() ? orAny(c.status) : statusText(qs(c.status)), orAny(c.expert));
    html += tr("<b>Then</b> %1<br>").arg(qs(in.action));
    html += tr("Expert: %1 · status: %2 · weight %3<br>").arg(orAny(in.expert), qs(in.status)).arg(in.weight, 0, 'g', 3);
    html += tr("Evidence: %1 applications, %2 successes, %3 failures, median gain ×%4<br>")
                .arg(in.evidence.applications)
                .arg(in.evidence.successes)
                .arg(in.evidence.failures)
                .arg(in.evidence.median_gain(), 0, 'g', 3);
    html += tr("From runs %1; candidates %2").arg(join(in.provenance.run_ids), join(in.provenance.candidate_ids));
    insightHeader_->setText(html);

    auto* set = new QBarSet(tr("Gain (child / parent fitness)"));
    QStringList labels;
    double top = 1;
    for (std::size_t i = 0; i < in.evidence.gains.size(); ++i) {
        *set << in.evidence.gains[i];
        labels << QString::number(i + 1);
        top = std::max(top, in.evidence.gains[i]);
    }
    gainBars_ = int(in.evidence.gains.size());
    auto* series = new QBarSeries;
    series->append(set);
    auto* chart = new QChart;
    chart->setTitle(gainBars_ ? tr("Gains of the successful applications") : tr("No gains recorded yet"));
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis(chart);
    x->append(labels);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    auto* y = new QValueAxis(chart);
    y->setRange(0, top * 1.1);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(y);
    chart->legend()->hide();
    QChart* old = gains_->chart();
    gains_->setChart(chart);
    delete old;
    pages_->setCurrentIndex(2);
}

}  // namespace kfgui
