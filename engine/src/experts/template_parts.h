#pragma once
// Pieces shared by the host and CUDA op-class templates: the kernel parameter list taken from
// the task's entry point, the call arguments, element types, combines and name resolution.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kf/computation.h"
#include "kf/task.h"

namespace kf::templates {

/** A size expression (C-safe text) with every name widened to long long, in parentheses. */
std::string size_expr(const std::string& text);

/** The entry point's first lines: kf_rows, kf_cols (and kf_inner for a gemm) as long long, from the layout. */
std::string layout_consts(const Computation& c);

/** The parameters of kf_solve as written in the entry point (without the CUDA stream). */
std::string entry_params(const Task& task, Backend b);
/** The names passed to kf_solve, in order, without the stream: "x, y, rows, cols, eps". */
std::string entry_args(const Task& task);
/** The extern "C" kf_solve definition's first line, without the opening brace. */
std::string entry_definition(const Task& task, Backend b);

/** "float" or "double": the computation's element type. */
std::string element_type(const Task& task, const Computation& c);
bool is_fp32(const Task& task, const Computation& c);

/** The combine's identity and its C expression of two operands. */
std::string identity(const std::string& combine, bool fp32);
std::string combine_expr(const std::string& combine, const std::string& a, const std::string& b);

/** Input tensors an expression reads, with their indexing. */
std::vector<std::string> tensors_in(const ComputeExpr& e, const Computation& c);
/** Per-row tensors any expression of the computation reads. */
std::vector<std::string> per_row_tensors(const Computation& c);

/**
 * Resolves an expression's names: tensors through `tensor`, stats to kf_s_<name>, sizes and
 * params cast to the element type.
 */
std::function<std::string(const std::string&)> resolver(const Task& task, const Computation& c, const std::string& type,
                                                         std::function<std::string(const std::string&)> tensor);

/**
 * resolver() for the tensors of a rows x cols computation at one element: a Full tensor at
 * [full], a per-column one at [col], a per-row one at [row] (or its kf_row_<name> copy when
 * `row` is empty). A gemm's factors are not read this way. A stencil's row() and col() are
 * `row` and `col`, its reads at an index w[i] the element converted to the element type.
 */
std::function<std::string(const std::string&)> element_resolver(const Task& task, const Computation& c, const std::string& type,
                                                                 const std::string& full, const std::string& col,
                                                                 const std::string& row);

/**
 * A stencil's resolver: `cell` for the names at the cell, a neighbour read at(x, di, dj)
 * ("x@di,dj") as x[full + di * kf_cols + dj]. With `pad` ("zero", "clamp") the neighbour is
 * guarded for an edge cell (kf_r, kf_c against kf_rows, kf_cols): read as 0 outside, or at
 * the nearest cell inside through kf_clamp(v, n), which the instance must define.
 */
std::function<std::string(const std::string&)> neighbour_resolver(const std::string& type,
                                                                   std::function<std::string(const std::string&)> cell,
                                                                   const std::string& full, const std::string& pad);

/** A stencil's edge cells as C: the border expression, or the map with its neighbours padded (`full` as for neighbour_resolver). */
std::string stencil_edge(const Computation& c, const std::function<std::string(const std::string&)>& cell, const std::string& type,
                         const std::string& full, bool fp32, bool cuda);

/** What a stencil instance defines before its kernel: kf_clamp for a clamp pad; on CUDA, the index division helpers. */
std::string stencil_helpers(const Computation& c, bool cuda);

/**
 * True for a column reduction whose stats are a sum `s` of some e and the centred second
 * moment of e about the mean s / rows, written `(e - s / rows) * (e - s / rows)` (or, for e a
 * name, `(s / rows - e) * (s / rows - e)`), `rows` being the layout's rows as written: both
 * can then be had in one pass, from the sums of e - k and (e - k)^2 for a shift k per column.
 */
bool is_centred_moment(const Computation& c);

/**
 * True for a row reduction whose first two stats are a max `m` of e (or of
 * `select(k, e, -inf)`) and a sum of `exp(e - m)` (or of `select(k, exp(e - m), 0)`), the
 * same k and e: both can then be had in one pass over the row (a running max, the running
 * sum rescaled by exp(old - new) when the max grows), as an online softmax does.
 */
bool is_online_max_sum(const Computation& c);

/** The comment block that opens every instance: what it computes and where that came from. */
std::string header_comment(const std::string& title, const Computation& c);

}  // namespace kf::templates
