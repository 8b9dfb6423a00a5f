// The ensemble behind the LLM experts: providers, accounting and budgets, the model
// bandit, cancellation, and insights about improvements.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kf/error.h"
#include "kf/llm/experts.h"
#include "kf/store.h"

namespace kf::llm {

using nlohmann::json;

// ---- ModelBandit ------------------------------------------------------------------------

std::string ModelBandit::choose(DiagnosisClass dclass, const std::vector<std::pair<std::string, double>>& models,
                                std::string* reason) const {
    std::lock_guard lock(mu_);
    if (models.empty()) return {};
    double weights = 0;
    int total = 0;
    for (const auto& [name, w] : models) {
        weights += w;
        if (auto c = stats_.find(dclass); c != stats_.end())
            if (auto s = c->second.find(name); s != c->second.end()) total += s->second.tries;
    }
    std::string best;
    double best_score = -1e300;
    for (const auto& [name, w] : models) {
        Stats s;
        if (auto c = stats_.find(dclass); c != stats_.end())
            if (auto it = c->second.find(name); it != c->second.end()) s = it->second;
        double mean = s.tries ? s.reward_sum / s.tries : 0;
        double bonus = exploration_ * std::sqrt(std::log(static_cast<double>(total) + 2.0) / (s.tries + 1.0));
        double prior = weights > 0 ? w / weights : 0;
        double score = prior + mean + bonus;
        if (score > best_score) {
            best_score = score;
            best = name;
            if (reason) {
                char buf[200];
                std::snprintf(buf, sizeof buf, "%s: model %s scored %.2f (weight %.2f, mean gain %.2f over %d tries, bonus %.2f)",
                              std::string(to_string(dclass)).c_str(), name.c_str(), score, prior, mean, s.tries, bonus);
                *reason = buf;
            }
        }
    }
    return best;
}

void ModelBandit::reward(const std::string& model, DiagnosisClass dclass, double gain) {
    std::lock_guard lock(mu_);
    Stats& s = stats_[dclass][model];
    ++s.tries;
    if (gain > 1.0) ++s.improvements;
    s.reward_sum += gain > 1.0 ? std::min(1.0, std::log(gain) * 2.0) : 0.0;
}

ModelBandit::Stats ModelBandit::stats(const std::string& model, DiagnosisClass dclass) const {
    std::lock_guard lock(mu_);
    auto c = stats_.find(dclass);
    if (c == stats_.end()) return {};
    auto s = c->second.find(model);
    return s == c->second.end() ? Stats{} : s->second;
}

json ModelBandit::to_json() const {
    std::lock_guard lock(mu_);
    json j = json::object();
    for (const auto& [dclass, per] : stats_)
        for (const auto& [model, s] : per)
            j[std::string(to_string(dclass))][model] = {{"tries", s.tries}, {"improvements", s.improvements}, {"reward_sum", s.reward_sum}};
    return j;
}

void ModelBandit::restore(const json& saved) {
    if (!saved.is_object()) return;
    std::lock_guard lock(mu_);
    for (auto c = saved.begin(); c != saved.end(); ++c) {
        auto dclass = parse_diagnosis_class(c.key());
        if (!c->is_object() || !dclass) continue;
        for (auto m = c->begin(); m != c->end(); ++m) {
            if (!m->is_object()) continue;
            Stats& s = stats_[*dclass][m.key()];
            s.tries += m->value("tries", 0);
            s.improvements += m->value("improvements", 0);
            s.reward_sum += m->value("reward_sum", 0.0);
        }
    }
}

std::string model_of_rationale(const std::string& rationale) {
    if (rationale.size() < 3 || rationale[0] != '[') return {};
    auto end = rationale.find("] ");
    return end == std::string::npos ? std::string() : rationale.substr(1, end - 1);
}

// ---- LlmEnsemble ------------------------------------------------------------------------

LlmEnsemble::LlmEnsemble(LlmConfig cfg, const std::filesystem::path& prompts_dir)
    : cfg_(std::move(cfg)), templates_(prompts_dir), accounting_(cfg_.budgets), bandit_(cfg_.exploration) {}

std::vector<std::pair<std::string, double>> LlmEnsemble::models_for(const std::string& role) const {
    std::vector<std::pair<std::string, double>> out;
    auto r = cfg_.roles.find(role);
    if (r != cfg_.roles.end() && !r->second.models.empty()) {
        for (const auto& name : r->second.models)
            if (const ModelConfig* m = cfg_.model(name)) out.emplace_back(m->name, m->weight);
    } else {
        for (const auto& m : cfg_.models) out.emplace_back(m.name, m.weight);
    }
    return out;
}

void LlmEnsemble::bind(const Task* task, Backend backend) {
    std::lock_guard lock(mu_);
    bound_ = {task, backend};
}

LlmEnsemble::Bound LlmEnsemble::bound() const {
    std::lock_guard lock(mu_);
    return bound_;
}

void LlmEnsemble::cancel() { cancelled_ = true; }

void LlmEnsemble::watch(RunControl* control) {
    std::lock_guard lock(mu_);
    control_ = control;
}

void LlmEnsemble::watch(std::function<bool()> stop) {
    std::lock_guard lock(mu_);
    stop_ = std::move(stop);
}

bool LlmEnsemble::cancelled() const {
    if (cancelled_) return true;
    std::lock_guard lock(mu_);
    return (control_ && control_->stop_requested()) || (stop_ && stop_());
}

bool LlmEnsemble::budget_spent(std::string* why) const { return accounting_.spent(why); }

std::string LlmEnsemble::summary() const {
    // The roles experts() makes: the enabled ones, named "llm:<role>".
    std::string roles, models;
    int count = 0;
    for (const auto& spec : role_specs()) {
        auto rc = cfg_.roles.find(spec.id);
        if (rc == cfg_.roles.end() || !rc->second.enabled) continue;
        roles += (roles.empty() ? "llm:" : ", llm:") + spec.id;
        ++count;
    }
    for (const auto& m : cfg_.models) models += (models.empty() ? "" : ", ") + m.name + " (" + m.provider + ")";
    return "LLM experts: " + std::to_string(count) + " roles (" + roles + "), models " + models;
}

void LlmEnsemble::attach(const Task* task, Backend backend, RunControl* control, std::function<bool()> stopping) {
    bind(task, backend);
    watch(task ? control : nullptr);
    watch(task ? std::move(stopping) : std::function<bool()>());
}

json LlmEnsemble::usage() const { return accounting_.to_json(); }

std::int64_t LlmEnsemble::usage_serial() const { return accounting_.totals().calls; }

void LlmEnsemble::observe(const SearchEvent& e, const ProviderRun& run) {
    observe(e);
    // An LLM child that beat its parent: an insight for the experience library ("proposed").
    if (!run.library || !cfg_.insights || e.kind != EventKind::Evaluated || e.data.value("gain", 0.0) <= 1.0 ||
        e.data.value("expert", "").rfind("llm:", 0) != 0 || !run.candidate)
        return;
    auto parent_class = parse_diagnosis_class(e.data.value("parent_class", ""));
    auto child = run.candidate(e.member);
    if (!parent_class || !child || child->parents.empty()) return;
    auto parent = run.candidate(child->parents.front());
    if (!parent) return;
    InsightRequest req;
    req.expert = child->expert;
    req.model = model_of_rationale(child->rationale);
    req.op_class = run.task ? run.task->op_class : std::string();
    req.diagnosis_class = *parent_class;
    req.parent_source = parent->source;
    req.child_source = child->source;
    req.rationale = child->rationale;
    req.gain = e.data.value("gain", 0.0);
    req.run_id = std::to_string(run.run_id);
    req.candidate_id = std::to_string(e.member);
    request_insight(req, run.library);
}

json LlmEnsemble::state() const { return {{"usage", accounting_.to_json()}, {"bandit", bandit_.to_json()}}; }

void LlmEnsemble::restore(const json& saved) {
    if (!saved.is_object()) return;
    if (auto u = saved.find("usage"); u != saved.end()) accounting_.restore(*u);
    if (auto b = saved.find("bandit"); b != saved.end()) bandit_.restore(*b);
}

void LlmEnsemble::note_budget() {
    if (!accounting_.spent() || stop_requested_.exchange(true)) return;
    std::lock_guard lock(mu_);
    if (control_) control_->request_stop();
}

ChatResponse LlmEnsemble::call(const std::string& expert, const std::string& model, const ChatRequest& req) {
    ChatResponse r;
    const ModelConfig* m = cfg_.model(model);
    auto p = m ? providers_.find(m->provider) : providers_.end();
    if (p == providers_.end()) {
        r.error = "no provider for model '" + model + "'";
        return r;
    }
    std::string why;
    if (!accounting_.begin_call(why)) {
        r.error = why;
        r.budget_spent = true;
        note_budget();
        return r;
    }
    ChatRequest sent = req;
    sent.model = model;
    try {
        r = p->second->complete(sent, [this] { return cancelled(); });
    } catch (const std::exception& e) {
        r = {};
        r.error = std::string("provider failed: ") + e.what();
    }
    if (!r.sent) {
        // Abandoned before anything left for the endpoint: not a call, nothing to pay.
        accounting_.abandon_call();
        return r;
    }
    CallRecord rec;
    rec.expert = expert;
    rec.model = model;
    rec.provider = m->provider;
    rec.usage = r.usage;
    if (const ProviderConfig* pc = cfg_.provider(m->provider)) {
        auto price = pc->prices.find(model);
        if (price != pc->prices.end()) rec.cost = cost_of(r.usage, price->second);
    }
    rec.seconds = r.seconds;
    rec.attempts = r.attempts;
    rec.outcome = r.ok ? (r.truncated ? "truncated" : "ok") : r.error;
    accounting_.end_call(rec);
    note_budget();
    return r;
}

void LlmEnsemble::reward(const std::string& model, DiagnosisClass dclass, double gain) {
    if (!model.empty()) bandit_.reward(model, dclass, gain);
}

void LlmEnsemble::observe(const SearchEvent& e) {
    if (e.kind != EventKind::Evaluated || !e.data.is_object()) return;
    std::string expert = e.data.value("expert", "");
    if (expert.rfind("llm:", 0) != 0) return;
    std::string model = model_of_rationale(e.data.value("rationale", ""));
    if (model.empty() || !cfg_.model(model)) return;
    auto dclass = parse_diagnosis_class(e.data.value("parent_class", ""));
    if (dclass) reward(model, *dclass, e.data.value("gain", 0.0));
}

namespace {

std::string trim(std::string s) {
    auto a = s.find_first_not_of(" \t\r\n\"*`");
    if (a == std::string::npos) return {};
    auto b = s.find_last_not_of(" \t\r\n\"*`");
    return s.substr(a, b - a + 1);
}

/** condition and action from `{"condition": ..., "action": ...}` or "CONDITION: ... / ACTION: ..." lines. */
std::pair<std::string, std::string> insight_of(const std::string& text) {
    for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
        std::size_t close = text.rfind('}');
        if (close == std::string::npos || close < open) break;
        json j = json::parse(text.substr(open, close - open + 1), nullptr, false);
        if (j.is_object() && j.contains("action") && j["action"].is_string())
            return {j.contains("condition") && j["condition"].is_string() ? j["condition"].get<std::string>() : "",
                    j["action"].get<std::string>()};
    }
    std::string condition, action;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        std::string lower = line;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        lower = trim(lower);
        line = trim(line);
        if (lower.rfind("condition:", 0) == 0) condition = trim(line.substr(10));
        else if (lower.rfind("action:", 0) == 0) action = trim(line.substr(7));
    }
    return {condition, action};
}

}  // namespace

