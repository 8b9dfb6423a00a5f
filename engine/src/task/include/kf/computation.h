#pragma once
/**
 * A task's computation described in a few expressions (the manifest's optional `computation`
 * object, docs/task-format.md): the op class, the layout (rows x cols), the per-row
 * reductions ("stats", each a map and a combine), the per-element map or the per-row
 * epilogue. The op-class templates (kf/templates.h) are instantiated from it, for both
 * backends. Expressions are a small C-like language: numbers, `inf`, names, + - * /, unary -,
 * comparisons (< <= > >= == !=), && || !, parentheses, a fixed set of functions (exp, log,
 * sqrt, rsqrt, tanh, erf, abs, sin, cos, sigmoid, relu, pow, min, max), select(c, a, b)
 * and, in a stencil's map, neighbour reads at(x, di, dj) with integer offsets; in a
 * stencil's map and border, reads at an index, w[i], whose index is an integer expression of
 * sizes, integer constants, + - * / % and the cell's position row() and col().
 */
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kf {

struct Task;

/** A parsed computation expression; emits C for the templates. */
class ComputeExpr {
public:
    /** A neighbour read at(tensor, di, dj): row offset di, column offset dj. */
    struct Neighbour {
        std::string tensor;
        int di = 0, dj = 0;
        bool operator<(const Neighbour& o) const {
            return std::tie(tensor, di, dj) < std::tie(o.tensor, o.di, o.dj);
        }
        bool operator==(const Neighbour&) const = default;
    };

    ComputeExpr() = default;
    /** Throws ExprError naming the column and what was expected. */
    static ComputeExpr parse(std::string_view text);
    /** The names it refers to (function names excluded). */
    std::set<std::string> names() const;
    /** The neighbour reads at(x, di, dj) it makes, each once. */
    std::set<Neighbour> neighbours() const;
    /** The tensors it reads at an index, w[i], each once. */
    std::set<std::string> indexed() const;
    /** The names used inside its indices (which must be sizes). */
    std::set<std::string> index_names() const;
    /** True when it reads the cell's position, row() or col(), anywhere (an index included). */
    bool uses_position() const;
    /**
     * Where the index reads and positions are misused, what is wrong (empty when nothing is):
     * row(), col() and % belong in an index; an index is an integer expression of names,
     * integer constants, + - * / %, unary - and row(), col(), without a nested index.
     */
    std::string index_misuse() const;
    /**
     * Every index read w[i] with its index's value at row r, column c, the names taken from
     * `vars` (a name missing there reads as 0); C's integer division and remainder.
     */
    std::vector<std::pair<std::string, long long>> index_values(const std::map<std::string, double>& vars, long long r,
                                                                long long c) const;
    /** True when the expression is one name and nothing else. */
    bool is_name() const;
    /**
     * The expression written back in the language, fully parenthesised: two expressions with
     * the same tree have the same form (an expression's text may differ in spaces or brackets).
     */
    std::string form() const;
    /** Its sub-expressions, the whole included, each once, the longer forms first. */
    std::vector<ComputeExpr> subexpressions() const;
    /** True where `sub` (the same tree) occurs in it. */
    bool contains(const ComputeExpr& sub) const;
    /** The expression with every occurrence of `sub` (the same tree) read as the name `name`. */
    ComputeExpr replaced(const ComputeExpr& sub, const std::string& name) const;
    /**
     * The expression with every division a / n by a name n of `names` written as a product,
     * a * <prefix>n, where the caller defines <prefix>n as 1 / n (once, rather than a
     * division per element).
     */
    ComputeExpr with_reciprocals(const std::set<std::string>& names, const std::string& prefix) const;
    /** The CUDA definitions of kf_idiv and kf_imod, which to_c(..., cuda = true) uses for / and % in an index. */
    static const char* cuda_index_helpers();
    const std::string& text() const { return text_; }
    bool empty() const { return !root_; }
    /**
     * C code for the expression: `resolve` turns a name into C (a load, a variable); `fp32`
     * chooses float literals and the float math functions (expf...) over double ones.
     * `rsqrt` becomes rsqrtf on CUDA and 1/sqrt on the host. A neighbour read at(x, di, dj)
     * is resolved as the name "x@di,dj" (e.g. "x@-1,0"); a plain name x is "x@0,0" only when
     * the resolver says so. An index read w[i] is resolved as the name "w[<i in C>]", the
     * index a long long expression whose names are written as they are (sizes are the entry
     * point's parameters); row() and col() are resolved as the names "row()" and "col()".
     */
    std::string to_c(const std::function<std::string(const std::string&)>& resolve, bool fp32, bool cuda) const;

    struct Node;

private:
    std::string text_;
    std::shared_ptr<const Node> root_;
};

/**
 * How a tensor is indexed in a rows x cols layout: [r, c], [c], [r]; for a gemm's product
 * also Left ([r, k], rows x inner) and Right ([k, c], inner x cols); Indexed: only read at
 * the indices a stencil's expressions give (w[i]), whatever its length.
 */
enum class Indexing { Full, PerColumn, PerRow, Left, Right, Indexed };

/** One reduction over a row: `name = combine over the row's columns of map`. */
struct ComputationStat {
    std::string name;
    std::string combine;  ///< sum, max, min, prod
    ComputeExpr map;      ///< per element; may use earlier stats
};

struct Computation {
    /**
     * elementwise, row_reduce, row_normalize, softmax, matvec, transpose (the layout is the
     * input's rows x cols; the output is cols x rows; `map` is the value moved, of inputs at
     * [r, c], written at [c, r]), gemm (one stat, the sum over `inner` of a product of a
     * Left and a Right tensor; `map` is each output element's epilogue), row_scan (one stat,
     * the running combine along the row; `map` per element), stencil (`map` of the inputs and
     * their neighbours at(x, di, dj) for the cells at least radius() from every edge,
     * `border` of the inputs at the cell for the others), histogram (no layout: `map` is the
     * bin of each element of the inputs, `bins` the output's length; counts of the elements
     * per bin, those outside [0, bins) not counted), col_reduce (stats over each column's rows,
     * then `epilogue` per column), col_scan (one stat, the running combine down the column;
     * `map` per element).
     */
    std::string op;
    /** The layout as C expressions of the sizes; empty for a flat elementwise map. */
    std::string rows, cols;
    /** gemm: the summed dimension (rows x inner times inner x cols). */
    std::string inner;
    std::vector<ComputationStat> stats;
    ComputeExpr map;       ///< per-element output (elementwise, row_normalize, softmax)
    ComputeExpr epilogue;  ///< per-row output (row_reduce, matvec), per-column output (col_reduce)
    ComputeExpr border;    ///< stencil: the value of the cells within the radius of an edge (empty with `pad`)
    int radius_rows = 0;   ///< stencil: the largest |di|: rows closer than it to the top or bottom are edge cells
    int radius_cols = 0;   ///< stencil: the largest |dj|: columns closer than it to the left or right are edge cells
    /**
     * stencil: how the edge cells are computed. Empty: from `border`. "zero": from `map`, a
     * neighbour outside the layout read as 0 (a zero-padded convolution); "clamp": from
     * `map`, a neighbour outside read at the nearest cell inside (replicate padding).
     */
    std::string pad;
    std::string bins;      ///< histogram: the number of bins, a C expression of the sizes
    std::string output;    ///< the output tensor it writes
    /** How each input tensor the expressions use is indexed (Full for a flat map). */
    std::map<std::string, Indexing> inputs;
    /** "manifest", or how it was derived (e.g. "derived from reference.cpp: ..."). */
    std::string origin = "manifest";

    /** True for the classes whose output has one value per row. */
    bool per_row_output() const { return op == "row_reduce" || op == "matvec"; }
    /** stencil: the largest |di| or |dj| of its neighbour reads. */
    int radius() const { return radius_rows > radius_cols ? radius_rows : radius_cols; }
    /** True for col_reduce: one value per column. */
    bool per_col_output() const { return op == "col_reduce"; }
    /** One line, e.g. "row_reduce over rows x cols: m = max(x); y = m". */
    std::string summary() const;
};

/**
 * Reads and checks a `computation` object against the task (its tensors, sizes, params and
 * cases must be loaded). Throws TaskError naming the field, e.g. `computation.stats[1].map`.
 */
Computation computation_from_json(const nlohmann::json& j, const Task& task);
/**
 * The computation as its manifest field would declare it (op, layout, stats, map, epilogue,
 * border, pad, bins, output, in that order); computation_from_json reads it back as the same.
 */
nlohmann::ordered_json computation_to_json(const Computation& c);

/** The op classes a computation may declare. */
const std::vector<std::string>& computation_ops();
/** The combines a stat may use. */
const std::vector<std::string>& computation_combines();

}  // namespace kf
