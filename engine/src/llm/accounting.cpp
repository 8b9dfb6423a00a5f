// Tokens, money and calls per call, per expert, per model and per run, against the budgets.

#include "kf/llm/accounting.h"

namespace kf::llm {

using nlohmann::json;

double cost_of(const Usage& u, const Price& p) {
    return (static_cast<double>(u.input_tokens) * p.input_per_mtok + static_cast<double>(u.output_tokens) * p.output_per_mtok) / 1e6;
}

std::optional<StopReason> Accounting::spent_locked(std::int64_t calls) const {
    if (budgets_.max_calls > 0 && calls >= budgets_.max_calls)
        return StopReason{StopKind::LlmCalls, double(calls), double(budgets_.max_calls), {}};
    if (budgets_.max_tokens > 0 && totals_.tokens() >= budgets_.max_tokens)
        return StopReason{StopKind::LlmTokens, double(totals_.tokens()), double(budgets_.max_tokens), {}};
    if (budgets_.max_cost > 0 && totals_.cost >= budgets_.max_cost)
        return StopReason{StopKind::LlmCost, totals_.cost, budgets_.max_cost, {}};
    return std::nullopt;
}

bool Accounting::begin_call(std::string& why) {
    std::lock_guard lock(mu_);
    // Calls in flight count toward the call cap, so that concurrent experts cannot overshoot it.
    if (auto spent = spent_locked(totals_.calls + in_flight_)) {
        why = to_string(*spent);
        return false;
    }
    ++in_flight_;
    return true;
}

void Accounting::end_call(const CallRecord& r) {
    std::lock_guard lock(mu_);
    if (in_flight_ > 0) --in_flight_;
    for (UsageTotals* t : {&totals_, &per_expert_[r.expert], &per_model_[r.model]}) {
        ++t->calls;
        t->input_tokens += r.usage.input_tokens;
        t->output_tokens += r.usage.output_tokens;
        t->cost += r.cost;
    }
    calls_.push_back(r);
}

void Accounting::abandon_call() {
    std::lock_guard lock(mu_);
    if (in_flight_ > 0) --in_flight_;
}

bool Accounting::spent(std::string* why) const {
    auto spent = spent_budget();
    if (spent && why) *why = to_string(*spent);
    return spent.has_value();
}

std::optional<StopReason> Accounting::spent_budget() const {
    std::lock_guard lock(mu_);
    return spent_locked(totals_.calls);
}

UsageTotals Accounting::totals() const {
    std::lock_guard lock(mu_);
    return totals_;
}

std::int64_t Accounting::in_flight() const {
    std::lock_guard lock(mu_);
    return in_flight_;
}

std::map<std::string, UsageTotals> Accounting::per_expert() const {
    std::lock_guard lock(mu_);
    return per_expert_;
}

std::map<std::string, UsageTotals> Accounting::per_model() const {
    std::lock_guard lock(mu_);
    return per_model_;
}

std::vector<CallRecord> Accounting::calls() const {
    std::lock_guard lock(mu_);
    return calls_;
}

namespace {
json totals_json(const UsageTotals& t) {
    return {{"calls", t.calls}, {"input_tokens", t.input_tokens}, {"output_tokens", t.output_tokens}, {"cost", t.cost}};
}
void add_totals(UsageTotals& t, const json& j) {
    if (!j.is_object()) return;
    t.calls += j.value("calls", std::int64_t{0});
    t.input_tokens += j.value("input_tokens", std::int64_t{0});
    t.output_tokens += j.value("output_tokens", std::int64_t{0});
    t.cost += j.value("cost", 0.0);
}
}  // namespace

void Accounting::restore(const json& saved) {
    if (!saved.is_object()) return;
    std::lock_guard lock(mu_);
    if (auto t = saved.find("totals"); t != saved.end()) add_totals(totals_, *t);
    if (auto e = saved.find("experts"); e != saved.end() && e->is_object())
        for (auto it = e->begin(); it != e->end(); ++it) add_totals(per_expert_[it.key()], *it);
    if (auto m = saved.find("models"); m != saved.end() && m->is_object())
        for (auto it = m->begin(); it != m->end(); ++it) add_totals(per_model_[it.key()], *it);
}

json Accounting::to_json() const {
    std::lock_guard lock(mu_);
    json j = {{"totals", totals_json(totals_)},
              {"budgets", {{"max_tokens", budgets_.max_tokens}, {"max_cost", budgets_.max_cost}, {"max_calls", budgets_.max_calls}}}};
    j["experts"] = json::object();
    for (const auto& [k, v] : per_expert_) j["experts"][k] = totals_json(v);
    j["models"] = json::object();
    for (const auto& [k, v] : per_model_) j["models"][k] = totals_json(v);
    return j;
}

}  // namespace kf::llm
