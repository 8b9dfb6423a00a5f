// The manifest's `computation` object (docs/task-format.md): read, checked against the task's
// tensors, sizes and cases, every rejection naming its field.
#include <algorithm>
#include <cstdlib>
#include <regex>

#include <nlohmann/json.hpp>

#include "kf/computation.h"
#include "kf/error.h"
#include "kf/task.h"

namespace kf {

namespace {

using nlohmann::json;

class ComputationReader {
public:
    ComputationReader(const Task& t) : t_(t) {
        // Expressions may read the sizes and params besides tensors and the stats before them.
        scalars_.insert(t_.size_names.begin(), t_.size_names.end());
        for (const auto& p : t_.params) scalars_.insert(p.name);
    }

    [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
        throw TaskError(t_.manifest.string(), field, reason);
    }

    std::string text(const json& j, const std::string& key, const std::string& path, bool required) const {
        if (!j.contains(key)) {
            if (required) fail(path + "." + key, "required field is missing");
            return {};
        }
        if (!j.at(key).is_string()) fail(path + "." + key, "expected a string");
        return j.at(key).get<std::string>();
    }

    ComputeExpr expr(const std::string& src, const std::string& field) const {
        ComputeExpr e;
        try {
            e = ComputeExpr::parse(src);
        } catch (const ExprError& err) {
            fail(field, err.what());
        }
        if (auto misuse = e.index_misuse(); !misuse.empty()) fail(field, misuse);
        return e;
    }

    /** A layout expression: sizes only, and plain enough to be written into C as is. */
    Expr layout(const std::string& src, const std::string& field) const {
        static const std::regex c_safe("[A-Za-z0-9_+*() -]+");
        if (!std::regex_match(src, c_safe)) fail(field, "use size names, integers, + - * and parentheses");
        Expr e;
        try {
            e = Expr::parse(src);
        } catch (const ExprError& err) {
            fail(field, err.what());
        }
        for (const auto& n : e.names())
            if (std::find(t_.size_names.begin(), t_.size_names.end(), n) == t_.size_names.end())
                fail(field, "unknown size '" + n + "'");
        return e;
    }

    const TensorSpec* tensor(const std::string& name) const {
        for (const auto& ts : t_.tensors)
            if (ts.name == name) return &ts;
        return nullptr;
    }

    /** The computation `j` describes, checked against the task. A reader reads one computation. */
    Computation read(const json& j) {
        check_fields(j);
        read_op(j);
        read_output(j);
        read_layout(j);
        read_stats(j);
        read_formulas(j);
        check_neighbour_reads();
        if (histogram_) {
            index_histogram_inputs();
            return c_;
        }
        for (const auto& name : used_tensors_) index_tensor(name);
        if (!indexed_tensors_.empty()) check_indices(c_, indexed_tensors_, rows_, cols_);
        if (gemm_) check_gemm_product();
        if (laid_out_) check_output_size();
        return c_;
    }

private:
    /** An object of known fields. */
    void check_fields(const json& j) const {
        const std::string P = "computation";
        if (!j.is_object()) fail(P, "expected an object");
        for (auto it = j.begin(); it != j.end(); ++it) {
            static const std::vector<std::string> keys = {"op",     "layout", "stats", "map", "epilogue",
                                                          "border", "pad",    "bins",   "output", "description"};
            if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) fail(P + "." + it.key(), "unknown field");
        }
    }

    /** The op, what follows from it, and the fields only some ops have. */
    void read_op(const json& j) {
        const std::string P = "computation";
        Computation& c = c_;
        c.op = text(j, "op", P, true);
        const auto& ops = computation_ops();
        if (std::find(ops.begin(), ops.end(), c.op) == ops.end())
            fail(P + ".op", "unknown op '" + c.op +
                               "' (elementwise, row_reduce, row_normalize, softmax, matvec, transpose, gemm, row_scan, stencil, "
                               "histogram, col_reduce, col_scan)");
        histogram_ = c.op == "histogram";
        stencil_ = c.op == "stencil";
        rows_op_ = c.op != "elementwise" && !histogram_;
        // An elementwise map with a layout reads per-row and per-column operands (bias[c], t[r]).
        laid_out_ = rows_op_ || (c.op == "elementwise" && j.contains("layout"));
        for (const std::string key : {"border", "pad", "bins"})
            if (j.contains(key) && (key == "bins" ? !histogram_ : !stencil_))
                fail(P + "." + key, std::string("only a ") + (key == "bins" ? "histogram" : "stencil") + " has a " + key);
        transpose_ = c.op == "transpose";
        gemm_ = c.op == "gemm";
    }

