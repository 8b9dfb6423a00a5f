#pragma once
#include <QWidget>

class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace kfgui {

class PopulationModel;

/** The population table with a filter box and a Compare button for two selected rows. */
class PopulationView : public QWidget {
    Q_OBJECT

public:
    explicit PopulationView(QWidget* parent = nullptr);

    PopulationModel* model() const { return model_; }
    QSortFilterProxyModel* proxy() const { return proxy_; }
    QTableView* table() const { return table_; }
    /** The ids of the selected rows, in table order. */
    QList<qint64> selectedIds() const;
    /** Selects the row of candidate `id` (clearing the filter when it hides it). */
    void selectCandidate(qint64 id);

Q_SIGNALS:
    /** The current row changed to candidate `id`. */
    void candidateSelected(qint64 id);
    void compareRequested(qint64 a, qint64 b);

private:
    void selectionChanged();

    PopulationModel* model_;
    QSortFilterProxyModel* proxy_;
    QLineEdit* filter_;
    QTableView* table_;
    QPushButton* compare_;
};

}  // namespace kfgui
