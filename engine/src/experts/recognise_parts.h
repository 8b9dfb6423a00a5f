#pragma once
// The two recognisers behind kf/recognise.h: one reads tokens, the other libclang's AST. The
// AST recogniser's parts share the declarations of namespace kf::ast below: index
// polynomials, scopes and expressions (recognise_index.cpp), loops over rows or columns
// (recognise_lines.cpp), nests over the cells (recognise_cells.cpp), padded reads
// (recognise_padding.cpp), histograms (recognise_histogram.cpp) and matrix products
// (recognise_gemm.cpp).
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/recognise.h"
#include "loop_nest.h"

namespace kf {

/** "cannot derive the computation from <file>: <why>". */
Recognition cannot_derive(const std::string& file, const std::string& why);
/** The computation the loops read as, checked against the task; origin "derived from <file><how>: <shape>". */
Recognition derived(const Task& task, const nlohmann::json& j, const std::string& file, const std::string& how,
                    const std::string& shape);

/** The token-level recogniser (recognise.cpp). */
Recognition recognise_tokens(const Task& task, const std::string& source, const std::string& file);
/**
 * The AST recogniser (recognise_clang.cpp). `loaded` says whether libclang could be loaded;
 * when not, the reason says why ("libclang not found (...)").
 */
Recognition recognise_clang(const Task& task, const std::string& source, const std::string& file, bool& loaded);

namespace ast {

using nest::Block;
using nest::Expr;
using nest::ExprPtr;
using nest::Stmt;

/** Why the loops are not a shape the recogniser knows. */
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};
[[noreturn]] void refuse(const std::string& why);
/** " (line N)". */
std::string at_line(int line);

// ---- Index polynomials: monomials of names (sorted) with integer coefficients ----

using Monomial = std::vector<std::string>;
using Poly = std::map<Monomial, long long>;

Poly constant(long long v);
/** The polynomial's value when it is a constant (no name in it). */
std::optional<long long> constant_poly(const Poly& p);
Poly variable(const std::string& n);
Poly add(Poly a, const Poly& b, long long sign = 1);
Poly mul(const Poly& a, const Poly& b);
/** The polynomial as C, highest degree first, the loop variables `first` first in each term. */
std::string poly_text(const Poly& p, const std::set<std::string>& first = {});
/** Appends a polynomial's term with its coefficient k to `text`: "3 * r", " - c", "-1"... */
void append_term(std::string& text, std::string term, long long k);
/** The polynomial written back as an expression (which reads back as the same polynomial). */
ExprPtr poly_expr(const Poly& p);

// ---- Scopes: what the names mean at a point of the nest ----

/** Neighbour offsets (row, column) relative to the cell. */
using Offsets = std::set<std::pair<long long, long long>>;

struct Scope {
    std::map<std::string, ExprPtr> lets;                          ///< floating scalars, already substituted
    std::map<std::string, Poly> ilets;                            ///< integer scalars
    std::map<std::string, std::pair<std::string, Poly>> aliases;  ///< pointer -> tensor + offset
    std::map<std::string, long long> fixed;                       ///< loop variables held at a value
    std::set<std::string> loop_vars;                              ///< refused as values
    std::string row, col;                                         ///< the cell's variables (empty: out of scope)
    Poly cols;                                                    ///< the layout's column count
    bool flat = false;                                            ///< one loop over the elements (col is its variable)
    /** flat: the integer names of the element's column (`i % cols`) and row (`i / cols`), and that column count. */
    std::string flat_col, flat_row;
    std::optional<Poly> flat_cols;
    bool cells = false;                                           ///< a nest over the cells: only [r, c] and neighbours
    Offsets* offsets = nullptr;                                   ///< the neighbour reads seen (cells)
    Offsets* guarded = nullptr;    ///< cells: the neighbour reads seen under a bounds guard (zero padding)
    Offsets* clamped = nullptr;    ///< cells: the neighbour reads seen at clamped coordinates
    std::optional<Poly> row_poly;  ///< cells: the row when it is not one loop variable (b * C + c)
    Poly rows;                     ///< cells: the layout's row count
    /** cells: each loop variable as the cell's position reads it (i: row(), c: row() % C). */
    std::map<std::string, std::string> position;
    /** Local arrays filled with 0 (a matrix product's row of sums, a histogram's counts): name -> length. */
    std::map<std::string, ExprPtr> arrays;
    /** The values an integer input takes (u8: 0..255, bool: 0..1): tensor -> [lowest, highest]. */
    std::map<std::string, std::pair<long long, long long>> ranges;
    /** An output element an earlier loop wrote as scratch: its value, and the row and column variables it is written in. */
    struct Stored {
        std::string row, col;
        ExprPtr value;
    };
    std::map<std::string, Stored> stored;  ///< by tensor
};

Poly cell_index(const Scope& s);
std::optional<Poly> to_poly(const ExprPtr& e, const Scope& s);
Poly poly_or_refuse(const ExprPtr& e, const Scope& s, const std::string& what);
/**
 * Scalars replaced by their definitions, held loop variables by their values; an array read
 * is resolved where it stands (row pointer, index definitions, held variables), so that it
 * keeps its meaning wherever the expression is used.
 */
ExprPtr subst(const ExprPtr& e, const Scope& s);
/** The tensor and index polynomial of an array access (through row pointers). */
std::pair<std::string, Poly> access(const ExprPtr& e, const Scope& s);
/** A tensor read written as the computation language reads it, or a refusal naming the index. */
std::string read_text(const ExprPtr& e, const Scope& s);
/** The expression (substituted) with its reads written as the computation language reads them. */
ExprPtr rewrite(const ExprPtr& e, const Scope& s);
/** The value an earlier loop of the row stored at the cell of `tensor`, in this loop's variables; null if none. */
ExprPtr stored_value(const std::string& tensor, const Scope& s);
/** e with each of its operands replaced by f of it; e itself when it has none. */
ExprPtr map_args(const ExprPtr& e, const std::function<ExprPtr(const ExprPtr&)>& f);
/** True when e has the name n. */
bool mentions(const ExprPtr& e, const std::string& n);
/** An expression, already substituted, with its reads rewritten; a refusal names the statement's line. */
ExprPtr rewritten(const ExprPtr& e, const Scope& s, int line);
/** An expression (substituted) in the computation language; a refusal names the statement's line. */
std::string emit(const ExprPtr& e, const Scope& s, int line);

std::optional<double> constant_value(const ExprPtr& e);
/** An integer constant expression's value (loop bounds such as `1 + 1` from `<= 1`). */
std::optional<long long> constant_of(const ExprPtr& e, const Scope& s);
/**
 * The values a loop takes when its start and bound are integer constants here, in the order it
 * runs them (counting up or down); null when they are not constants; refused past `limit` values.
 */
std::optional<std::vector<long long>> unrolled_values(const Stmt& loop, const Scope& s, long long limit);
/**
 * Integer arithmetic on integer constants (held loop variables: k + 1) folded to its value as C
 * computes it (truncating division); an operand the C code converts to floating point is not
 * integer arithmetic, so 1.0f / (k + 1) becomes 1.0 / 4, float(k) / 2 stays 3 / 2.
 */
ExprPtr fold_integers(const ExprPtr& e);
bool is_identity(const std::string& combine, const ExprPtr& init);
bool is_name(const ExprPtr& e, const std::string& n);
/** An accumulator's update: acc += e, acc *= e, acc = max(acc, e), ...; the combine and e. */
std::optional<std::pair<std::string, ExprPtr>> reduction_update(const Stmt& st, const std::string& acc);
bool is_early_exit(const Stmt& st);
/** A declaration outside the loops: a scalar, an index or a row pointer. */
void declare(const Stmt& st, Scope& s);
/** A scalar assignment outside the reductions: the name's value from now on. */
void reassign(const Stmt& st, Scope& s);

// ---- Padded reads (recognise_padding.cpp) ----

/** The offsets of a read at `p` from the cell (cells), when they are constants. */
std::optional<std::pair<long long, long long>> neighbour_offset(const Poly& p, const Scope& s);
/** `w[i]` with i of row(), col() and sizes, when p is an integer expression of the cell's position. */
std::optional<std::string> position_read(const std::string& tensor, const Poly& p, const Scope& s);
/** at(x, di, dj) for a read whose row and column are clamped to the layout; recorded in s.clamped. */
std::optional<std::string> clamped_read(const ExprPtr& e, const Scope& s);
/**
 * A term read only inside the layout, `cond ? term : 0` or `if (cond) acc += term`: the term
 * rewritten, its neighbour reads recorded in s.guarded, when cond is a bounds check (null when
 * it is not); refused when the check and the reads do not match or the term is not zero
 * with them.
 */
ExprPtr guarded_term(const ExprPtr& cond, const ExprPtr& term, const Scope& s, int line);

// ---- Shapes ----

/** A derived computation and the loop shape it was read from. */
struct Derived {
    nlohmann::json j;
    std::string shape;
};

/** A two-level nest over the cells: elementwise, transpose, stencil (recognise_cells.cpp). */
Derived cells(const Stmt& outer, Scope s);
/**
 * for (i) if (0 <= bin && bin < bins) out[bin] += 1, bin an expression of inputs at [i], after
 * a loop zeroing out[0, bins) (recognise_histogram.cpp); `zero` is that loop, or null.
 */
Derived histogram(const Stmt* zero, const Stmt& loop, Scope s);
/**
 * T local[N] = {}; for (i) ++local[bin]; for (b < N) out[b] = local[b]; the bin checked as in
 * histogram(), or an input whose values lie in [0, N) (u8 and N >= 256) (recognise_histogram.cpp).
 */
Derived copied_histogram(const Stmt& loop, const Stmt& copy, Scope s);
/** True when the loop's last statement counts into out[bin] with a bin other than the loop variable. */
bool is_histogram_loop(const Stmt& loop);
/**
 * True when the two-level nest's cell (the inner loop's body, not ending with a loop) has a
 * loop whose bounds are not constants there: a sum over an inner dimension, a matrix product.
 */
bool is_product_nest(const Stmt& outer, const Scope& s);
/**
 * for (i < M) for (j < N) { acc = 0; for (k < K) acc += A[i * K + k] * B[k * N + j];
 * C[i * N + j] = e; }, either loop order, e of acc and reads at the cell, [j] or [i]
 * (recognise_gemm.cpp).
 */
Derived gemm(const Stmt& outer, Scope s);
/** True when a loop of `outer` sums into a row of a local vector in an inner loop (gemm_rows' shape). */
bool is_row_product(const Stmt& outer, const Scope& s);
/**
 * for (i < M) { for (j < N) acc[j] = 0; for (k < K) { for (j < N) acc[j] += A[i * K + k] * B[k * N + j]; }
 * for (j < N) C[i * N + j] = e; }: the i-k-j order with a row of sums in a local vector, e of
 * acc[j] and reads at the cell.
 */
Derived gemm_rows(const Stmt& outer, Scope s);
/**
 * for (r) { scalars; loops along the row reducing, some writing each element }: reductions,
 * normalisations and scans along rows or columns (recognise_lines.cpp).
 */
Derived lines(const Stmt& outer, Scope s);
/** kf_solve's body, whatever its shape, in the scope `s` of the task (recognise_clang.cpp); throws Refusal. */
Derived recognise_body(const Block& body, Scope s);

}  // namespace ast
}  // namespace kf
