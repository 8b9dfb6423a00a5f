#pragma once
#include <QWidget>

namespace kfgui {

/** One candidate: its source in an editor, its diagnosis, rationale and provenance; the
    source can be edited, re-evaluated, stored as a user candidate or injected into a run. */
class CandidateView : public QWidget {
    Q_OBJECT

public:
    explicit CandidateView(QWidget* parent = nullptr);

    /** Loads candidate `candidateId` from the project store in `projectDir`. */
    void showCandidate(const QString& projectDir, qint64 candidateId);

Q_SIGNALS:
    /** The user asked to put `source` into island `island` of the running search. */
    void injectRequested(const QString& source, int island, qint64 parentId);
};

}  // namespace kfgui
