#include "settings/llmconfigfile.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <QStringList>

#include "kf/llm/config.h"

namespace kfgui {

QString llmConfigPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/llm.json");
}

bool validateLlmConfig(const nlohmann::json& config, QString* error) {
    try {
        kf::llm::parse_llm_config(config);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

nlohmann::json loadLlmConfig(QString* error) {
    QFile file(llmConfigPath());
    if (!file.exists()) return nullptr;
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = QCoreApplication::translate("kfgui::LlmConfig", "Cannot read %1: %2").arg(file.fileName(), file.errorString());
        return nullptr;
    }
    nlohmann::json j = nlohmann::json::parse(file.readAll().toStdString(), nullptr, false);
    if (j.is_discarded()) {
        if (error) *error = QCoreApplication::translate("kfgui::LlmConfig", "%1 is not valid JSON").arg(file.fileName());
        return nullptr;
    }
    return j;
}

bool saveLlmConfig(const nlohmann::json& config, QString* error) {
    if (!validateLlmConfig(config, error)) return false;
    const QString path = llmConfigPath();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error) *error = QCoreApplication::translate("kfgui::LlmConfig", "Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.write(QByteArray::fromStdString(config.dump(2) + "\n"));
    if (!file.commit()) {
        if (error) *error = QCoreApplication::translate("kfgui::LlmConfig", "Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool llmProvidersConfigured() {
    const nlohmann::json j = loadLlmConfig();
    return !j.is_null() && validateLlmConfig(j);
}

QStringList llmProviderNames(const nlohmann::json& config) {
    QStringList out;
    if (!config.is_object() || !config.contains("providers") || !config["providers"].is_array()) return out;
    for (const auto& p : config["providers"])
        if (p.is_object() && p.contains("name") && p["name"].is_string()) out << QString::fromStdString(p["name"].get<std::string>());
    return out;
}

}  // namespace kfgui
