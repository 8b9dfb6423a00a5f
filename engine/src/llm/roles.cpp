// The expert roles: prompt filled from the context, a model of the ensemble asked, the
// answer parsed and screened into a child.
#include <mutex>

#include "kf/error.h"
#include "kf/llm/answer.h"
#include "kf/llm/experts.h"
#include "kf/router.h"
#include "kf/tunables.h"

namespace kf::llm {

using nlohmann::json;

namespace {

using C = DiagnosisClass;

/** Priors over the router's classes, low (0.02) wherever the role is no help. */
std::map<DiagnosisClass, double> priors(std::map<DiagnosisClass, double> high) {
    std::map<DiagnosisClass, double> out;
    for (DiagnosisClass c : kDiagnosisClasses) out[c] = 0.02;
    for (const auto& [k, v] : high) out[k] = v;
    return out;
}

}  // namespace

const std::vector<RoleSpec>& role_specs() {
    static const std::vector<RoleSpec> specs = {
        {"memory", "memory access", priors({{C::Memory, 0.8}, {C::Latency, 0.3}, {C::Compute, 0.2}, {C::Occupancy, 0.2}, {C::Spills, 0.1}})},
        {"compute", "compute and tensor cores",
         priors({{C::Compute, 0.8}, {C::Memory, 0.2}, {C::Latency, 0.2}, {C::Occupancy, 0.2}, {C::Spills, 0.2}})},
        {"fusion", "fusion", priors({{C::Latency, 0.6}, {C::Memory, 0.5}, {C::Compute, 0.3}, {C::Occupancy, 0.2}})},
        {"occupancy", "occupancy and launch configuration",
         priors({{C::Occupancy, 0.8}, {C::Spills, 0.8}, {C::Latency, 0.4}, {C::Timeout, 0.4}, {C::Memory, 0.3}, {C::Compute, 0.3}})},
        {"warp", "warp-level primitives and reductions",
         priors({{C::Latency, 0.6}, {C::Compute, 0.4}, {C::Memory, 0.3}, {C::Occupancy, 0.3}})},
        {"numerics", "numerical repair",
         priors({{C::Incorrect, 0.9}, {C::IntegrityViolation, 0.7}, {C::RuntimeError, 0.6}, {C::Timeout, 0.3}, {C::CompileError, 0.1}})},
        {"compile", "compile repair", priors({{C::CompileError, 0.9}, {C::LoadError, 0.8}, {C::RuntimeError, 0.3}})},
    };
    return specs;
}

const RoleSpec* find_role(const std::string& id) {
    for (const auto& r : role_specs())
        if (r.id == id) return &r;
    return nullptr;
}

namespace {

std::string fmt(double v, const char* f = "%.3g") {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string render_inspirations(const std::vector<const Member*>& ins, const std::string& fence) {
    std::string out;
    int n = 0;
    for (const Member* m : ins) {
        if (!m || n >= 3) continue;
        ++n;
        std::string src;
        try {
            src = apply_tunables(m->source, m->tunables);
        } catch (const Error&) {
            src = m->source;
        }
        out += "### From island " + std::to_string(m->island) + ": " + fmt(m->fitness) + "x the reference (family " + m->family +
               ", by " + m->expert + ")\n```" + fence + "\n" + excerpt(src, 80, 4000) + "```\n\n";
    }
    return out;
}

std::string sizes_of(const Task& task, Backend b) {
    std::string out;
    try {
        for (const auto& [k, v] : task.primary_case(b).sizes) out += (out.empty() ? "" : ", ") + k + " = " + std::to_string(v);
    } catch (const std::exception&) {
    }
    return out;
}

class LlmExpert final : public RoleExpert {
public:
    using RoleExpert::RoleExpert;

private:
    std::optional<Proposal> attempt(const ProposalContext& ctx, std::string& why) override {
        LlmEnsemble::Bound bound = ens_->bound();
        const Task* task = ctx.task ? ctx.task : bound.task;
        Backend backend = ctx.task ? ctx.backend : bound.backend;
        if (!task) return why = "no task in the proposal context", std::nullopt;
        if (!ctx.parent) return why = "no parent to improve", std::nullopt;
        if (ens_->budget_spent(&why)) return std::nullopt;
        if (ens_->cancelled()) return why = "cancelled: the run is stopping", std::nullopt;
        const Member& parent = *ctx.parent;
        std::string shown = parent.source;
        try {
            shown = apply_tunables(parent.source, parent.tunables);
        } catch (const Error&) {
        }
        const DiagnosisClass dclass = ctx.diagnosis_class.value_or(diagnosis_class(parent));
        const bool cuda = backend == Backend::Cuda;
        const std::string fence = cuda ? "cuda" : "cpp";
        std::string diagnosis;
        if (ctx.parent_diagnosis && ctx.parent_diagnosis->is_object()) diagnosis = render_diagnosis(*ctx.parent_diagnosis, shown);
        if (diagnosis.empty())
            diagnosis = "status: " + std::string(to_string(parent.status)) + (parent.fitness > 0 ? ", " + fmt(parent.fitness) + "x the reference" : "") +
                        (parent.bound.empty() ? "" : ", bound: " + parent.bound) + " (no detailed record available)\n";
        std::string notes;
        if (ctx.library_notes)
            for (const auto& n : *ctx.library_notes) notes += "- " + n + "\n";
        std::string libs;
        for (const auto& l : task->rules.allowed_libraries) libs += (libs.empty() ? "" : ", ") + l;
        std::string tunables;
        for (const auto& [k, v] : parent.tunables) tunables += (tunables.empty() ? "" : ", ") + k + "=" + std::to_string(v);
        TemplateValues v = {
            {"role", role_.id},
            {"role_title", role_.title},
            {"task_name", task->name},
            {"task_title", task->title},
            {"task_description", task->description},
            {"op_class", task->op_class},
            {"backend", std::string(to_string(backend))},
            {"language", cuda ? "CUDA C++ (compiled by nvcc, run on an NVIDIA GPU)" : "C++20 (compiled by the host compiler, run on the CPU cores; OpenMP is available)"},
            {"fence", fence},
            {"header", entry_header(*task, backend)},
            {"sizes", sizes_of(*task, backend)},
            {"allowed_libraries", libs.empty() ? "none" : libs},
            {"tf32", task->rules.allow_tf32 ? "allowed" : "not allowed"},
            {"parent_id", std::to_string(parent.id)},
            {"parent_status", std::string(to_string(parent.status))},
            {"parent_fitness", fmt(parent.fitness)},
            {"parent_family", parent.family},
            {"parent_tunables", tunables},
            {"parent_source", shown},
            {"diagnosis_class", std::string(to_string(dclass))},
            {"diagnosis", diagnosis},
            {"library_notes", notes},
            {"inspirations", render_inspirations(ctx.inspirations, fence)},
        };
        ChatRequest req;
        req.system = ens_->templates().render("system", v);
        req.user = ens_->templates().render(role_.id, v);
        std::string model;
        std::optional<ChatResponse> r = ask(std::move(req), dclass, model, why);
        if (!r) return std::nullopt;
        const std::string who = "model " + model + ": ";
        ParsedAnswer a = parse_answer(r->text, shown);
        if (!a.ok) return why = who + a.error, std::nullopt;
        auto findings = screen_source(a.source, task->rules);
        if (!findings.empty()) {
            why = "screened: ";
            for (std::size_t i = 0; i < findings.size(); ++i) why += (i ? "; " : "") + findings[i];
            return std::nullopt;
        }
        if (a.source == shown) return why = who + "the answer repeats the parent", std::nullopt;
        if (ctx.tried && ctx.tried->count(proposal_key(a.source, {}))) return why = who + "the answer was evaluated before", std::nullopt;
        Proposal p;
        p.source = a.source;
        p.family = a.form == "diff" && !parent.family.empty() ? parent.family : "llm/" + role_.id;
        p.expert = name();
        p.parents = {parent.id};
        p.rationale = "[" + model + "] " + (a.rationale.empty() ? a.form + " rewrite for " + role_.title : a.rationale);
        return p;
    }

};

}  // namespace

std::optional<Proposal> RoleExpert::propose(const ProposalContext& ctx) {
    std::string why;
    std::optional<Proposal> p;
    try {
        p = attempt(ctx, why);
    } catch (const std::exception& e) {
        why = std::string("failed: ") + e.what();
        p.reset();
    }
    std::lock_guard lock(mu_);
    refusal_ = p ? std::string() : why;
    return p;
}

std::optional<ChatResponse> RoleExpert::ask(ChatRequest req, DiagnosisClass dclass, std::string& model, std::string& why) {
    auto rc = ens_->config().roles.find(role_.id);
    if (rc != ens_->config().roles.end()) {
        req.max_tokens = rc->second.max_tokens;
        req.temperature = rc->second.temperature;
    }
    model = ens_->bandit().choose(dclass, ens_->models_for(role_.id));
    if (model.empty()) return why = "no model configured for role " + role_.id, std::nullopt;
    ChatResponse r = ens_->call(name(), model, req);
    const std::string who = "model " + model + ": ";
    if (!r.ok) return why = r.budget_spent ? r.error : who + r.error, std::nullopt;
    if (r.finish_reason == "refusal" || r.finish_reason == "content_filter")
        return why = who + "declined (" + rationale_of(r.text, 160) + ")", std::nullopt;
    if (r.truncated)
        return why = who + "answer cut off at the token limit (" + r.finish_reason + ", max_tokens " + std::to_string(req.max_tokens) + ")",
               std::nullopt;
    return r;
}

std::shared_ptr<LlmEnsemble> LlmEnsemble::create(const LlmConfig& cfg, const std::filesystem::path& prompts_dir,
                                                 std::map<std::string, std::shared_ptr<Provider>> providers) {
    std::filesystem::path dir = cfg.prompts_dir.empty() ? prompts_dir : cfg.prompts_dir;
    std::shared_ptr<LlmEnsemble> ens(new LlmEnsemble(cfg, dir));
    for (const auto& p : cfg.providers) {
        auto given = providers.find(p.name);
        bool used = std::any_of(cfg.models.begin(), cfg.models.end(), [&](const ModelConfig& m) { return m.provider == p.name; });
        if (given != providers.end()) ens->providers_[p.name] = given->second;
        else if (used) ens->providers_[p.name] = std::make_shared<HttpProvider>(p);
    }
    // Every enabled role's template must render: a broken edit shows now, not mid-run.
    TemplateValues probe;
    for (const char* k : {"role", "role_title", "task_name", "task_title", "task_description", "op_class", "backend", "language", "fence",
                          "header", "sizes", "allowed_libraries", "tf32", "parent_id", "parent_status", "parent_fitness",
                          "parent_family", "parent_tunables", "parent_source", "diagnosis_class", "diagnosis", "library_notes",
                          "inspirations"})
        probe[k] = "x";
    for (const auto& [id, rc] : cfg.roles) {
        if (!rc.enabled) continue;
        if (!find_role(id)) throw ConfigError("roles." + id, "unknown role");
        ens->templates_.render("system", probe);
        ens->templates_.render(id, probe);
    }
    if (cfg.insights) {
        TemplateValues iv;
        for (const char* k : {"expert", "op_class", "diagnosis_class", "gain", "rationale", "parent_source", "child_source"}) iv[k] = "x";
        ens->templates_.render("insight", iv);
    }
    return ens;
}

std::vector<std::shared_ptr<Expert>> LlmEnsemble::experts() {
    std::vector<std::shared_ptr<Expert>> out;
    // The experts keep the ensemble alive; it is created only through create(), so shared.
    std::shared_ptr<LlmEnsemble> self = shared_from_this();
    for (const auto& spec : role_specs()) {
        auto rc = cfg_.roles.find(spec.id);
        if (rc == cfg_.roles.end() || !rc->second.enabled) continue;
        out.push_back(std::make_shared<LlmExpert>(self, spec));
    }
    return out;
}

}  // namespace kf::llm