    /** The output: the task's only one, of a type the templates write. */
    void read_output(const json& j) {
        const std::string P = "computation";
        Computation& c = c_;
        std::vector<const TensorSpec*> outputs;
        for (const auto& ts : t_.tensors)
            if (ts.role == TensorRole::Output) outputs.push_back(&ts);
        c.output = text(j, "output", P, false);
        if (c.output.empty()) {
            if (outputs.size() != 1) fail(P + ".output", "the task has several outputs: name the one computed");
            c.output = outputs.front()->name;
        }
        const TensorSpec* out = tensor(c.output);
        if (!out || out->role != TensorRole::Output) fail(P + ".output", "'" + c.output + "' is not an output tensor");
        if (outputs.size() != 1)
            fail(P + ".output", "a computation describes the task's only output; this task has " + std::to_string(outputs.size()));
        if (histogram_) {
            if (out->dtype != DType::I32 && out->dtype != DType::I64)
                fail(P + ".output", "a histogram writes i32 or i64 counts, '" + c.output + "' is " + std::string(to_string(out->dtype)));
        } else if (out->dtype != DType::F32 && out->dtype != DType::F64) {
            fail(P + ".output", "the templates write f32 or f64 outputs, '" + c.output + "' is " + std::string(to_string(out->dtype)));
        }
        out_ = out;
    }

    /** The layout (rows, cols and a gemm's inner), or a histogram's bins. */
    void read_layout(const json& j) {
        const std::string P = "computation";
        Computation& c = c_;
        if (histogram_) {
            if (j.contains("layout")) fail(P + ".layout", "a histogram has no layout: its inputs are read as flat arrays");
            c.bins = text(j, "bins", P, true);
            bins_ = layout(c.bins, P + ".bins");
        } else if (j.contains("layout")) {
            const json& l = j.at("layout");
            if (!l.is_object()) fail(P + ".layout", "expected {\"rows\": ..., \"cols\": ...}");
            for (auto it = l.begin(); it != l.end(); ++it)
                if (it.key() != "rows" && it.key() != "cols" && (!gemm_ || it.key() != "inner"))
                    fail(P + ".layout." + it.key(), gemm_ ? "unknown field (rows, cols, inner)" : "unknown field");
            c.rows = text(l, "rows", P + ".layout", true);
            c.cols = text(l, "cols", P + ".layout", true);
            rows_ = layout(c.rows, P + ".layout.rows");
            cols_ = layout(c.cols, P + ".layout.cols");
            if (gemm_) {
                c.inner = text(l, "inner", P + ".layout", true);
                inner_ = layout(c.inner, P + ".layout.inner");
            }
        } else if (rows_op_) {
            fail(P + ".layout", "required for " + c.op + " (the rows and the reduced cols, as size expressions)");
        }
    }

    void check_dtype(const TensorSpec& ts, const std::string& field) const {
        if (ts.dtype == DType::F16 || ts.dtype == DType::BF16)
            fail(field, "'" + ts.name + "' is " + std::string(to_string(ts.dtype)) +
                            ": the templates read f32, f64, i32, i64, u8 and bool tensors");
    }

    /**
     * The names an expression reads: sizes, params, the stats before it and input tensors
     * (recorded as used; per_vector: as read by the per-row or per-column epilogue).
     */
    void check_names(const ComputeExpr& e, const std::string& field, bool per_vector) {
        if (!stencil_ && (!e.indexed().empty() || e.uses_position()))
            fail(field, "reads at an index (w[i]) and the position (row(), col()) are for a stencil's map and border");
        const auto in_index = e.index_names();
        for (const auto& n : in_index)
            if (std::find(t_.size_names.begin(), t_.size_names.end(), n) == t_.size_names.end())
                fail(field, "'" + n + "' in an index: an index reads sizes, integers and row(), col()");
        for (const auto& n : e.indexed()) {
            const TensorSpec* ts = tensor(n);
            if (!ts || ts->role != TensorRole::Input) fail(field, n + "[...]: not an input tensor");
            check_dtype(*ts, field);
            indexed_tensors_.insert(n);
        }
        for (const auto& n : e.names()) {
            if (scalars_.count(n) || locals_.count(n)) continue;
            const TensorSpec* ts = tensor(n);
            if (!ts) fail(field, "unknown name '" + n + "' (tensors, sizes, params" + (rows_op_ ? ", earlier stats" : "") + ")");
            if (ts->role != TensorRole::Input) fail(field, "'" + n + "' is an output; expressions read inputs");
            check_dtype(*ts, field);
            used_tensors_.insert(n);
            if (per_vector) (c_.per_col_output() ? per_col_names_ : per_row_names_).insert(n);
        }
    }

