#pragma once
/**
 * Deriving a task's computation (kf/computation.h) from its reference when the manifest
 * declares none. Two recognisers read the host C++ reference's kf_solve:
 *
 * The AST recogniser parses it with libclang (C++17, syntax only; nothing is executed, and a
 * reference that includes a file it may not read is not parsed) into a small loop-nest model:
 * loops, scalar and row-pointer declarations, assignments, `if (...) return;` exits, calls of
 * max/min/fmax/std::max... and the math functions, casts dropped; index expressions are
 * normalised as polynomials of the loop variables and sizes, so `(long long)r * cols + c`,
 * `c + r * cols`, a row pointer `xr[c]` and `k` where `k = i * w + j` are one index. It
 * recognises an elementwise loop (or a two-level nest over the cells), row reductions and
 * normalisations (one pass or several per row), column reductions, transposes (either loop
 * order), running combines along rows and down columns (row_scan, col_scan), stencils:
 * neighbour reads at constant offsets, constant-bound loops over the offsets unrolled, and a
 * branch for the edge cells (`border`), or every neighbour read under a bounds check (pad
 * zero) or at clamped coordinates (pad clamp), reads of weights at an index of the cell's
 * position as w[row() % C * 5 + k]; histograms after a zeroing loop; and matrix products
 * (gemm): a nest over the output's cells, each a sum from 0 of A[i * K + k] * B[k * N + j]
 * over k, then an epilogue of the sum and reads at the cell, [j] or [i]. A static or inline
 * helper of one `return` is inlined.
 *
 * libclang is optional at run time: it is loaded with dlopen (KF_LIBCLANG names the library,
 * else libclang-14.so.1, libclang.so.1, libclang-15.so.1, libclang.so). Where it cannot be
 * loaded, or where it refuses, the token recogniser reads the reference token by token: a
 * flat elementwise loop, and a loop over rows of reductions ending with `y[r] = e` or a loop
 * writing `y[r * cols + c]`.
 *
 * Anything else is reported as "cannot derive" with the reason (the AST recogniser's when
 * libclang was loaded); a derived computation is checked like a declared one, and every kernel
 * built from it is still verified against the reference. See docs/task-format.md.
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

/** Which recogniser reads the reference: the AST one falling back to tokens, or one alone. */
enum class Recogniser { Best, Libclang, Tokens };

/** Reads the task's host reference (the recogniser's input on either backend). */
Recognition recognise_reference(const Task& task, Backend backend, Recogniser which = Recogniser::Best);
/** The same from a reference's text (for tests and other front ends); kf_task.h is generated. */
Recognition recognise_source(const Task& task, const std::string& source, const std::string& file_name,
                             Recogniser which = Recogniser::Best);
/** True when libclang can be loaded (KF_LIBCLANG, else the usual names); why not otherwise. */
bool libclang_available(std::string* why = nullptr);

}  // namespace kf
