#pragma once
// Small statistics shared inside the engine and the worker.
#include <algorithm>
#include <vector>

namespace kf::util {

/** The middle value of `v` (the mean of the two middle ones for an even count); 0 for none. */
inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace kf::util
