#pragma once
// SHA-256 (FIPS 180-4): names compile cache entries and candidates' contents.
#include <string>
#include <string_view>

namespace kf {

/** SHA-256 of data, as lower-case hex. */
std::string sha256_hex(std::string_view data);

}  // namespace kf
