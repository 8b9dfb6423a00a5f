#pragma once
#include <QWidget>

#include <optional>

#include "kf/store.h"

class QFormLayout;
class QLabel;
class QTextBrowser;

namespace kfgui {

/** Where a candidate came from (expert, island, generation, parents, author) and why. */
class ProvenancePanel : public QWidget {
    Q_OBJECT

public:
    explicit ProvenancePanel(QWidget* parent = nullptr);

    void setCandidate(const kf::CandidateRecord& c, const std::optional<kf::RunRecord>& run);
    void clear();
    /** The text of the row named `field` (e.g. tr("Author")); for tests. */
    QString field(const QString& name) const;
    QString rationale() const;

private:
    void setRow(int row, const QString& value);

    QFormLayout* form_;
    QList<QLabel*> values_;
    QTextBrowser* rationale_;
};

}  // namespace kfgui
