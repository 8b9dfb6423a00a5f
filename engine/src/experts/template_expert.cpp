// The template expert: writes kernels for a task it has never seen by instantiating the
// op-class templates from the task's computation (declared in the manifest, or derived from
// the reference where the recogniser can).
#include <algorithm>

#include "kf/experts.h"
#include "kf/recognise.h"
#include "kf/templates.h"

namespace kf {

std::optional<Computation> task_computation(const Task& task, Backend backend, std::string* why) {
    if (task.computation) return task.computation;
    Recognition r = recognise_reference(task, backend);
    if (r.computation) return r.computation;
    if (why) *why = r.reason;
    return std::nullopt;
}

std::vector<TemplateKernel> templates_for_task(const Task& task, Backend backend, std::string* why) {
    std::optional<Computation> c = task_computation(task, backend, why);
    if (!c) return {};
    std::vector<TemplateKernel> out = instantiate_templates(task, *c, backend);
    if (out.empty() && why) *why = "no op-class template applies to " + c->summary();
    return out;
}

const TemplateKernel* next_untried(const std::vector<TemplateKernel>& kernels, const ProposalContext& ctx) {
    const TemplateKernel* same = nullptr;
    for (const auto& k : kernels) {
        if (ctx.tried && ctx.tried->count(proposal_key(k.source, {}))) continue;
        if (!ctx.parent || ctx.parent->family != k.family) return &k;
        if (!same) same = &k;
    }
    return same;
}

namespace {

class TemplateExpert final : public Expert {
public:
    std::string name() const override { return "template"; }

    std::map<DiagnosisClass, double> priors() const override {
        using C = DiagnosisClass;
        // A failed or untuned parent is best answered by a fresh, correct-by-construction kernel;
        // a correct one that is memory- or latency-bound by another layout of the work.
        return {{C::CompileError, 0.5}, {C::LoadError, 0.5}, {C::RuntimeError, 0.6},      {C::Timeout, 0.6},
                {C::Incorrect, 0.7},    {C::IntegrityViolation, 0.6}, {C::Memory, 0.5}, {C::Latency, 0.5},
                {C::Compute, 0.3},      {C::Occupancy, 0.3},          {C::Spills, 0.3}};
    }

    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        refusal_.clear();
        if (!ctx.task) {
            refusal_ = "no task in the context";
            return std::nullopt;
        }
        if (cached_for_ != ctx.task || cached_backend_ != ctx.backend) {
            why_.clear();
            kernels_ = templates_for_task(*ctx.task, ctx.backend, &why_);
            cached_for_ = ctx.task;
            cached_backend_ = ctx.backend;
        }
        if (kernels_.empty()) {
            refusal_ = why_;
            return std::nullopt;
        }
        const TemplateKernel* next = next_untried(kernels_, ctx);
        if (!next) {
            refusal_ = "every op-class template instance for this task has been tried";
            return std::nullopt;
        }
        const TemplateKernel& k = *next;
        Proposal p;
        p.source = k.source;
        p.family = k.family;
        p.expert = name();
        if (ctx.parent) p.parents = {ctx.parent->id};
        p.rationale = "op-class template " + k.name + ": " + k.description +
                      (ctx.parent && ctx.parent->status != Status::Ok
                           ? " (the parent is " + std::string(to_string(ctx.parent->status)) + ")"
                           : "");
        return p;
    }

private:
    const Task* cached_for_ = nullptr;
    Backend cached_backend_ = Backend::Host;
    std::vector<TemplateKernel> kernels_;
    std::string why_;
};

}  // namespace

std::unique_ptr<Expert> make_template_expert() { return std::make_unique<TemplateExpert>(); }

}  // namespace kf
