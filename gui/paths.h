#pragma once
// Conversions between QString and std::filesystem::path at the engine boundary. File names
// go through the local 8-bit encoding, as QFile does, so that no name is mangled.
#include <filesystem>

#include <QFile>
#include <QString>

namespace kfgui {

inline std::filesystem::path toPath(const QString& s) {
    return std::filesystem::path(QFile::encodeName(s).toStdString());
}

inline QString fromPath(const std::filesystem::path& p) {
    return QFile::decodeName(QByteArray::fromStdString(p.string()));
}

inline QString fromUtf8(const std::string& s) { return QString::fromStdString(s); }

}  // namespace kfgui
