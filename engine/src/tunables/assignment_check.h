#pragma once
// Internal to engine/src/tunables: why an assignment is not valid, with the line to blame.
#include <map>
#include <optional>
#include <string>

#include "kf/tunables.h"

namespace kf::tunables_detail {

struct Problem {
    int line = 0;  ///< the tunable's or the constraint's line
    std::string reason;
};

/** The first thing wrong with `a` (missing, unknown or out-of-values name, failed constraint). */
std::optional<Problem> find_problem(const TunableSpace& space, const Assignment& a);

/**
 * Whether the constraint holds for the variables. A constraint that cannot be evaluated
 * (division by zero, unknown name) does not hold; `why` then says so.
 */
bool constraint_holds(const TunableConstraint& c, const std::map<std::string, double>& vars,
                      std::string* why = nullptr);

}  // namespace kf::tunables_detail
