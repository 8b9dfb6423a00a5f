#pragma once
// Small text helpers shared inside the engine.
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace kf::util {

/** `s` without the spaces, tabs, carriage returns, newlines, form feeds and vertical tabs at either end. */
inline std::string trim(std::string_view s) {
    constexpr std::string_view space = " \t\r\n\f\v";
    const std::size_t b = s.find_first_not_of(space);
    if (b == std::string_view::npos) return {};
    return std::string(s.substr(b, s.find_last_not_of(space) - b + 1));
}

/** `s` read whole as a decimal integer (a leading '-' allowed); nothing if it is empty, holds
 *  anything else or is out of range. */
inline std::optional<long> parse_integer(std::string_view s) {
    long n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return n;
}

/** The environment variable `name` read whole as a decimal integer; nothing if it is unset,
 *  empty or not such a number (parse_integer). */
inline std::optional<long> env_integer(const char* name) {
    const char* v = std::getenv(name);
    return v ? parse_integer(v) : std::nullopt;
}

}  // namespace kf::util
