// The generic expert (kf/generic.h): reads the host reference's loop nest, plans its loops
// (generic_plan.cpp) and writes the instances for the backend (generic_cuda.cpp,
// generic_host.cpp); proposes them one at a time, another family than the parent's first.
#include <algorithm>
#include <filesystem>

#include "generic_parts.h"
#include "kf/compile.h"
#include "kf/generic.h"
#include "kf/paths.h"
#include "libclang.h"

namespace kf {

namespace generic {
std::vector<TemplateKernel> cuda_generic(const Task& task, const Program& prog);
std::vector<TemplateKernel> host_generic(const Task& task, const Program& prog);
}  // namespace generic

namespace {

std::string nest_line(const Task& task, const generic::NestPlan& n) {
    auto tensor = [&](const std::string& name) {
        return std::any_of(task.tensors.begin(), task.tensors.end(), [&](const TensorSpec& t) { return t.name == name; });
    };
    std::string l = "the loop over " + n.loop->var + " (line " + std::to_string(n.loop->line) + "): ";
    if (n.chain.empty()) return l + "one thread, since " + n.serial_why;
    l += "parallel";
    if (n.chain.size() > 1) {
        l += " with";
        for (std::size_t i = 1; i < n.chain.size(); ++i) l += (i > 1 ? ", " : " ") + n.chain[i]->var;
    }
    if (!n.atomics.empty()) {
        l += ", adding atomically to";
        for (const auto& t : n.atomics)
            if (tensor(t)) l += " " + t;
    }
    l += n.rows ? "; rows spread over groups of threads" : "; no rows (" + n.rows_why + ")";
    if (n.rows && n.row_atomics != n.atomics) {
        l += ", adding atomically to";
        for (const auto& t : n.row_atomics)
            if (!n.atomics.count(t) && tensor(t)) l += " " + t;
    }
    return l;
}

}  // namespace

GenericKernels generic_kernels(const Task& task, Backend backend) {
    GenericKernels g;
    auto it = task.references.find(Backend::Host);
    if (it == task.references.end()) {
        g.reason = "the generic expert reads host C++ references and this task has none";
        return g;
    }
    std::string why;
    const Libclang* clang = load_libclang(&why);
    if (!clang) {
        g.reason = "libclang could not be loaded: " + why;
        return g;
    }
    const std::string source = read_text_file(it->second);
    if (source.size() > (1u << 20)) {
        g.reason = "the reference is larger than 1 MiB";
        return g;
    }
    if (auto d = screen_includes(source, it->second.filename().string()); !d.empty()) {
        g.reason = "the reference names a file it may not read: " + d.front().message;
        return g;
    }
    const std::string dir = task.dir.empty() ? std::string("/kf-reference") : std::filesystem::absolute(task.dir).string();
    std::string note;
    std::optional<nest::Block> body = nest::read_kf_solve(*clang, dir + "/" + it->second.filename().string(), source,
                                                          entry_header(task, Backend::Host), dir, note, true);
    if (!body) {
        g.reason = note;
        return g;
    }
    try {
        generic::Program prog = generic::plan_program(task, std::move(*body), note);
        for (const auto& n : prog.nests) g.nests.push_back(nest_line(task, n));
        g.kernels = backend == Backend::Cuda ? generic::cuda_generic(task, prog) : generic::host_generic(task, prog);
        g.reason = note;
    } catch (const generic::Unsupported& e) {
        g.reason = e.what();
    }
    return g;
}

std::string generic_summary(const GenericKernels& g) {
    if (g.kernels.empty()) return "no generic kernel: " + g.reason;
    std::string s = "generic kernels from the reference's loops:";
    for (std::size_t i = 0; i < g.kernels.size(); ++i) s += (i ? ", " : " ") + g.kernels[i].name;
    for (const auto& n : g.nests) s += "; " + n;
    if (!g.reason.empty()) s += "; " + g.reason;
    return s;
}

namespace {

class GenericExpert final : public Expert {
public:
    std::string name() const override { return "generic"; }

    std::map<DiagnosisClass, double> priors() const override {
        using C = DiagnosisClass;
        // A fresh kernel written from the reference answers a failed parent best; a correct
        // one is usually better served by the tuner on its own tunables.
        return {{C::CompileError, 0.4}, {C::LoadError, 0.4}, {C::RuntimeError, 0.5},     {C::Timeout, 0.5},
                {C::Incorrect, 0.5},    {C::IntegrityViolation, 0.5}, {C::Memory, 0.4}, {C::Latency, 0.4},
                {C::Compute, 0.2},      {C::Occupancy, 0.2},          {C::Spills, 0.2}};
    }

    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        refusal_.clear();
        if (!ctx.task) {
            refusal_ = "no task in the context";
            return std::nullopt;
        }
        if (cached_for_ != ctx.task || cached_backend_ != ctx.backend) {
            kernels_ = generic_kernels(*ctx.task, ctx.backend);
            cached_for_ = ctx.task;
            cached_backend_ = ctx.backend;
        }
        if (kernels_.kernels.empty()) {
            refusal_ = "no generic kernel: " + kernels_.reason;
            return std::nullopt;
        }
        const TemplateKernel* next = next_untried(kernels_.kernels, ctx);
        if (!next) {
            refusal_ = "every generic kernel for this task has been tried";
            return std::nullopt;
        }
        const TemplateKernel& k = *next;
        Proposal p;
        p.source = k.source;
        p.family = k.family;
        p.expert = name();
        if (ctx.parent) p.parents = {ctx.parent->id};
        p.rationale = k.name + ": " + k.description;
        return p;
    }

private:
    const Task* cached_for_ = nullptr;
    Backend cached_backend_ = Backend::Host;
    GenericKernels kernels_;
};

}  // namespace

std::unique_ptr<Expert> make_generic_expert() { return std::make_unique<GenericExpert>(); }

}  // namespace kf
