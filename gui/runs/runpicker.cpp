#include "runs/runpicker.h"

#include <algorithm>

#include <QDateTime>
#include <QFutureWatcher>
#include <QLocale>
#include <QSignalBlocker>
#include <QtConcurrent/QtConcurrentRun>

#include "enginewords.h"
#include "kf/store.h"
#include "paths.h"

namespace kfgui {

QList<RunSummary> readRunSummaries(const QString& projectDir) {
    const kf::ProjectView store = kf::ProjectView::open(toPath(projectDir));
    auto runs = store.runs();
    std::sort(runs.begin(), runs.end(), [](const kf::RunRecord& a, const kf::RunRecord& b) { return a.id > b.id; });
    QList<RunSummary> out;
    for (const kf::RunRecord& r : runs) {
        RunSummary s;
        s.id = r.id;
        s.created = fromUtf8(r.created);
        s.task = fromUtf8(r.task);
        s.state = r.state;
        s.evaluations = static_cast<int>(store.evaluations(r.id).size());
        if (const auto best = store.best(r.id)) {
            s.best = best->second.fitness;
            s.hasBest = true;
        }
        out.append(s);
    }
    return out;
}

RunPicker::RunPicker(QWidget* parent) : QComboBox(parent) {
    setObjectName(QStringLiteral("runPicker"));
    // As wide as about 40 characters; the list that opens shows each run's whole line.
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(40);
    setToolTip(tr("The run shown in the search view: the live run or an earlier one of the project"));
    connect(this, &QComboBox::activated, this, [this](int index) { Q_EMIT runChosen(itemData(index).toLongLong()); });
}

RunPicker::~RunPicker() {
    // A read in flight finishes on its pool thread with its own store connection.
    if (watcher_) watcher_->waitForFinished();
}

void RunPicker::reset() {
    ++generation_;
    liveRun_ = 0;
    wanted_ = 0;
    const QSignalBlocker block(this);
    clear();
}

void RunPicker::refresh(const QString& projectDir, qint64 liveRun) {
    liveRun_ = liveRun;
    const quint64 generation = ++generation_;
    auto* watcher = new QFutureWatcher<QList<RunSummary>>(this);
    connect(watcher, &QFutureWatcher<QList<RunSummary>>::finished, this, [this, watcher, generation] {
        if (watcher_ == watcher) watcher_ = nullptr;
        watcher->deleteLater();
        if (generation != generation_) return;  // a newer refresh is on its way
        try {
            fill(watcher->result());
        } catch (const std::exception&) {
            // The project could not be read: the list stays as it was.
        }
    });
    watcher_ = watcher;
    watcher->setFuture(QtConcurrent::run([projectDir] {
        try {
            return readRunSummaries(projectDir);
        } catch (const std::exception&) {
            return QList<RunSummary>();
        }
    }));
}

void RunPicker::fill(const QList<RunSummary>& runs) {
    const qint64 selected = wanted_ ? wanted_ : selectedRun();
    {
        const QSignalBlocker block(this);
        clear();
        for (const RunSummary& r : runs) {
            const QDateTime created = QDateTime::fromString(r.created, Qt::ISODate);
            const QString date = created.isValid() ? QLocale().toString(created.toLocalTime(), QLocale::ShortFormat) : r.created;
            const QString state = r.id == liveRun_ ? tr("live") : runStateText(r.state);
            const QString best = r.hasBest ? tr("best %1×").arg(r.best, 0, 'f', 2) : tr("no correct candidate");
            addItem(tr("Run %1 — %2, %3, %4, %n evaluation(s), %5", nullptr, r.evaluations)
                        .arg(r.id)
                        .arg(date, r.task, state, best),
                    QVariant::fromValue<qint64>(r.id));
        }
    }
    wanted_ = 0;
    if (!selectRun(selected) && count() > 0) {
        const QSignalBlocker block(this);
        setCurrentIndex(0);
    }
    wanted_ = 0;
    Q_EMIT refreshed();
}

bool RunPicker::selectRun(qint64 runId) {
    const int index = runId > 0 ? findData(QVariant::fromValue<qint64>(runId)) : -1;
    if (index < 0) {
        wanted_ = runId;
        return false;
    }
    wanted_ = 0;
    const QSignalBlocker block(this);
    setCurrentIndex(index);
    return true;
}

qint64 RunPicker::selectedRun() const { return currentIndex() >= 0 ? currentData().toLongLong() : 0; }

}  // namespace kfgui
