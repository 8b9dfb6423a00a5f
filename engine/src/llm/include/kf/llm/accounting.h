#pragma once
/**
 * Token and money accounting of the LLM experts, per call, per expert, per model and per
 * run, against the run's budgets. Thread-safe: experts call it from their own threads.
 */
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/vocabulary.h"

#include "kf/llm/client.h"

namespace kf::llm {

struct CallRecord {
    std::string expert;  ///< e.g. "llm:memory"
    std::string model;
    std::string provider;
    Usage usage;
    double cost = 0;
    double seconds = 0;
    int attempts = 0;
    std::string outcome;  ///< "ok", or why the call or its answer failed
};

struct UsageTotals {
    std::int64_t calls = 0;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    double cost = 0;
    std::int64_t tokens() const { return input_tokens + output_tokens; }
};

/** Cost of a call from a price per million tokens. */
double cost_of(const Usage& u, const Price& p);

class Accounting {
public:
    explicit Accounting(Budgets budgets = {}) : budgets_(budgets) {}

    /**
     * Reserves a call against the budgets (calls in flight count toward the call cap).
     * False, with the reason ("LLM budget spent: ..."), once any budget is spent.
     */
    bool begin_call(std::string& why);
    /** Records a finished call (successful or not) and releases its reservation. */
    void end_call(const CallRecord& r);
    /** Releases the reservation of a call that never reached its endpoint; nothing is counted. */
    void abandon_call();
    /** True once a budget is spent; `why` gets the reason. */
    bool spent(std::string* why = nullptr) const;
    /** The budget that is spent (StopKind::LlmCalls, LlmTokens or LlmCost); nullopt while none is. */
    std::optional<StopReason> spent_budget() const;

    UsageTotals totals() const;
    /** Calls reserved (begin_call) and not yet ended or abandoned. */
    std::int64_t in_flight() const;
    std::map<std::string, UsageTotals> per_expert() const;
    std::map<std::string, UsageTotals> per_model() const;
    std::vector<CallRecord> calls() const;
    const Budgets& budgets() const { return budgets_; }
    /** Totals, per expert, per model and the budgets, for events and reports. */
    nlohmann::json to_json() const;
    /**
     * Adds the totals of a to_json() record (e.g. what a resumed run had spent before it was
     * stopped) to this accounting, so that the budgets count them. Malformed parts are ignored.
     */
    void restore(const nlohmann::json& saved);

private:
    std::optional<StopReason> spent_locked(std::int64_t calls) const;

    Budgets budgets_;
    mutable std::mutex mu_;
    UsageTotals totals_;
    std::int64_t in_flight_ = 0;
    std::map<std::string, UsageTotals> per_expert_, per_model_;
    std::vector<CallRecord> calls_;
};

}  // namespace kf::llm