    /** The stats (reductions along the row or column), as many as the op has. */
    void read_stats(const json& j) {
        const std::string P = "computation";
        const Computation& c = c_;
        const json& stats = j.contains("stats") ? j.at("stats") : json::array();
        if (!stats.is_array()) fail(P + ".stats", "expected an array");
        if (!rows_op_ && !stats.empty()) fail(P + ".stats", "an elementwise map has no reductions");
        if ((stencil_ || histogram_) && !stats.empty()) fail(P + ".stats", "a " + c.op + " has no reductions");
        if (transpose_ && !stats.empty()) fail(P + ".stats", "a transpose has no reductions");
        if (rows_op_ && !transpose_ && !stencil_ && stats.empty()) fail(P + ".stats", c.op + " needs at least one reduction over the row");
        if (gemm_ && stats.size() != 1) fail(P + ".stats", "gemm has one stat: the sum over inner of a product");
        if (c.op == "row_scan" && stats.size() != 1)
            fail(P + ".stats", "row_scan has one stat: the running combine along the row");
        if (c.op == "col_scan" && stats.size() != 1)
            fail(P + ".stats", "col_scan has one stat: the running combine down the column");
        for (std::size_t i = 0; i < stats.size(); ++i) read_stat(stats[i], P + ".stats[" + std::to_string(i) + "]");
    }

    /** One stat at `path`; its name is a local of the expressions after it. */
    void read_stat(const json& s, const std::string& path) {
        if (!s.is_object()) fail(path, "expected {\"name\": ..., \"combine\": ..., \"map\": ...}");
        for (auto it = s.begin(); it != s.end(); ++it)
            if (it.key() != "name" && it.key() != "combine" && it.key() != "map") fail(path + "." + it.key(), "unknown field");
        ComputationStat st;
        st.name = text(s, "name", path, true);
        static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
        if (!std::regex_match(st.name, ident) || st.name.rfind("kf_", 0) == 0)
            fail(path + ".name", "'" + st.name + "' is not a C identifier (and may not start with kf_)");
        if (scalars_.count(st.name) || tensor(st.name) || locals_.count(st.name))
            fail(path + ".name", "'" + st.name + "' is already declared");
        st.combine = text(s, "combine", path, true);
        const auto& combines = computation_combines();
        if (std::find(combines.begin(), combines.end(), st.combine) == combines.end())
            fail(path + ".combine", "unknown combine '" + st.combine + "' (sum, max, min, prod)");
        st.map = expr(text(s, "map", path, true), path + ".map");
        if (gemm_ && st.combine != "sum") fail(path + ".combine", "a gemm's stat is a sum");
        check_names(st.map, path + ".map", false);
        if (gemm_)
            for (const auto& n : st.map.names())
                if (tensor(n)) product_names_.insert(n);
        locals_.insert(st.name);
        c_.stats.push_back(std::move(st));
    }

    /** The epilogue of an op with one value per row or column, else the map (and a stencil's edges). */
    void read_formulas(const json& j) {
        const std::string P = "computation";
        Computation& c = c_;
        if (c.per_row_output() || c.per_col_output()) {
            if (j.contains("map"))
                fail(P + ".map", c.op + " writes one value per " + (c.per_col_output() ? "column" : "row") + ": use \"epilogue\"");
            c.epilogue = expr(text(j, "epilogue", P, true), P + ".epilogue");
            check_names(c.epilogue, P + ".epilogue", true);
            return;
        }
        if (j.contains("epilogue")) fail(P + ".epilogue", c.op + " writes every element: use \"map\"");
        c.map = expr(text(j, "map", P, true), P + ".map");
        check_names(c.map, P + ".map", false);
        if (stencil_) read_stencil_edges(j);
        if (gemm_)
            for (const auto& n : c.map.names())
                if (product_names_.count(n))
                    fail(P + ".map", "'" + n + "' is a factor of the product; the epilogue reads the sum (" +
                                         (c.stats.empty() ? std::string("the stat") : c.stats[0].name) + ")");
    }

