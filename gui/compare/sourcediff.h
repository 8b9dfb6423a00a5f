#pragma once
#include <QAbstractTableModel>
#include <QList>
#include <QString>

namespace kfgui {

/** One line of a line diff: unchanged, only in the new source, or only in the old one. */
struct DiffLine {
    enum Kind { Same, Added, Removed };
    Kind kind = Same;
    int oldLine = 0;  ///< 1-based; 0 for an added line
    int newLine = 0;  ///< 1-based; 0 for a removed line
    QString text;
};

/** The shortest edit script from `before` to `after`, line by line (dtl). */
QList<DiffLine> diffLines(const QString& before, const QString& after);

/**
 * A diff as a table: unified (old no., new no., text with +/-) or side by side (old no.,
 * old text, new no., new text, removed and added runs paired row by row), coloured.
 */
class DiffModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum class Mode { Unified, SideBySide };

    explicit DiffModel(QObject* parent = nullptr);

    void setSources(const QString& before, const QString& after);
    void setMode(Mode mode);
    Mode mode() const { return mode_; }
    const QList<DiffLine>& lines() const { return lines_; }
    int added() const;
    int removed() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    /** A side-by-side row: indices into lines_, -1 for an empty half. */
    struct Pair {
        int left = -1, right = -1;
    };
    void pairUp();

    Mode mode_ = Mode::SideBySide;
    QList<DiffLine> lines_;
    QList<Pair> pairs_;
};

}  // namespace kfgui