std::optional<Insight> LlmEnsemble::request_insight(const InsightRequest& req, ExperienceLibrary* library, std::string* why) {
    auto fail = [&](const std::string& w) -> std::optional<Insight> {
        if (why) *why = w;
        return std::nullopt;
    };
    if (cancelled()) return fail("cancelled: the run is stopping");
    std::string role = req.expert.rfind("llm:", 0) == 0 ? req.expert.substr(4) : req.expert;
    std::string model = req.model;
    if (model.empty() || !cfg_.model(model)) model = bandit_.choose(req.diagnosis_class, models_for(role));
    if (model.empty()) return fail("no model for the insight");
    char gain[32];
    std::snprintf(gain, sizeof gain, "%.3f", req.gain);
    TemplateValues v = {{"expert", req.expert},
                        {"op_class", req.op_class},
                        {"diagnosis_class", std::string(to_string(req.diagnosis_class))},
                        {"gain", gain},
                        {"rationale", req.rationale},
                        {"parent_source", excerpt(req.parent_source, 150, 8000)},
                        {"child_source", excerpt(req.child_source, 150, 8000)}};
    ChatRequest cr;
    try {
        cr.system = templates_.render("system", v);
        cr.user = templates_.render("insight", v);
    } catch (const Error& e) {
        return fail(e.what());
    }
    cr.max_tokens = 400;
    cr.temperature = 0.2;
    ChatResponse r = call(req.expert, model, cr);
    if (!r.ok) return fail("model " + model + ": " + r.error);
    auto [condition, action] = insight_of(r.text);
    if (action.empty()) return fail("model " + model + ": no insight in the answer");
    if (action.size() > 400) action = action.substr(0, 400) + "...";
    if (condition.size() > 200) condition = condition.substr(0, 200) + "...";
    Insight in;
    in.condition.op_class = req.op_class;
    if (is_bound(req.diagnosis_class)) in.condition.bound = to_string(req.diagnosis_class);
    else in.condition.status = to_string(req.diagnosis_class);
    in.condition.expert = req.expert;
    in.action = condition.empty() ? action : condition + " -> " + action;
    in.expert = req.expert;
    in.evidence.applications = 1;
    in.evidence.successes = req.gain > 1.0 ? 1 : 0;
    if (req.gain > 1.0) in.evidence.gains = {req.gain};
    if (!req.run_id.empty()) in.provenance.run_ids = {req.run_id};
    if (!req.candidate_id.empty()) in.provenance.candidate_ids = {req.candidate_id};
    in.status = "proposed";
    if (library) {
        try {
            in.id = library->add_insight(in);
        } catch (const Error& e) {
            if (why) *why = std::string("the insight could not be stored: ") + e.what();
        }
    }
    return in;
}

}  // namespace kf::llm
