#pragma once
/**
 * Configuration of the LLM experts: providers (OpenAI-compatible or Anthropic endpoints),
 * the models they serve with their ensemble weights, the expert roles that are on, and the
 * budgets that end a run. Read from a JSON file (`kfoundry evolve --llm-config FILE`);
 * every error names the offending field. API keys are never part of the file: a provider
 * names the environment variable that holds its key. Format: docs/llm.md.
 */
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/error.h"

namespace kf::llm {

/** A configuration that cannot be used; field() is a path such as "providers[0].base_url". */
class ConfigError : public Error {
public:
    ConfigError(std::string field, std::string reason, const std::string& file = {})
        : Error((file.empty() ? std::string() : file + ": ") + (field.empty() ? std::string() : field + ": ") + reason),
          field_(std::move(field)), reason_(std::move(reason)) {}
    const std::string& field() const { return field_; }
    const std::string& reason() const { return reason_; }

private:
    std::string field_, reason_;
};

/** Price of a model in money units (e.g. USD) per million tokens. */
struct Price {
    double input_per_mtok = 0;
    double output_per_mtok = 0;
};

enum class ProviderKind { OpenAI, Anthropic };

struct ProviderConfig {
    std::string name;
    ProviderKind kind = ProviderKind::OpenAI;
    /** OpenAI-compatible: ".../v1" (chat/completions is appended); Anthropic: ".../v1" (messages is appended). */
    std::string base_url;
    std::string api_key_env;  ///< environment variable holding the key; empty: no key (local servers)
    /**
     * The key itself, held in memory only (e.g. read from the OS keyring by the app); wins
     * over api_key_env. Never read from nor written to a configuration file.
     */
    std::string api_key;
    int concurrency = 4;      ///< requests in flight at once
    double timeout_s = 300;   ///< whole request
    double connect_timeout_s = 10;
    double stall_timeout_s = 120;  ///< no byte received for this long ends the attempt (answers are not streamed)
    int retries = 3;              ///< further attempts after a 429, 5xx, timeout or connection error
    double backoff_s = 1.0;       ///< first back-off; doubled per attempt, with jitter
    double max_backoff_s = 30;
    std::string anthropic_version = "2023-06-01";
    std::map<std::string, Price> prices;  ///< by model name
};

struct ModelConfig {
    std::string name;      ///< the model id the endpoint knows, e.g. "gpt-4o" or "qwen2.5-coder:32b"
    std::string provider;  ///< a ProviderConfig::name
    double weight = 1.0;   ///< ensemble weight (prior of the model bandit)
};

struct RoleConfig {
    bool enabled = true;
    std::vector<std::string> models;  ///< empty: every model
    int max_tokens = 4096;
    double temperature = 0.7;
};

/** Limits over a whole run; 0 means unlimited. */
struct Budgets {
    std::int64_t max_tokens = 0;  ///< input + output tokens
    double max_cost = 0;          ///< in the prices' money unit
    std::int64_t max_calls = 0;
};

struct LlmConfig {
    std::vector<ProviderConfig> providers;
    std::vector<ModelConfig> models;
    /** By role id (memory, compute, fusion, occupancy, warp, numerics, compile). */
    std::map<std::string, RoleConfig> roles;
    Budgets budgets;
    std::filesystem::path prompts_dir;  ///< empty: resources/prompts
    bool insights = true;               ///< ask for an insight when an LLM child beats its parent
    double exploration = 0.5;           ///< UCB exploration of the model bandit

    const ProviderConfig* provider(const std::string& name) const;
    const ModelConfig* model(const std::string& name) const;
};

/** The role ids, in a fixed order. */
const std::vector<std::string>& role_ids();

/**
 * Validates and reads a configuration. Unknown keys, missing or dangling references, bad
 * URLs and out-of-range numbers throw ConfigError naming the field. Roles absent from the
 * "roles" object are off when that object is given, all on when it is not.
 */
LlmConfig parse_llm_config(const nlohmann::json& j);
/** Reads a JSON file; the file name is prefixed to errors. A relative prompts_dir is resolved against the file's folder. */
LlmConfig load_llm_config(const std::filesystem::path& file);

std::string_view to_string(ProviderKind k);

}  // namespace kf::llm
