#include "runs/runpicker.h"

#include <algorithm>

#include <QDateTime>
#include <QLocale>
#include <QSignalBlocker>

#include "enginewords.h"
#include "kf/store.h"
#include "paths.h"

namespace kfgui {

RunPicker::RunPicker(QWidget* parent) : QComboBox(parent) {
    setObjectName(QStringLiteral("runPicker"));
    setSizeAdjustPolicy(QComboBox::AdjustToContents);
    setToolTip(tr("The run shown in the search view: the live run or an earlier one of the project"));
    connect(this, &QComboBox::activated, this, [this](int index) { Q_EMIT runChosen(itemData(index).toLongLong()); });
}

void RunPicker::refresh(kf::ProjectStore& store, qint64 liveRun) {
    const qint64 selected = selectedRun();
    liveRun_ = liveRun;
    const QSignalBlocker block(this);
    clear();
    auto runs = store.runs();
    std::sort(runs.begin(), runs.end(), [](const kf::RunRecord& a, const kf::RunRecord& b) { return a.id > b.id; });
    for (const kf::RunRecord& r : runs) {
        const int evaluations = static_cast<int>(store.evaluations(r.id).size());
        const auto best = store.best(r.id);
        QDateTime created = QDateTime::fromString(fromUtf8(r.created), Qt::ISODate);
        const QString date = created.isValid() ? QLocale().toString(created.toLocalTime(), QLocale::ShortFormat) : fromUtf8(r.created);
        const QString state = r.id == liveRun ? tr("live") : runStateText(fromUtf8(r.state));
        const QString bestText = best ? tr("best %1×").arg(best->second.fitness, 0, 'f', 2) : tr("no correct candidate");
        addItem(tr("Run %1 — %2, %3, %4, %n evaluation(s), %5", nullptr, evaluations)
                    .arg(r.id)
                    .arg(date, fromUtf8(r.task), state, bestText),
                QVariant::fromValue<qint64>(r.id));
    }
    if (!selectRun(selected) && count() > 0) setCurrentIndex(0);
}

bool RunPicker::selectRun(qint64 runId) {
    const int index = runId > 0 ? findData(QVariant::fromValue<qint64>(runId)) : -1;
    if (index < 0) return false;
    const QSignalBlocker block(this);
    setCurrentIndex(index);
    return true;
}

qint64 RunPicker::selectedRun() const { return currentIndex() >= 0 ? currentData().toLongLong() : 0; }

}  // namespace kfgui
