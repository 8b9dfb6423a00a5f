#include "source_lines.h"

#include <charconv>
#include <regex>

#include "kf/tunables.h"

namespace kf::tunables_detail {

std::vector<SourceLine> split_lines(std::string_view source) {
    std::vector<SourceLine> lines;
    std::size_t start = 0;
    int number = 1;
    while (start <= source.size()) {
        std::size_t end = source.find('\n', start);
        if (end == std::string_view::npos) {
            // A final line without '\n' still counts; an empty tail after the last '\n' does not.
            if (start < source.size()) lines.push_back({source.substr(start), start, number});
            break;
        }
        lines.push_back({source.substr(start, end - start), start, number++});
        start = end + 1;
    }
    return lines;
}

CommentSplit split_comment(std::string_view line) {
    // Skip string and character literals so that "http://..." does not start a comment.
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quote) {
            if (c == '\\') ++i;
            else if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') {
            return {line.substr(0, i), line.substr(i + 2), true};
        }
    }
    return {line, {}, false};
}

std::string_view trim(std::string_view s) {
    const char* space = " \t\r\f\v";
    std::size_t b = s.find_first_not_of(space);
    if (b == std::string_view::npos) return {};
    std::size_t e = s.find_last_not_of(space);
    return s.substr(b, e - b + 1);
}

std::optional<std::int64_t> parse_int(std::string_view text) {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    if (text.empty()) return std::nullopt;
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

namespace {

bool is_integer_type(const std::string& words) {
    static const std::regex word(R"([A-Za-z_][\w:]*)");
    static const std::regex allowed(
        R"((std::)?u?int(8|16|32|64)_t|(std::)?(size_t|ptrdiff_t)|int|unsigned|signed|short|long|auto)");
    bool any = false;
    for (auto it = std::sregex_iterator(words.begin(), words.end(), word); it != std::sregex_iterator(); ++it) {
        if (!std::regex_match(it->str(), allowed)) return false;
        any = true;
    }
    return any;
}

}  // namespace

std::optional<Declaration> find_declaration(std::string_view code, int line) {
    // The number is group "value" (sign and digits); an integer suffix may follow it.
    static const std::regex define_re(R"(^\s*#\s*define\s+([A-Za-z_]\w*)\s+([-+]?\d+)[uUlL]*\s*$)");
    static const std::regex constant_re(
        R"(^\s*(?:(?:static|inline)\s+)*(?:constexpr|const)\s+(?:(?:static|inline|const)\s+)*)"
        R"(((?:[A-Za-z_][\w:]*\s+)+)([A-Za-z_]\w*)\s*=\s*([-+]?\d+)[uUlL]*\s*;\s*$)");

    const std::string text(code);
    std::smatch m;
    std::size_t name_group = 0, value_group = 0;
    if (std::regex_match(text, m, define_re)) {
        name_group = 1;
        value_group = 2;
    } else if (std::regex_match(text, m, constant_re) && is_integer_type(m[1].str())) {
        name_group = 2;
        value_group = 3;
    } else {
        return std::nullopt;
    }

    Declaration d;
    d.name = m[name_group].str();
    d.value_pos = static_cast<std::size_t>(m.position(value_group));
    d.value_len = static_cast<std::size_t>(m.length(value_group));
    std::string digits = m[value_group].str();
    std::string_view unsigned_digits = digits;
    if (unsigned_digits.front() == '-' || unsigned_digits.front() == '+') unsigned_digits.remove_prefix(1);
    // C reads a leading 0 as octal; rewriting such a literal would silently change its meaning.
    if (unsigned_digits.size() > 1 && unsigned_digits.front() == '0')
        throw TunableError(line, "'" + digits + "' is an octal literal in C; write the value of " + d.name +
                                     " in decimal without a leading 0");
    auto v = parse_int(digits);
    if (!v) throw TunableError(line, "the value of " + d.name + " (" + digits + ") does not fit in 64 bits");
    d.value = *v;
    return d;
}

}  // namespace kf::tunables_detail
