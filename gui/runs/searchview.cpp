#include "runs/searchview.h"

#include <unordered_map>
#include <vector>

#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTimer>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include "kf/store.h"
#include "paths.h"
#include "runs/lineageview.h"
#include "runs/outcomechart.h"
#include "runs/populationmodel.h"
#include "runs/populationview.h"
#include "runs/runpicker.h"
#include "runs/searchworker.h"
#include "runs/speedupchart.h"
#include "enginewords.h"

namespace kfgui {

SearchView::SearchView(QWidget* parent)
    : QWidget(parent),
      timer_(new QTimer(this)),
      summary_(new QLabel(this)),
      picker_(new RunPicker(this)),
      llmUsage_(new QLabel(this)),
      log_(new QPlainTextEdit(this)),
      speedup_(new SpeedupChart),
      outcomes_(new OutcomeChart),
      population_(new PopulationView),
      lineage_(new LineageView),
      vertical_(new QSplitter(Qt::Vertical, this)),
      charts_(new QSplitter(Qt::Horizontal)),
      table_(new QSplitter(Qt::Horizontal)) {
    setObjectName(QStringLiteral("searchView"));
    summary_->setObjectName(QStringLiteral("searchSummary"));
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Never widens the window: a line longer than the room the run picker leaves wraps onto
    // more lines (and stays whole in the tooltip).
    summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    summary_->setWordWrap(true);
    vertical_->setObjectName(QStringLiteral("searchSplitter"));
    llmUsage_->setObjectName(QStringLiteral("llmUsage"));
    llmUsage_->hide();
    log_->setObjectName(QStringLiteral("runLog"));
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(2000);
    log_->setMaximumHeight(fontMetrics().lineSpacing() * 5);
    charts_->addWidget(speedup_);
    charts_->addWidget(outcomes_);
    table_->addWidget(population_);
    table_->addWidget(lineage_);
    table_->setStretchFactor(0, 3);
    table_->setStretchFactor(1, 1);
    vertical_->addWidget(charts_);
    vertical_->addWidget(table_);
    vertical_->setStretchFactor(0, 2);
    vertical_->setStretchFactor(1, 3);

    auto* layout = new QVBoxLayout(this);
    auto* head = new QHBoxLayout;
    head->addWidget(summary_, 1);
    head->addWidget(picker_);
    layout->addLayout(head);
    layout->addWidget(llmUsage_);
    layout->addWidget(vertical_, 1);
    layout->addWidget(log_);

    timer_->setInterval(kRefreshMs);
    connect(timer_, &QTimer::timeout, this, &SearchView::applyPending);
    timer_->start();
    setSummary(tr("No search yet. Pick a task and press Start search."));
}

void SearchView::clear() {
    pending_.clear();
    speedup_->clear();
    outcomes_->clear();
    population_->model()->clear();
    lineage_->clear();
    log_->clear();
    llmUsage_->clear();
    llmUsage_->hide();
}

QString SearchView::logText() const { return log_->toPlainText(); }
QString SearchView::llmUsageText() const { return llmUsage_->isHidden() ? QString() : llmUsage_->text(); }

void SearchView::appendEvents(const EngineEventList& events) { pending_.append(events); }

void SearchView::applyPending() {
    if (pending_.isEmpty()) return;
    EngineEventList events;
    if (pending_.size() <= kMaxEventsPerTick) {
        events.swap(pending_);
    } else {
        // A backlog (a flood of events, a long run loaded at once): a slice now, the rest
        // right after the event loop has had its turn, so that it never stalls for long.
        events = pending_.mid(0, kMaxEventsPerTick);
        pending_.remove(0, kMaxEventsPerTick);
        QTimer::singleShot(0, this, &SearchView::applyPending);
    }
    std::vector<PopulationRow> rows;
    rows.reserve(static_cast<std::size_t>(events.size()));
    for (const EngineEvent& e : events)
        if (e.isEvaluation()) rows.push_back(PopulationModel::rowFromEvent(e));
    population_->model()->append(rows);
    QStringList lines;
    const EngineEvent* usage = nullptr;
    for (const EngineEvent& e : events) {
        if (e.kind == kf::EventKind::LlmUsage) usage = &e;
        else if (e.kind == kf::EventKind::Log) lines << e.message;
        else if (e.kind == kf::EventKind::Stopped) lines << tr("stopped: %1").arg(stopReasonText(e.stop));
        else if (e.kind == kf::EventKind::Improved || e.kind == kf::EventKind::Migrated)
            lines << tr("island %1: %2").arg(e.island).arg(e.message);
    }
    if (!lines.isEmpty()) log_->appendPlainText(lines.join(QLatin1Char('\n')));
    if (usage) {
        llmUsage_->setText(tr("LLM: %n call(s), %1 input + %2 output tokens, cost %3", nullptr, static_cast<int>(usage->llmCalls))
                               .arg(usage->llmInputTokens)
                               .arg(usage->llmOutputTokens)
                               .arg(usage->llmCost, 0, 'f', 4));
        llmUsage_->show();
    }
    speedup_->add(events);
    outcomes_->add(events);
    // Charts are redrawn once the backlog is through (or on the regular tick), not per slice.
    if (pending_.isEmpty() || !chartClock_.isValid() || chartClock_.elapsed() >= kRefreshMs) {
        speedup_->refresh();
        outcomes_->refresh();
        chartClock_.start();
    }
}

void SearchView::loadRun(const kf::ProjectView& store, qint64 runId) {
    clear();
    EngineEventList events;
    const auto candidates = store.candidates(runId);
    std::unordered_map<std::int64_t, const kf::CandidateRecord*> byId;
    for (const auto& c : candidates) byId[c.id] = &c;
    // Evaluations in the order they were made: the same sequence the live views saw.
    for (const kf::EvaluationRecord& ev : store.evaluations(runId)) {
        auto it = byId.find(ev.candidate_id);
        if (it == byId.end()) continue;
        EngineEvent e;
        e.kind = kf::EventKind::Evaluated;
        e.member = ev.candidate_id;
        e.island = it->second->island;
        e.status = fromUtf8(ev.status);
        e.fitness = ev.fitness;
        e.expert = fromUtf8(it->second->expert);
        addStoredDetails(e, store);
        events.append(e);
    }
    // The LLM usage the engine kept for the run (runs with LLM experts only).
    if (const auto llm = store.get_state(runId, "llm"); llm && llm->is_object() && llm->contains("usage")) {
        EngineEvent usage;
        usage.kind = kf::EventKind::LlmUsage;
        const nlohmann::json& totals = (*llm)["usage"].value("totals", nlohmann::json::object());
        usage.llmCalls = totals.value("calls", std::int64_t{0});
        usage.llmInputTokens = totals.value("input_tokens", std::int64_t{0});
        usage.llmOutputTokens = totals.value("output_tokens", std::int64_t{0});
        usage.llmCost = totals.value("cost", 0.0);
        events.append(usage);
    }
    appendEvents(events);
    applyPending();
}

void SearchView::setSummary(const QString& text) {
    summary_->setText(text);
    summary_->setToolTip(text);
}

QList<QByteArray> SearchView::saveSplitters() const {
    return {vertical_->saveState(), charts_->saveState(), table_->saveState()};
}

void SearchView::restoreSplitters(const QList<QByteArray>& states) {
    QSplitter* splitters[] = {vertical_, charts_, table_};
    for (int i = 0; i < states.size() && i < 3; ++i)
        if (!states[i].isEmpty()) splitters[i]->restoreState(states[i]);
}

}  // namespace kfgui
