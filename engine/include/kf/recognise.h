#pragma once
/**
 * Deriving a task's computation (kf/computation.h) from its reference when the manifest
 * declares none. A token-level recogniser of the host C++ reference's loops, not a compiler:
 * it recognises
 *   - a flat elementwise loop: `for (i = 0; i < n; ++i) y[i] = <expr of x[i], params, sizes>;`
 *   - a row reduction: `for (r ...) { T acc = <init>; for (c ...) acc += | *= <expr>;
 *     or acc = fmax/fmin/std::max/std::min(acc, <expr>); y[r] = <expr of acc>; }`, with the
 *     inputs indexed `[r * cols + c]`, `[c]` or `[r]`, the accumulator starting at the
 *     combine's identity (c from 0) or at the first element (c from 1);
 * with OpenMP pragmas, casts and std:: / f-suffixed math functions allowed. Anything else is
 * reported as "cannot derive" with the reason; a derived computation is checked like a
 * declared one, and every kernel built from it is still verified against the reference.
 * See docs/task-format.md.
 */
#include <optional>
#include <string>

#include "kf/computation.h"
#include "kf/task.h"

namespace kf {

struct Recognition {
    std::optional<Computation> computation;  ///< origin says "derived from <file>: <loop shape>"
    std::string reason;                      ///< why not, when computation is empty
};

/** Reads the task's host reference (the recogniser's input on either backend). */
Recognition recognise_reference(const Task& task, Backend backend);
/** The same from a reference's text (for tests and other front ends). */
Recognition recognise_source(const Task& task, const std::string& source, const std::string& file_name);

}  // namespace kf
