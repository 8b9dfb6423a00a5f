#pragma once
// Internal to engine/src/tunables: reading the lines of a kernel source that carry
// `// @kf` annotations and the declarations they annotate.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::tunables_detail {

/** One line of a source, without its '\n' (a trailing '\r' is kept), and where it starts. */
struct SourceLine {
    std::string_view text;
    std::size_t offset = 0;  ///< byte offset of the line in the source
    int number = 0;          ///< 1-based
};

std::vector<SourceLine> split_lines(std::string_view source);

/** A line cut at its `//` comment (one that is not inside a string or character literal). */
struct CommentSplit {
    std::string_view code;     ///< everything before the `//`, or the whole line
    std::string_view comment;  ///< the text after `//`; empty when there is none
    bool has_comment = false;
};

CommentSplit split_comment(std::string_view line);

/**
 * A recognised `#define NAME <int>` or `[static] constexpr|const <int-type> NAME = <int>;`.
 * `value_pos`/`value_len` locate the number (with its sign, without any u/l suffix) in the
 * code so that instantiation can rewrite exactly those bytes.
 */
struct Declaration {
    std::string name;
    std::int64_t value = 0;
    std::size_t value_pos = 0;
    std::size_t value_len = 0;
};

/**
 * The declaration in `code`, or nullopt when it holds none. Throws TunableError (at `line`)
 * when the shape is right but the number is not usable (overflow, octal).
 */
std::optional<Declaration> find_declaration(std::string_view code, int line);

/** Parses a decimal integer with an optional sign; nullopt on anything else or overflow. */
std::optional<std::int64_t> parse_int(std::string_view text);

std::string_view trim(std::string_view s);

}  // namespace kf::tunables_detail
