#pragma once
// Small text helpers shared inside the engine.
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

}  // namespace kf::util
