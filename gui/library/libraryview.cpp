#include "library/libraryview.h"

namespace kfgui {

LibraryView::LibraryView(QWidget* parent) : QWidget(parent) {}

void LibraryView::setLibraryPath(const QString& path) { Q_UNUSED(path); }

}  // namespace kfgui
