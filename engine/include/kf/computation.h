#pragma once
/**
 * A task's computation described in a few expressions (the manifest's optional `computation`
 * object, docs/task-format.md): the op class, the layout (rows x cols), the per-row
 * reductions ("stats", each a map and a combine), the per-element map or the per-row
 * epilogue. The op-class templates (kf/templates.h) are instantiated from it, for both
 * backends. Expressions are a small C-like language: numbers, names, + - * /, unary -,
 * parentheses and a fixed set of functions (exp, log, sqrt, rsqrt, tanh, erf, abs, sin, cos,
 * sigmoid, relu, pow, min, max).
 */
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kf {

struct Task;

/** A parsed computation expression; emits C for the templates. */
class ComputeExpr {
public:
    ComputeExpr() = default;
    /** Throws ExprError naming the column and what was expected. */
    static ComputeExpr parse(std::string_view text);
    /** The names it refers to (function names excluded). */
    std::set<std::string> names() const;
    const std::string& text() const { return text_; }
    bool empty() const { return !root_; }
    /**
     * C code for the expression: `resolve` turns a name into C (a load, a variable); `fp32`
     * chooses float literals and the float math functions (expf...) over double ones.
     * `rsqrt` becomes rsqrtf on CUDA and 1/sqrt on the host.
     */
    std::string to_c(const std::function<std::string(const std::string&)>& resolve, bool fp32, bool cuda) const;

    struct Node;

private:
    std::string text_;
    std::shared_ptr<const Node> root_;
};

/**
 * How a tensor is indexed in a rows x cols layout: [r, c], [c], [r]; for a gemm's product
 * also Left ([r, k], rows x inner) and Right ([k, c], inner x cols).
 */
enum class Indexing { Full, PerColumn, PerRow, Left, Right };

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
     * Left and a Right tensor; `map` is each output element's epilogue).
     */
    std::string op;
    /** The layout as C expressions of the sizes; empty for a flat elementwise map. */
    std::string rows, cols;
    /** gemm: the summed dimension (rows x inner times inner x cols). */
    std::string inner;
    std::vector<ComputationStat> stats;
    ComputeExpr map;       ///< per-element output (elementwise, row_normalize, softmax)
    ComputeExpr epilogue;  ///< per-row output (row_reduce, matvec)
    std::string output;    ///< the output tensor it writes
    /** How each input tensor the expressions use is indexed (Full for a flat map). */
    std::map<std::string, Indexing> inputs;
    /** "manifest", or how it was derived (e.g. "derived from reference.cpp: ..."). */
    std::string origin = "manifest";

    /** True for the classes whose output has one value per row. */
    bool per_row_output() const { return op == "row_reduce" || op == "matvec"; }
    /** One line, e.g. "row_reduce over rows x cols: m = max(x); y = m". */
    std::string summary() const;
};

/**
 * Reads and checks a `computation` object against the task (its tensors, sizes, params and
 * cases must be loaded). Throws TaskError naming the field, e.g. `computation.stats[1].map`.
 */
Computation computation_from_json(const nlohmann::json& j, const Task& task);

/** The op classes a computation may declare. */
const std::vector<std::string>& computation_ops();
/** The combines a stat may use. */
const std::vector<std::string>& computation_combines();

}  // namespace kf
