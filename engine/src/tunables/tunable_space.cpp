// TunableSpace: checking, counting and enumerating assignments.
#include <algorithm>
#include <limits>
#include <sstream>

#include "assignment_check.h"
#include "kf/tunables.h"

namespace kf {

namespace tunables_detail {

bool constraint_holds(const TunableConstraint& c, const std::map<std::string, double>& vars, std::string* why) {
    try {
        if (c.expr.eval(vars) != 0) return true;
        if (why) *why = "violates the constraint '" + c.text + "' (line " + std::to_string(c.line) + ")";
    } catch (const ExprError& e) {
        if (why)
            *why = "the constraint '" + c.text + "' (line " + std::to_string(c.line) +
                   ") cannot be evaluated: " + e.what();
    }
    return false;
}

namespace {

std::string list_values(const std::vector<std::int64_t>& values) {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        if (i == 16 && values.size() > 20) return out + "... " + std::to_string(values.back());
        out += std::to_string(values[i]);
    }
    return out;
}

std::map<std::string, double> to_vars(const Assignment& a) {
    std::map<std::string, double> vars;
    for (const auto& [name, v] : a) vars[name] = static_cast<double>(v);
    return vars;
}

}  // namespace

std::optional<Problem> find_problem(const TunableSpace& space, const Assignment& a) {
    for (const auto& [name, v] : a)
        if (!space.find(name)) return Problem{0, "'" + name + "' is not a tunable of this source"};
    for (const Tunable& t : space.params) {
        auto it = a.find(t.name);
        if (it == a.end()) return Problem{t.line, "no value given for tunable " + t.name};
        if (std::find(t.values.begin(), t.values.end(), it->second) == t.values.end())
            return Problem{t.line, t.name + "=" + std::to_string(it->second) + " is not one of its values (" +
                                       list_values(t.values) + ")"};
    }
    auto vars = to_vars(a);
    for (const TunableConstraint& c : space.constraints) {
        std::string why;
        if (!constraint_holds(c, vars, &why)) return Problem{c.line, to_string(a) + " " + why};
    }
    return std::nullopt;
}

}  // namespace tunables_detail

const Tunable* TunableSpace::find(const std::string& name) const {
    for (const Tunable& t : params)
        if (t.name == name) return &t;
    return nullptr;
}

Assignment TunableSpace::defaults() const {
    Assignment a;
    for (const Tunable& t : params) a[t.name] = t.default_value;
    return a;
}

std::string TunableSpace::violation(const Assignment& a) const {
    auto problem = tunables_detail::find_problem(*this, a);
    return problem ? problem->reason : std::string();
}

std::uint64_t TunableSpace::cartesian_size() const {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t n = 1;
    for (const Tunable& t : params) {
        std::uint64_t k = t.values.size();
        if (k == 0) return 0;
        if (n > kMax / k) return kMax;
        n *= k;
    }
    return n;
}

namespace {

/**
 * Depth-first walk over the parameters in declaration order. Each constraint is checked as
 * soon as the last parameter it names is set, so whole subtrees that violate it are skipped.
 */
class Enumerator {
public:
    Enumerator(const TunableSpace& space, std::size_t limit) : space_(space), limit_(limit) {
        checks_.resize(space.params.size() + 1);
        for (const TunableConstraint& c : space.constraints) {
            std::size_t level = 0;  // number of parameters that must be set first
            for (const std::string& name : c.expr.names()) {
                std::size_t index = space.params.size();  // an unknown name: checked at the end
                for (std::size_t i = 0; i < space.params.size(); ++i)
                    if (space.params[i].name == name) index = i;
                level = std::max(level, std::min(index + 1, space.params.size()));
            }
            checks_[level].push_back(&c);
        }
    }

    std::vector<Assignment> run() {
        if (limit_ > 0 && holds_at(0)) walk(0);
        return std::move(out_);
    }

private:
    bool holds_at(std::size_t level) const {
        for (const TunableConstraint* c : checks_[level])
            if (!tunables_detail::constraint_holds(*c, vars_)) return false;
        return true;
    }

    void walk(std::size_t depth) {
        if (depth == space_.params.size()) {
            out_.push_back(current_);
            return;
        }
        const Tunable& t = space_.params[depth];
        for (std::int64_t v : t.values) {
            current_[t.name] = v;
            vars_[t.name] = static_cast<double>(v);
            if (holds_at(depth + 1)) walk(depth + 1);
            if (out_.size() >= limit_) return;
        }
        current_.erase(t.name);
        vars_.erase(t.name);
    }

    const TunableSpace& space_;
    std::size_t limit_;
    std::vector<std::vector<const TunableConstraint*>> checks_;  ///< by number of parameters set
    Assignment current_;
    std::map<std::string, double> vars_;
    std::vector<Assignment> out_;
};

}  // namespace

std::vector<Assignment> TunableSpace::enumerate(std::size_t limit) const {
    return Enumerator(*this, limit).run();
}

std::string to_string(const Assignment& a) {
    std::string out;
    for (const auto& [name, v] : a) {
        if (!out.empty()) out += ' ';
        out += name + "=" + std::to_string(v);
    }
    return out;
}

}  // namespace kf
