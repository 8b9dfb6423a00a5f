#pragma once
// Round ends for the live charts' axes, computed once per change of the data's extent.
#include <cmath>
#include <initializer_list>

namespace kfgui {

/**
 * The smallest round upper end of an axis from 0 that holds `value` in `intervals` equal
 * steps, each step 1, 2, 2.5 or 5 times a power of ten (`integral`: whole steps, no 2.5).
 */
inline double niceAxisMax(double value, int intervals, bool integral) {
    if (!(value > 0) || intervals < 1) return intervals > 0 ? intervals : 1;
    const double raw = value / intervals;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * magnitude;
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
        if (integral && (m == 2.5 || m * magnitude < 1)) continue;
        if (m * magnitude >= raw * (1 - 1e-9)) {
            step = m * magnitude;
            break;
        }
    }
    if (integral && step < 1) step = 1;
    return step * intervals;
}

}  // namespace kfgui
