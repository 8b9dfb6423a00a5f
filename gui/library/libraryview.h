#pragma once
#include <QWidget>

namespace kfgui {

/** Browses and curates the experience library: search, filter, approve, edit, import. */
class LibraryView : public QWidget {
    Q_OBJECT

public:
    explicit LibraryView(QWidget* parent = nullptr);

    /** Opens the library database at `path` (created if missing). */
    void setLibraryPath(const QString& path);
};

}  // namespace kfgui
