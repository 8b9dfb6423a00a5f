#pragma once
// Internal to engine/src/tunables: the grammar of one `// @kf ...` comment.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::tunables_detail {

/** What a `// @kf` comment says, before it is checked against the declaration it sits on. */
struct Annotation {
    enum Kind { Tunable, Constraint } kind = Tunable;
    std::vector<std::int64_t> values;  ///< Tunable: the values, in declared order
    std::string constraint;            ///< Constraint: the expression text
};

/**
 * The annotation in a comment's text (what follows `//`), or nullopt when the comment is
 * not one (does not start with `@kf`). Throws TunableError (at `line`) when it is malformed.
 */
std::optional<Annotation> parse_annotation(std::string_view comment, int line);

}  // namespace kf::tunables_detail
