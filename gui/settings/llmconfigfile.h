#pragma once
// The LLM experts' configuration as the app keeps it: the engine's own JSON format
// (docs/llm.md) in the app's config folder, without keys.
#include <QByteArray>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

namespace kfgui {

/** <config dir>/llm.json (QStandardPaths::AppConfigLocation). */
QString llmConfigPath();

/**
 * Checks a configuration with the engine's validator (kf::llm::parse_llm_config); false with
 * the engine's message, which names the field, in `error`.
 */
bool validateLlmConfig(const nlohmann::json& config, QString* error = nullptr);

/** The saved configuration; null when there is none, or when it cannot be read (`error`). */
nlohmann::json loadLlmConfig(QString* error = nullptr);

/** Validates, then writes the configuration; false (nothing written) with the reason. */
bool saveLlmConfig(const nlohmann::json& config, QString* error = nullptr);

/** True when a valid configuration with at least one provider is saved. */
bool llmProvidersConfigured();

/** Provider names of a configuration, in order. */
QStringList llmProviderNames(const nlohmann::json& config);

/** The keyring entry of a provider's key: service "kernel-foundry", key "llm/<provider>". */
inline QString keyringService() { return QStringLiteral("kernel-foundry"); }
inline QString keyringKey(const QString& provider) { return QStringLiteral("llm/") + provider; }

}  // namespace kfgui
