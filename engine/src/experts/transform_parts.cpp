// Text pieces shared by the named rewrites (transform_parts.h).
#include "transform_parts.h"

#include <cctype>

namespace kf::rewrites {

std::size_t after_includes(const std::string& src) {
    std::size_t at = 0;
    for (std::size_t p = src.find("#include"); p != std::string::npos; p = src.find("#include", p + 1))
        at = src.find('\n', p) + 1;
    return at;
}

std::size_t closing(const std::string& s, std::size_t open) {
    const char o = s[open], c = o == '(' ? ')' : o == '{' ? '}' : ']';
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (s[i] == o)
            ++depth;
        else if (s[i] == c && --depth == 0)
            return i;
    }
    return std::string::npos;
}

std::size_t statement_end(const std::string& s, std::size_t from, std::size_t end) {
    while (from < end && std::isspace(static_cast<unsigned char>(s[from]))) ++from;
    if (from < end && s[from] == '{') {
        const std::size_t cl = closing(s, from);
        return cl == std::string::npos ? cl : cl + 1;
    }
    int depth = 0;
    for (std::size_t i = from; i < end; ++i) {
        if (s[i] == '(' || s[i] == '[' || s[i] == '{') ++depth;
        if (s[i] == ')' || s[i] == ']' || s[i] == '}') --depth;
        if (s[i] == ';' && depth == 0) return i + 1;
    }
    return std::string::npos;
}

}  // namespace kf::rewrites
