#pragma once
/**
 * Experts propose a child from a parent (or two). The built-in experts need no network:
 * the tuner mutates the tunables a kernel declares, steered by the diagnosis; crossover
 * combines the tunables of two parents of one pattern family; the pattern expert brings in
 * a library pattern that fits the task and the bottleneck. See docs/search.md.
 */
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kf/population.h"
#include "kf/task.h"

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
    std::string diagnosis_class;    ///< the parent's class (router's view)
    const std::vector<PatternSource>* patterns = nullptr;
    const std::set<std::string>* tried = nullptr;  ///< proposal_key() of everything already proposed
    SearchRng* rng = nullptr;
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

protected:
    std::string refusal_;
};

std::unique_ptr<Expert> make_tuner();
std::unique_ptr<Expert> make_crossover();
std::unique_ptr<Expert> make_pattern_expert();

}  // namespace kf
