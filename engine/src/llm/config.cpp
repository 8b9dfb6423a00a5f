// Reading and validating the LLM configuration; every error names its field.
#include <fstream>
#include <set>
#include <sstream>

#include "kf/llm/config.h"

namespace kf::llm {

using nlohmann::json;

const std::vector<std::string>& role_ids() {
    static const std::vector<std::string> ids = {"memory", "compute", "fusion", "occupancy", "warp", "numerics", "compile"};
    return ids;
}

std::string_view to_string(ProviderKind k) { return k == ProviderKind::OpenAI ? "openai" : "anthropic"; }

const ProviderConfig* LlmConfig::provider(const std::string& name) const {
    for (const auto& p : providers)
        if (p.name == name) return &p;
    return nullptr;
}

const ModelConfig* LlmConfig::model(const std::string& name) const {
    for (const auto& m : models)
        if (m.name == name) return &m;
    return nullptr;
}

namespace {

void only_keys(const json& j, const std::string& at, std::initializer_list<const char*> allowed) {
    if (!j.is_object()) throw ConfigError(at, "expected an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
        bool known = false;
        for (const char* k : allowed) known = known || it.key() == k;
        if (!known) {
            std::string list;
            for (const char* k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
            throw ConfigError(at.empty() ? it.key() : at + "." + it.key(), "unknown key (known: " + list + ")");
        }
    }
}

std::string field(const std::string& at, const char* key) { return at.empty() ? key : at + "." + key; }

std::string get_string(const json& j, const std::string& at, const char* key, bool required, std::string def = {}) {
    if (!j.contains(key)) {
        if (required) throw ConfigError(field(at, key), "missing");
        return def;
    }
    if (!j[key].is_string()) throw ConfigError(field(at, key), "expected a string");
    std::string s = j[key].get<std::string>();
    if (required && s.empty()) throw ConfigError(field(at, key), "must not be empty");
    return s;
}

double get_number(const json& j, const std::string& at, const char* key, double def, double min, bool strict_min = false) {
    if (!j.contains(key)) return def;
    if (!j[key].is_number()) throw ConfigError(field(at, key), "expected a number");
    double v = j[key].get<double>();
    if (v < min || (strict_min && v == min)) {
        std::ostringstream os;
        os << "must be " << (strict_min ? "greater than " : "at least ") << min << ", got " << v;
        throw ConfigError(field(at, key), os.str());
    }
    return v;
}

int get_int(const json& j, const std::string& at, const char* key, int def, int min) {
    if (!j.contains(key)) return def;
    if (!j[key].is_number_integer()) throw ConfigError(field(at, key), "expected an integer");
    long long v = j[key].get<long long>();
    if (v < min || v > 1000000000) throw ConfigError(field(at, key), "must be at least " + std::to_string(min) + ", got " + std::to_string(v));
    return static_cast<int>(v);
}

bool get_bool(const json& j, const std::string& at, const char* key, bool def) {
    if (!j.contains(key)) return def;
    if (!j[key].is_boolean()) throw ConfigError(field(at, key), "expected true or false");
    return j[key].get<bool>();
}

void check_url(const std::string& url, const std::string& at) {
    auto scheme = url.find("://");
    std::string s = scheme == std::string::npos ? "" : url.substr(0, scheme);
    if (s != "http" && s != "https") throw ConfigError(at, "'" + url + "' is not an http:// or https:// URL");
    std::string rest = url.substr(scheme + 3);
    std::string host = rest.substr(0, rest.find_first_of("/?#"));
    if (host.empty() || host.find_first_of(" \t\r\n") != std::string::npos) throw ConfigError(at, "'" + url + "' names no host");
    if (url.find_first_of(" \t\r\n") != std::string::npos) throw ConfigError(at, "'" + url + "' contains white space");
    if (rest.find('@') != std::string::npos && rest.find('@') < rest.find('/'))
        throw ConfigError(at, "credentials do not belong in the URL; name an environment variable in api_key_env");
}

ProviderConfig parse_provider(const json& j, const std::string& at) {
    if (j.is_object() && j.contains("api_key"))
        throw ConfigError(field(at, "api_key"), "keys do not belong in the file; name an environment variable in api_key_env");
    only_keys(j, at, {"name", "kind", "base_url", "api_key_env", "concurrency", "timeout_s", "connect_timeout_s",
                      "stall_timeout_s", "retries", "backoff_s", "max_backoff_s", "anthropic_version", "prices"});
    ProviderConfig p;
    p.name = get_string(j, at, "name", true);
    std::string kind = get_string(j, at, "kind", true);
    if (kind == "openai") p.kind = ProviderKind::OpenAI;
    else if (kind == "anthropic") p.kind = ProviderKind::Anthropic;
    else throw ConfigError(field(at, "kind"), "'" + kind + "' is not a provider kind (openai or anthropic)");
    p.base_url = get_string(j, at, "base_url", true);
    check_url(p.base_url, field(at, "base_url"));
    while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
    p.api_key_env = get_string(j, at, "api_key_env", false);
    if (!p.api_key_env.empty() && p.api_key_env.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
        throw ConfigError(field(at, "api_key_env"), "must be the name of an environment variable, not a key");
    p.concurrency = get_int(j, at, "concurrency", p.concurrency, 1);
    p.timeout_s = get_number(j, at, "timeout_s", p.timeout_s, 0, true);
    p.connect_timeout_s = get_number(j, at, "connect_timeout_s", p.connect_timeout_s, 0, true);
    p.stall_timeout_s = get_number(j, at, "stall_timeout_s", p.stall_timeout_s, 0, true);
    p.retries = get_int(j, at, "retries", p.retries, 0);
    p.backoff_s = get_number(j, at, "backoff_s", p.backoff_s, 0);
    p.max_backoff_s = get_number(j, at, "max_backoff_s", p.max_backoff_s, 0);
    p.anthropic_version = get_string(j, at, "anthropic_version", false, p.anthropic_version);
    if (j.contains("prices")) {
        std::string pat = field(at, "prices");
        if (!j["prices"].is_object()) throw ConfigError(pat, "expected an object of model -> {input, output}");
        for (auto it = j["prices"].begin(); it != j["prices"].end(); ++it) {
            std::string mat = pat + "." + it.key();
            only_keys(*it, mat, {"input", "output"});
            Price pr;
            pr.input_per_mtok = get_number(*it, mat, "input", 0, 0);
            pr.output_per_mtok = get_number(*it, mat, "output", 0, 0);
            p.prices[it.key()] = pr;
        }
    }
    return p;
}

}  // namespace

LlmConfig parse_llm_config(const json& j) {
    only_keys(j, "", {"providers", "models", "roles", "budgets", "prompts_dir", "insights", "exploration"});
    LlmConfig cfg;
    if (!j.contains("providers") || !j["providers"].is_array() || j["providers"].empty())
        throw ConfigError("providers", "at least one provider is needed (a list of objects)");
    std::set<std::string> names;
    for (std::size_t i = 0; i < j["providers"].size(); ++i) {
        std::string at = "providers[" + std::to_string(i) + "]";
        cfg.providers.push_back(parse_provider(j["providers"][i], at));
        if (!names.insert(cfg.providers.back().name).second)
            throw ConfigError(at + ".name", "provider '" + cfg.providers.back().name + "' is defined twice");
    }
    if (!j.contains("models") || !j["models"].is_array() || j["models"].empty())
        throw ConfigError("models", "at least one model is needed (a list of objects)");
    std::set<std::string> model_names;
    for (std::size_t i = 0; i < j["models"].size(); ++i) {
        std::string at = "models[" + std::to_string(i) + "]";
        const json& m = j["models"][i];
        only_keys(m, at, {"name", "provider", "weight"});
        ModelConfig mc;
        mc.name = get_string(m, at, "name", true);
        mc.provider = get_string(m, at, "provider", cfg.providers.size() != 1, cfg.providers.front().name);
        if (!cfg.provider(mc.provider)) throw ConfigError(at + ".provider", "no provider named '" + mc.provider + "'");
        mc.weight = get_number(m, at, "weight", 1.0, 0, true);
        if (!model_names.insert(mc.name).second) throw ConfigError(at + ".name", "model '" + mc.name + "' is listed twice");
        cfg.models.push_back(mc);
    }
    if (j.contains("roles")) {
        const json& r = j["roles"];
        if (!r.is_object()) throw ConfigError("roles", "expected an object of role -> settings");
        for (auto it = r.begin(); it != r.end(); ++it) {
            std::string at = "roles." + it.key();
            bool known = false;
            for (const auto& id : role_ids()) known = known || id == it.key();
            if (!known) {
                std::string list;
                for (const auto& id : role_ids()) list += (list.empty() ? "" : ", ") + id;
                throw ConfigError(at, "unknown role (known: " + list + ")");
            }
            RoleConfig rc;
            if (it->is_boolean()) {
                rc.enabled = it->get<bool>();
            } else {
                only_keys(*it, at, {"enabled", "models", "max_tokens", "temperature"});
                rc.enabled = get_bool(*it, at, "enabled", true);
                rc.max_tokens = get_int(*it, at, "max_tokens", rc.max_tokens, 16);
                rc.temperature = get_number(*it, at, "temperature", rc.temperature, 0);
                if (rc.temperature > 2) throw ConfigError(at + ".temperature", "must be at most 2");
                if (it->contains("models")) {
                    const json& ms = (*it)["models"];
                    if (!ms.is_array()) throw ConfigError(at + ".models", "expected a list of model names");
                    for (std::size_t k = 0; k < ms.size(); ++k) {
                        std::string mat = at + ".models[" + std::to_string(k) + "]";
                        if (!ms[k].is_string()) throw ConfigError(mat, "expected a model name");
                        std::string name = ms[k].get<std::string>();
                        if (!cfg.model(name)) throw ConfigError(mat, "no model named '" + name + "' in models");
                        rc.models.push_back(name);
                    }
                }
            }
            cfg.roles[it.key()] = rc;
        }
    } else {
        for (const auto& id : role_ids()) cfg.roles[id] = RoleConfig{};
    }
    if (j.contains("budgets")) {
        const json& b = j["budgets"];
        only_keys(b, "budgets", {"max_tokens", "max_cost", "max_calls"});
        for (const char* k : {"max_tokens", "max_calls"})
            if (b.contains(k) && (!b[k].is_number_integer() || b[k].get<long long>() < 0))
                throw ConfigError(std::string("budgets.") + k, "must be a non-negative integer (0: unlimited)");
        cfg.budgets.max_tokens = b.value("max_tokens", std::int64_t{0});
        cfg.budgets.max_calls = b.value("max_calls", std::int64_t{0});
        if (b.contains("max_cost") && (!b["max_cost"].is_number() || b["max_cost"].get<double>() < 0))
            throw ConfigError("budgets.max_cost", "must be a non-negative number (0: unlimited)");
        cfg.budgets.max_cost = b.value("max_cost", 0.0);
    }
    cfg.prompts_dir = get_string(j, "", "prompts_dir", false);
    cfg.insights = get_bool(j, "", "insights", true);
    cfg.exploration = get_number(j, "", "exploration", cfg.exploration, 0);
    return cfg;
}

LlmConfig load_llm_config(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw ConfigError("", "cannot read the LLM config", file.string());
    std::stringstream ss;
    ss << in.rdbuf();
    json j = json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) throw ConfigError("", "not valid JSON", file.string());
    try {
        LlmConfig cfg = parse_llm_config(j);
        if (!cfg.prompts_dir.empty() && cfg.prompts_dir.is_relative()) cfg.prompts_dir = file.parent_path() / cfg.prompts_dir;
        return cfg;
    } catch (const ConfigError& e) {
        throw ConfigError(e.field(), e.reason(), file.string());
    }
}

}  // namespace kf::llm