    /** A stencil's border or pad, and its radii from the map's neighbour reads. */
    void read_stencil_edges(const json& j) {
        const std::string P = "computation";
        Computation& c = c_;
        c.pad = text(j, "pad", P, false);
        if (j.contains("pad") && c.pad != "zero" && c.pad != "clamp")
            fail(P + ".pad", "unknown pad '" + c.pad + "' (zero, clamp)");
        if (j.contains("pad") == j.contains("border"))
            fail(P + (j.contains("pad") ? ".pad" : ".border"),
                 j.contains("pad") ? "a stencil has a border or a pad, not both"
                                   : "a stencil's edge cells need a \"border\" expression or a \"pad\" (zero, clamp)");
        if (c.pad.empty()) {
            c.border = expr(text(j, "border", P, true), P + ".border");
            check_names(c.border, P + ".border", false);
            if (!c.border.neighbours().empty())
                fail(P + ".border", "the border cells read their own element only (no at())");
        }
        for (const auto& nb : c.map.neighbours()) {
            const TensorSpec* ts = tensor(nb.tensor);
            if (!ts || ts->role != TensorRole::Input) fail(P + ".map", "at(" + nb.tensor + ", ...): not an input tensor");
            c.radius_rows = std::max(c.radius_rows, std::abs(nb.di));
            c.radius_cols = std::max(c.radius_cols, std::abs(nb.dj));
            neighbour_names_.insert(nb.tensor);
        }
        if (c.radius() == 0) fail(P + ".map", "a stencil reads neighbours: at(x, di, dj) with an offset other than 0");
    }

    /** at() only in a stencil's map. */
    void check_neighbour_reads() const {
        const std::string P = "computation";
        const Computation& c = c_;
        for (const ComputeExpr* e : {&c.map, &c.epilogue})
            if (!stencil_ && !e->neighbours().empty())
                fail(P + (e == &c.map ? ".map" : ".epilogue"), "at() reads neighbours in a stencil's map only");
        for (const auto& st : c.stats)
            if (!st.map.neighbours().empty()) fail(P + ".stats", "at() reads neighbours in a stencil's map only");
    }

    /** A histogram's inputs, all of one length, and its output, of `bins` elements in every case. */
    void index_histogram_inputs() {
        const std::string P = "computation";
        Computation& c = c_;
        // Every input is read at the same flat index: all have one element count per case.
        const TensorSpec* first = nullptr;
        for (const auto& name : used_tensors_) {
            const TensorSpec& ts = *tensor(name);
            if (!first) first = &ts;
            for (const auto& tc : t_.cases)
                if (t_.elements_of(ts, tc) != t_.elements_of(*first, tc))
                    fail(P + " (tensor '" + name + "')", "a histogram reads inputs of one length ('" + first->name + "')");
            c.inputs[name] = Indexing::Full;
        }
        if (!first) fail(P + ".map", "the bin must depend on an input tensor");
        for (const auto& tc : t_.cases) {
            const double want = bins_.eval(t_.variables(tc));
            const double on = static_cast<double>(t_.elements_of(*out_, tc));
            if (want < 1 || on != want)
                fail(P + ".bins", "'" + c.output + "' has " + std::to_string(static_cast<long long>(on)) + " elements in case '" +
                                      tc.name + "', bins gives " + std::to_string(static_cast<long long>(want)));
        }
    }

