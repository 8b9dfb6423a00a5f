#pragma once
/**
 * The LLM experts. Each role (memory access, compute & tensor cores, fusion, occupancy &
 * launch, warp-level & reductions, numerical repair, compile repair) is a kf::Expert named
 * "llm:<role>" that fills its prompt template with the task, the parent and its diagnosis,
 * library notes and inspirations, asks a model of the ensemble, and turns the answer into a
 * screened child. The ensemble owns the providers, the accounting and budgets, a UCB bandit
 * over models per diagnosis class, and cancellation. See docs/llm.md.
 */
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kf/expert_provider.h"
#include "kf/experts.h"
#include "kf/library.h"
#include "kf/llm/accounting.h"
#include "kf/llm/client.h"
#include "kf/llm/config.h"
#include "kf/llm/prompt.h"
#include "kf/run_control.h"
#include "kf/search.h"

namespace kf::llm {

/** A role: its id (template resources/prompts/<id>.md), title and router priors per diagnosis class. */
struct RoleSpec {
    std::string id;
    std::string title;
    std::map<DiagnosisClass, double> priors;
};
/** The seven built-in roles. */
const std::vector<RoleSpec>& role_specs();
const RoleSpec* find_role(const std::string& id);

/**
 * UCB1 over models per diagnosis class: score = weight share + mean reward + exploration
 * bonus; reward min(1, 2 ln gain) for a child that beat its parent, else 0 (as the router).
 * Thread-safe.
 */
class ModelBandit {
public:
    explicit ModelBandit(double exploration = 0.5) : exploration_(exploration) {}
    /** One of `models` (name, weight), never empty input; `reason` gets the score breakdown. */
    std::string choose(DiagnosisClass dclass, const std::vector<std::pair<std::string, double>>& models,
                       std::string* reason = nullptr) const;
    void reward(const std::string& model, DiagnosisClass dclass, double gain);
    struct Stats {
        int tries = 0;
        int improvements = 0;
        double reward_sum = 0;
    };
    Stats stats(const std::string& model, DiagnosisClass dclass) const;
    nlohmann::json to_json() const;
    /** Adds the statistics of a to_json() record (a resumed run's); malformed parts are ignored. */
    void restore(const nlohmann::json& saved);

private:
    double exploration_;
    mutable std::mutex mu_;
    std::map<DiagnosisClass, std::map<std::string, Stats>> stats_;  ///< dclass -> model -> stats
};

/** What request_insight needs about a child that beat its parent. */
struct InsightRequest {
    std::string expert;           ///< "llm:memory"
    std::string model;            ///< empty: the bandit's choice for the role
    std::string op_class;         ///< the task's
    DiagnosisClass diagnosis_class = DiagnosisClass::Latency;  ///< the parent's
    std::string parent_source;
    std::string child_source;
    std::string rationale;        ///< the child's rationale
    double gain = 1;              ///< child fitness / parent fitness
    std::string run_id;
    std::string candidate_id;
};

/**
 * The LLM experts, their providers, accounting, budgets and model bandit. As the run's
 * ExpertProvider it is attached to a run by kf::evolve, which keeps its state() with the run.
 */
class LlmEnsemble : public ExpertProvider, public std::enable_shared_from_this<LlmEnsemble> {
public:
    /**
     * Builds the providers (reading their keys from the environment) and checks that every
     * enabled role's template renders. `providers` replaces providers by name (tests).
     * Throws ConfigError or kf::Error with a clear reason.
     */
    static std::shared_ptr<LlmEnsemble> create(const LlmConfig& cfg, const std::filesystem::path& prompts_dir,
                                               std::map<std::string, std::shared_ptr<Provider>> providers = {});

    /** One expert per enabled role; they share this ensemble. */
    std::vector<std::shared_ptr<Expert>> experts() override;
    /** "LLM experts: N roles (...), models ..." for the run's log. */
    std::string summary() const override;
    /** bind() and watch() for a run; attach(nullptr, ...) unties the ensemble from it. */
    void attach(const Task* task, Backend backend, RunControl* control, std::function<bool()> stopping) override;
    /**
     * observe(e), and after an LLM child beat its parent, request_insight() for the run's
     * library (when the configuration asks for insights).
     */
    void observe(const SearchEvent& e, const ProviderRun& run) override;
    /** accounting().to_json(). */
    nlohmann::json usage() const override;
    /** The number of calls made so far. */
    std::int64_t usage_serial() const override;

