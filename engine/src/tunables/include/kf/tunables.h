#pragma once
/**
 * Tunable parameters declared by annotation comments inside a kernel source, so that the
 * source stays plain CUDA/C++ that compiles as written. See docs/tunables.md.
 *
 *     #define BLOCK 256            // @kf tunable values(64, 128, 256, 512)
 *     constexpr int VEC = 4;       // @kf tunable values(1, 2, 4)
 *     #define UNROLL 2             // @kf tunable range(1, 8)
 *     // @kf constraint BLOCK * VEC <= 2048
 *
 * The value written in the source is the default. Instantiation rewrites only the value on
 * the declaring line, so line numbers (and compiler diagnostics) stay the same.
 */
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kf/error.h"
#include "kf/expr.h"

namespace kf {

class TunableError : public Error {
public:
    TunableError(int line, const std::string& reason)
        : Error("line " + std::to_string(line) + ": " + reason), line_(line) {}
    int line() const { return line_; }

private:
    int line_;
};

using Assignment = std::map<std::string, std::int64_t>;

struct Tunable {
    std::string name;
    std::vector<std::int64_t> values;  ///< allowed values, in declared order
    std::int64_t default_value = 0;    ///< the value written in the source
    int line = 0;                      ///< 1-based line of the declaration
};

struct TunableConstraint {
    std::string text;
    Expr expr;
    int line = 0;
};

class TunableSpace {
public:
    std::vector<Tunable> params;
    std::vector<TunableConstraint> constraints;

    bool empty() const { return params.empty(); }
    const Tunable* find(const std::string& name) const;
    Assignment defaults() const;
    /** Empty when the assignment is complete, in range and satisfies every constraint; else why not. */
    std::string violation(const Assignment& a) const;
    bool satisfies(const Assignment& a) const { return violation(a).empty(); }
    /** Number of points in the cartesian product (before constraints), saturating. */
    std::uint64_t cartesian_size() const;
    /** Valid assignments in lexicographic order, at most `limit`. */
    std::vector<Assignment> enumerate(std::size_t limit = 100000) const;
};

/** Parses the annotations; throws TunableError (line, reason) for malformed ones. */
TunableSpace parse_tunables(std::string_view source);

/** The source with each tunable's value replaced; throws TunableError if `a` is not valid. */
std::string instantiate(std::string_view source, const TunableSpace& space, const Assignment& a);

/**
 * The source with `chosen` applied; tunables not named keep the values written in the source.
 * Parses (and so validates) the annotations even when nothing is chosen.
 */
std::string apply_tunables(std::string_view source, const Assignment& chosen);

std::string to_string(const Assignment& a);  ///< "BLOCK=128 VEC=4"

}  // namespace kf