    /** Indexing of a tensor used, from its element count at every case. */
    void index_tensor(const std::string& name) {
        const std::string P = "computation";
        Computation& c = c_;
        const TensorSpec& ts = *tensor(name);
        if (gemm_) {
            if (product_names_.count(name) && ts.dtype != out_->dtype)
                fail(P + " (tensor '" + name + "')", "a gemm's factors are of the output's type (" +
                                                         std::string(to_string(out_->dtype)) + ")");
            index_gemm_tensor(c, name, ts, rows_, cols_, inner_);
            return;
        }
        bool full = true, per_col = true, per_row = true;
        for (const auto& tc : t_.cases) {
            std::map<std::string, double> vars = t_.variables(tc);
            double n = static_cast<double>(t_.elements_of(ts, tc));
            double on = static_cast<double>(t_.elements_of(*out_, tc));
            if (!laid_out_) {
                full = full && n == on;
                continue;
            }
            double r = rows_.eval(vars), k = cols_.eval(vars);
            full = full && n == r * k;
            per_col = per_col && n == k;
            per_row = per_row && n == r;
        }
        std::string field = P + " (tensor '" + name + "')";
        if (!laid_out_) {
            if (!full) fail(field, "an elementwise map without a layout reads tensors of the output's size");
            c.inputs[name] = Indexing::Full;
        } else if (full) {
            c.inputs[name] = Indexing::Full;
        } else if (per_col && per_row) {
            fail(field, "rows == cols in every case: cannot tell a per-row from a per-column tensor (add a case where they differ)");
        } else if (per_col) {
            c.inputs[name] = Indexing::PerColumn;
        } else if (per_row) {
            c.inputs[name] = Indexing::PerRow;
        } else {
            fail(field, "has neither rows*cols, cols nor rows elements in every case");
        }
        if (transpose_ && c.inputs[name] != Indexing::Full)
            fail(field, "a transpose reads inputs of rows x cols elements");
        if (neighbour_names_.count(name) && c.inputs[name] != Indexing::Full)
            fail(P + ".map", "at(" + name + ", ...): a stencil's neighbours are read from rows x cols tensors");
        if (per_row_names_.count(name) && c.inputs[name] != Indexing::PerRow)
            fail(P + ".epilogue", "'" + name + "' has an element per column: the epilogue sees one row at a time");
        if (per_col_names_.count(name) && c.inputs[name] != Indexing::PerColumn)
            fail(P + ".epilogue", "'" + name + "' is not a per-column tensor: the epilogue sees one column at a time");
    }

    /** A gemm's product reads one Left and one Right tensor. */
    void check_gemm_product() const {
        const std::string P = "computation";
        int lefts = 0, rights = 0;
        for (const auto& [n, ix] : c_.inputs) {
            lefts += ix == Indexing::Left;
            rights += ix == Indexing::Right;
        }
        if (lefts != 1 || rights != 1)
            fail(P + ".stats[0].map", "a gemm's product reads one rows x inner and one inner x cols tensor");
    }

    /** The output's size must fit the class. */
    void check_output_size() const {
        const std::string P = "computation";
        const Computation& c = c_;
        for (const auto& tc : t_.cases) {
            std::map<std::string, double> vars = t_.variables(tc);
            double on = static_cast<double>(t_.elements_of(*out_, tc));
            double want = c.per_row_output()   ? rows_.eval(vars)
                          : c.per_col_output() ? cols_.eval(vars)
                                               : rows_.eval(vars) * cols_.eval(vars);
            if (on != want)
                fail(P + ".layout", "'" + c.output + "' has " + std::to_string(static_cast<long long>(on)) +
                                        " elements in case '" + tc.name + "', the layout gives " +
                                        std::to_string(static_cast<long long>(want)) +
                                        (c.per_row_output()   ? " (one per row)"
                                         : c.per_col_output() ? " (one per column)"
                                         : transpose_         ? " (cols x rows)"
                                                              : " (rows x cols)"));
        }
    }

    /**
     * A stencil's reads at an index, w[i]: each tensor read only that way is Indexed; every
     * index must fall inside its tensor at the corners of the cells that read it (the map's
     * at the interior's corners, the border's at the layout's) in every case. Elsewhere an
     * index is not checked here: a read outside its tensor fails the candidate's checks.
     */
    void check_indices(Computation& c, const std::set<std::string>& indexed, const Expr& rows, const Expr& cols) const {
        const std::string P = "computation";
        for (const auto& n : indexed) c.inputs.emplace(n, Indexing::Indexed);
        for (const auto& tc : t_.cases) {
            std::map<std::string, double> vars = t_.variables(tc);
            const auto R = static_cast<long long>(rows.eval(vars)), C = static_cast<long long>(cols.eval(vars));
            const long long rr = c.radius_rows, rc = c.radius_cols;
            for (const auto* e : {&c.map, &c.border}) {
                // With a pad the map computes the edge cells too: its indices are checked at every corner.
                const bool border = e == &c.border || !c.pad.empty();
                const long long r0 = border ? 0 : rr, r1 = border ? R - 1 : R - 1 - rr;
                const long long c0 = border ? 0 : rc, c1 = border ? C - 1 : C - 1 - rc;
                if (r0 > r1 || c0 > c1) continue;  // no such cells in this case
                for (long long r : {r0, r1})
                    for (long long col : {c0, c1})
                        for (const auto& [name, at] : e->index_values(vars, r, col)) {
                            const long long len = t_.elements_of(*tensor(name), tc);
                            if (at < 0 || at >= len)
                                fail(P + (e == &c.border ? ".border" : ".map"),
                                     name + "[...] reads element " + std::to_string(at) + " of '" + name + "' (" + std::to_string(len) +
                                         " elements) at row " + std::to_string(r) + ", column " + std::to_string(col) + " in case '" +
                                         tc.name + "'");
                        }
            }
        }
    }

