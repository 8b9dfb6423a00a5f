#pragma once
#include <QWidget>

#include <functional>
#include <optional>

#include "kf/library.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace kfgui {

class LibraryDetail;
class LibraryFilterProxy;
class LibraryTableModel;

/** Browses and curates the experience library: search, filter, approve, edit, import. */
class LibraryView : public QWidget {
    Q_OBJECT

public:
    explicit LibraryView(QWidget* parent = nullptr);
    ~LibraryView() override;

    /** Opens the library database at `path` (created if missing). */
    void setLibraryPath(const QString& path);
    QString libraryPath() const;

    LibraryTableModel* model() const { return model_; }
    LibraryFilterProxy* proxy() const { return proxy_; }
    LibraryDetail* detail() const { return detail_; }
    QTableView* table() const { return table_; }
    /** Sets the search box and queries the library at once (the box itself waits for a pause). */
    void setSearchText(const QString& text);
    /** Selects the row `proxyRow` of the filtered list. */
    void selectRow(int proxyRow);

public Q_SLOTS:
    /** Reads the library again, keeping the selection. */
    void reload();
    void approveSelected();
    void rejectSelected();
    void editSelected();
    void tagSelected();
    /** Asks for confirmation, then deletes the selected pattern or insight. */
    void deleteSelected();
    void importFile();
    void exportFile();
    /** Imports a JSON file; returns false (after a message box) when it could not. */
    bool importFrom(const QString& path);
    bool exportTo(const QString& path);

Q_SIGNALS:
    /** The library was changed through this view. */
    void libraryChanged();

private:
    struct Selection {
        bool pattern = false;
        std::int64_t id = 0;
    };
    std::optional<Selection> selection() const;
    /** Runs `op` on the open library; shows any error in a message box. */
    bool withLibrary(const QString& what, const std::function<void(kf::ExperienceLibrary&)>& op);
    void setInsightStatus(const std::string& status);
    void refillFilters();
    void updateButtons();
    void showSelected();

    std::optional<kf::ExperienceLibrary> library_;
    LibraryTableModel* model_;
    LibraryFilterProxy* proxy_;
    QLineEdit* search_;
    QTimer* searchTimer_;
    QComboBox* kind_;
    QComboBox* opClass_;
    QComboBox* bound_;
    QComboBox* status_;
    QTableView* table_;
    LibraryDetail* detail_;
    QLabel* count_;
    QPushButton* approve_;
    QPushButton* reject_;
    QPushButton* edit_;
    QPushButton* tag_;
    QPushButton* delete_;
    QPushButton* import_;
    QPushButton* export_;
};

}  // namespace kfgui
