#pragma once
/**
 * Experts propose a child from a parent (or two). The built-in experts need no network:
 * the tuner mutates the tunables a kernel declares, steered by the diagnosis; crossover
 * combines the tunables of two parents of one pattern family; the pattern expert brings in
 * a library pattern that fits the task and the bottleneck. See docs/search.md.
 */
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/member.h"
#include "kf/vocabulary.h"
#include "kf/task.h"
#include "kf/templates.h"

namespace kf {

/** A library pattern usable for the task at hand (its signature matches the task's). */
struct PatternSource {
    std::string name;
    std::string family;
    std::string source;
    std::vector<std::string> bound_tags;
    std::string description;
};

struct ProposalContext {
    const Task* task = nullptr;
    Backend backend = Backend::Host;
    const Member* parent = nullptr;
    const Member* other = nullptr;  ///< second parent (crossover)
    /** The parent's class (the router's view); unset: the expert works it out from the parent. */
    std::optional<DiagnosisClass> diagnosis_class;
    const std::vector<PatternSource>* patterns = nullptr;
    const std::set<std::string>* tried = nullptr;  ///< proposal_key() of everything already proposed
    SearchRng* rng = nullptr;
    /** The parents' full diagnosis records (kf::Diagnosis JSON) when known; null otherwise. */
    const nlohmann::json* parent_diagnosis = nullptr;
    const nlohmann::json* other_diagnosis = nullptr;
    /** Good members of other islands (their bests), for experts that learn from them. */
    std::vector<const Member*> inspirations;
    /** Library entries retrieved for this task and diagnosis, rendered as short text. */
    const std::vector<std::string>* library_notes = nullptr;
};

struct Proposal {
    std::string source;
    Assignment tunables;
    std::string family;
    std::string expert;
    std::string rationale;
    std::vector<std::int64_t> parents;
};

/** Identity of a proposal (source and tunables), for not evaluating the same kernel twice. */
std::string proposal_key(const std::string& source, const Assignment& tunables);

class Expert {
public:
    virtual ~Expert() = default;
    virtual std::string name() const = 0;
    /** A child, or nullopt with refusal() saying why (nothing left to try, no tunables...). */
    virtual std::optional<Proposal> propose(const ProposalContext& ctx) = 0;
    const std::string& refusal() const { return refusal_; }
    /**
     * True for an expert that waits on I/O (an LLM over HTTP). The search then calls propose()
     * on a thread of its own, with a context whose pointers stay valid for the call but whose
     * `tried` and `rng` are null; duplicates are dropped by the search afterwards. Such an
     * expert must be safe to call from several threads at once.
     */
    virtual bool blocking() const { return false; }
    /** Router priors of this expert per diagnosis class (see Router::set_prior). */
    virtual std::map<DiagnosisClass, double> priors() const { return {}; }

protected:
    std::string refusal_;
};

std::unique_ptr<Expert> make_tuner();
std::unique_ptr<Expert> make_crossover();
std::unique_ptr<Expert> make_pattern_expert();
/**
 * The template expert: instantiates the op-class templates (kf/templates.h) from the task's
 * computation, declared in its manifest or derived from its reference (kf/recognise.h),
 * an untried instance of another family than the parent's first. Refuses, saying why, when
 * the task has no computation and none can be derived, or when every instance was tried.
 */
std::unique_ptr<Expert> make_template_expert();

/** The first of `kernels` not yet proposed (ctx.tried), one of another family than the parent's first; null when every one was. */
const TemplateKernel* next_untried(const std::vector<TemplateKernel>& kernels, const ProposalContext& ctx);

/** The task's computation: the manifest's, else one derived from the reference; why not otherwise. */
std::optional<Computation> task_computation(const Task& task, Backend backend, std::string* why = nullptr);
/** The op-class template instances for the task (empty, with why, when there are none). */
std::vector<TemplateKernel> templates_for_task(const Task& task, Backend backend, std::string* why = nullptr);

}  // namespace kf