    /** Task used when a context carries none (searches that do not fill ProposalContext::task). */
    void bind(const Task* task, Backend backend);

    /** Bandit feedback: a child written by `model` for a parent of `dclass` gained `gain`. */
    void reward(const std::string& model, DiagnosisClass dclass, double gain);
    /**
     * Convenience for a search's event hook: an "evaluated" event of an LLM child (its
     * rationale starts with "[model] ") feeds reward(); other events are ignored.
     */
    void observe(const SearchEvent& e);
    /**
     * Asks a model for a short reusable insight (condition -> action) about an improvement
     * and, when `library` is given, stores it there with status "proposed". Returns the
     * insight, or nullopt (with `why`) when the budget is spent, the call failed or the answer
     * had none. Blocking; thread-safe.
     */
    std::optional<Insight> request_insight(const InsightRequest& req, ExperienceLibrary* library = nullptr,
                                           std::string* why = nullptr);

    /** Stops every call in flight and refuses new ones. */
    void cancel();
    /** Also cancel when the run's control asks to stop; the control is asked to stop once a budget is spent. */
    void watch(RunControl* control);
    /** Also cancel when this returns true (e.g. the CLI's Ctrl-C flag). */
    void watch(std::function<bool()> stop);
    bool cancelled() const;

    /** True once a budget is spent; the reason is "LLM budget spent: ...". For SearchHooks::should_stop. */
    bool budget_spent(std::string* why = nullptr) const;
    /** The LLM budget that is spent, typed; nullopt while none is. */
    std::optional<StopReason> spent_budget() const override { return accounting_.spent_budget(); }
    Accounting& accounting() { return accounting_; }
    const Accounting& accounting() const { return accounting_; }
    ModelBandit& bandit() { return bandit_; }
    const ModelBandit& bandit() const { return bandit_; }
    /** Accounting and bandit statistics, as kf::evolve keeps them in the run state ("llm"). */
    nlohmann::json state() const override;
    /** Adds a state() record to this ensemble's accounting and bandit (a resumed run). */
    void restore(const nlohmann::json& saved) override;
    const LlmConfig& config() const { return cfg_; }
    const PromptTemplates& templates() const { return templates_; }

    /** Models a role may use (name, weight). */
    std::vector<std::pair<std::string, double>> models_for(const std::string& role) const;
    /** One chat call through a model's provider, accounted to `expert`. */
    ChatResponse call(const std::string& expert, const std::string& model, const ChatRequest& req);

    struct Bound {
        const Task* task = nullptr;
        Backend backend = Backend::Host;
    };
    Bound bound() const;

private:
    LlmEnsemble(LlmConfig cfg, const std::filesystem::path& prompts_dir);
    void note_budget();

    LlmConfig cfg_;
    PromptTemplates templates_;
    std::map<std::string, std::shared_ptr<Provider>> providers_;
    Accounting accounting_;
    ModelBandit bandit_;
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> stop_requested_{false};
    mutable std::mutex mu_;
    RunControl* control_ = nullptr;
    std::function<bool()> stop_;
    Bound bound_;
};

/**
 * An expert that asks one LLM role. What every such expert shares is here: refusals kept for
 * refusal() (an exception becomes "failed: ..."), and ask(): the role's limits, the model the
 * bandit picks, the call and the checks every answer passes (a failed call, a declined or
 * cut-off answer). A subclass writes the prompt and reads the answer in attempt().
 */
class RoleExpert : public Expert {
public:
    RoleExpert(std::shared_ptr<LlmEnsemble> ens, RoleSpec role) : ens_(std::move(ens)), role_(std::move(role)) {}
    std::string name() const override { return "llm:" + role_.id; }
    bool blocking() const override { return true; }
    std::map<DiagnosisClass, double> priors() const override { return role_.priors; }
    std::optional<Proposal> propose(const ProposalContext& ctx) final;

protected:
    /** A child, or nullopt with `why`. */
    virtual std::optional<Proposal> attempt(const ProposalContext& ctx, std::string& why) = 0;
    /** The answer to `req` from the model the bandit picks for `dclass` (set in `model`), or nullopt with `why`. */
    std::optional<ChatResponse> ask(ChatRequest req, DiagnosisClass dclass, std::string& model, std::string& why);

    std::shared_ptr<LlmEnsemble> ens_;
    RoleSpec role_;

private:
    std::mutex mu_;
};

/** The model named in an LLM child's rationale ("[model] ..."), or "". */
std::string model_of_rationale(const std::string& rationale);

}  // namespace kf::llm
