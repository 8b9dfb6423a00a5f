#pragma once
// Typed settings: each key and its default are written once, here.
#include <QByteArray>
#include <QSettings>
#include <QString>
#include <QVariant>

namespace kfgui {

/** A QSettings entry of type T with its key and default value. */
template <typename T>
struct Preference {
    const char* key;
    T fallback;

    T get() const {
        QSettings settings;
        return settings.value(QLatin1String(key), QVariant::fromValue(fallback)).template value<T>();
    }
    void set(const T& value) const {
        QSettings settings;
        settings.setValue(QLatin1String(key), QVariant::fromValue(value));
    }
};

namespace prefs {
inline const Preference<QByteArray> windowGeometry{"mainwindow/geometry", {}};
inline const Preference<QByteArray> windowState{"mainwindow/state", {}};
inline const Preference<QByteArray> browserSplitter{"taskbrowser/splitter", {}};
}  // namespace prefs

}  // namespace kfgui
