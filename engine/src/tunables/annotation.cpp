#include "annotation.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "kf/tunables.h"
#include "source_lines.h"

namespace kf::tunables_detail {

namespace {

// A range may not expand to more values than this; a search over more points than that
// per parameter is a mistake in the annotation, not a plan.
constexpr std::int64_t kMaxRangeValues = 65536;

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

/** The text inside `keyword( ... )` followed only by spaces; throws when malformed. */
std::string_view call_arguments(std::string_view text, std::string_view keyword, int line) {
    text = trim(text);
    std::string_view rest = trim(text.substr(keyword.size()));
    if (rest.empty() || rest.front() != '(')
        throw TunableError(line, "expected '(' after '" + std::string(keyword) + "'");
    std::size_t close = rest.find(')');
    if (close == std::string_view::npos)
        throw TunableError(line, "missing ')' in '" + std::string(keyword) + "(...)'");
    std::string_view after = trim(rest.substr(close + 1));
    if (!after.empty())
        throw TunableError(line, "unexpected text after " + std::string(keyword) + "(...): '" +
                                     std::string(after) + "'");
    return rest.substr(1, close - 1);
}

std::vector<std::string_view> split_commas(std::string_view args) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        std::size_t comma = args.find(',', start);
        parts.push_back(trim(args.substr(start, comma == std::string_view::npos ? comma : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return parts;
}

std::int64_t integer(std::string_view text, const std::string& what, int line) {
    auto v = parse_int(text);
    if (!v) throw TunableError(line, what + ": '" + std::string(text) + "' is not an integer");
    return *v;
}

std::vector<std::int64_t> parse_values(std::string_view args, int line) {
    if (trim(args).empty()) throw TunableError(line, "values() is empty: list at least one value");
    std::vector<std::int64_t> values;
    std::set<std::int64_t> seen;
    for (std::string_view part : split_commas(args)) {
        if (part.empty()) throw TunableError(line, "values(...): empty entry between commas");
        std::int64_t v = integer(part, "values(...)", line);
        if (!seen.insert(v).second)
            throw TunableError(line, "values(...): " + std::to_string(v) + " is listed twice");
        values.push_back(v);
    }
    return values;
}

std::vector<std::int64_t> parse_range(std::string_view args, int line) {
    auto parts = split_commas(args);
    if (parts.size() < 2 || parts.size() > 3)
        throw TunableError(line, "range(...) takes (lo, hi) or (lo, hi, step=s), got " +
                                     std::to_string(parts.size()) + " argument(s)");
    std::int64_t lo = integer(parts[0], "range(...) lower bound", line);
    std::int64_t hi = integer(parts[1], "range(...) upper bound", line);
    std::int64_t step = 1;
    if (parts.size() == 3) {
        std::string_view s = parts[2];
        std::size_t eq = s.find('=');
        if (eq == std::string_view::npos || trim(s.substr(0, eq)) != "step")
            throw TunableError(line, "range(...): the third argument must be 'step=<int>', got '" +
                                         std::string(s) + "'");
        step = integer(trim(s.substr(eq + 1)), "range(...) step", line);
        if (step <= 0) throw TunableError(line, "range(...): step must be positive");
    }
    if (lo > hi)
        throw TunableError(line, "range(" + std::to_string(lo) + ", " + std::to_string(hi) +
                                     "): the lower bound is above the upper bound");
    // Division before counting keeps huge spans from overflowing.
    std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    std::uint64_t count = span / static_cast<std::uint64_t>(step) + 1;
    if (count > static_cast<std::uint64_t>(kMaxRangeValues))
        throw TunableError(line, "range(...) has " + std::to_string(count) + " values; at most " +
                                     std::to_string(kMaxRangeValues) + " are allowed");
    std::vector<std::int64_t> values;
    for (std::uint64_t i = 0; i < count; ++i) values.push_back(lo + static_cast<std::int64_t>(i) * step);
    return values;
}

}  // namespace

std::optional<Annotation> parse_annotation(std::string_view comment, int line) {
    // Doxygen-style `///`, `//!` and `///<` comments carry annotations too.
    std::size_t skip = comment.find_first_not_of("/!<");
    comment = comment.substr(skip == std::string_view::npos ? comment.size() : skip);
    comment = trim(comment);
    if (comment.substr(0, 3) != "@kf" || (comment.size() > 3 && !is_space(comment[3]))) return std::nullopt;

    std::string_view rest = trim(comment.substr(3));
    std::size_t word_end = 0;
    while (word_end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[word_end])) || rest[word_end] == '_'))
        ++word_end;
    std::string keyword(rest.substr(0, word_end));
    std::string_view body = trim(rest.substr(word_end));

    Annotation a;
    if (keyword == "tunable") {
        a.kind = Annotation::Tunable;
        if (body.substr(0, 6) == "values") a.values = parse_values(call_arguments(body, "values", line), line);
        else if (body.substr(0, 5) == "range") a.values = parse_range(call_arguments(body, "range", line), line);
        else throw TunableError(line, "'@kf tunable' must be followed by values(...) or range(...)");
    } else if (keyword == "constraint") {
        a.kind = Annotation::Constraint;
        if (body.empty()) throw TunableError(line, "'@kf constraint' needs an expression");
        a.constraint = std::string(body);
    } else if (keyword.empty()) {
        throw TunableError(line, "'@kf' must be followed by 'tunable' or 'constraint'");
    } else {
        throw TunableError(line, "unknown keyword '@kf " + keyword + "'; expected 'tunable' or 'constraint'");
    }
    return a;
}

}  // namespace kf::tunables_detail