    /**
     * A gemm's tensor: in the product (the stat's map) it is Left (rows x inner elements) or
     * Right (inner x cols); in the epilogue (the map) Full, PerColumn or PerRow. Each must be
     * the one that fits every case; the product reads one Left and one Right tensor.
     */
    void index_gemm_tensor(Computation& c, const std::string& name, const TensorSpec& ts, const Expr& rows,
                           const Expr& cols, const Expr& inner) const {
        const std::string P = "computation";
        bool full = true, per_col = true, per_row = true, left = true, right = true;
        for (const auto& tc : t_.cases) {
            std::map<std::string, double> vars = t_.variables(tc);
            const double n = static_cast<double>(t_.elements_of(ts, tc));
            const double r = rows.eval(vars), k = cols.eval(vars), i = inner.eval(vars);
            full = full && n == r * k;
            per_col = per_col && n == k;
            per_row = per_row && n == r;
            left = left && n == r * i;
            right = right && n == i * k;
        }
        const std::string field = P + " (tensor '" + name + "')";
        if (product_names_.count(name)) {
            if (left == right)
                fail(field, left ? "fits both rows x inner and inner x cols in every case: add a case where they differ"
                                 : "a gemm's product reads tensors of rows x inner or inner x cols elements");
            c.inputs[name] = left ? Indexing::Left : Indexing::Right;
            return;
        }
        if (int(full) + int(per_col) + int(per_row) != 1)
            fail(field, full || per_col || per_row ? "fits several of rows x cols, cols and rows in every case: add a case where they differ"
                                                   : "the epilogue reads tensors of rows x cols, cols or rows elements");
        c.inputs[name] = full ? Indexing::Full : per_col ? Indexing::PerColumn : Indexing::PerRow;
    }

    const Task& t_;
    Computation c_;                 ///< what has been read so far
    bool histogram_ = false, stencil_ = false, transpose_ = false, gemm_ = false;
    bool rows_op_ = false;          ///< every op but elementwise and histogram: a layout of rows and cols
    bool laid_out_ = false;         ///< rows_op_, or an elementwise map with a layout
    const TensorSpec* out_ = nullptr;
    Expr rows_, cols_, inner_, bins_;  ///< the layout's expressions (and a histogram's bins)
    std::set<std::string> scalars_;  ///< sizes and params
    std::set<std::string> locals_;   ///< the stats' names
    std::set<std::string> used_tensors_;
    std::set<std::string> indexed_tensors_;
    std::set<std::string> per_row_names_;
    std::set<std::string> product_names_;
    std::set<std::string> neighbour_names_;
    std::set<std::string> per_col_names_;
};

}  // namespace

Computation computation_from_json(const nlohmann::json& j, const Task& task) { return ComputationReader(task).read(j); }

nlohmann::ordered_json computation_to_json(const Computation& c) {
    nlohmann::ordered_json j;
    j["op"] = c.op;
    if (!c.rows.empty()) {
        j["layout"] = {{"rows", c.rows}, {"cols", c.cols}};
        if (!c.inner.empty()) j["layout"]["inner"] = c.inner;
    }
    if (!c.stats.empty()) {
        j["stats"] = nlohmann::ordered_json::array();
        for (const auto& st : c.stats) j["stats"].push_back({{"name", st.name}, {"combine", st.combine}, {"map", st.map.text()}});
    }
    for (const auto& [key, e] : {std::pair("map", &c.map), std::pair("epilogue", &c.epilogue), std::pair("border", &c.border)})
        if (!e->text().empty()) j[key] = e->text();
    if (!c.pad.empty()) j["pad"] = c.pad;
    if (!c.bins.empty()) j["bins"] = c.bins;
    j["output"] = c.output;
    return j;
}

}  // namespace kf
