// The AST recogniser (kf/recognise.h): kf_solve read by libclang into a loop-nest model
// (loop_nest.h), whose index expressions are normalised as polynomials of the loop variables
// and sizes, then matched against the op classes' shapes.
#include <algorithm>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "kf/compile.h"
#include "kf/task.h"
#include "libclang.h"
#include "loop_nest.h"
#include "recognise_parts.h"

namespace kf {

namespace ast {

namespace {

using nlohmann::json;

// ---- Elements: one loop over the elements, scalars and constant-bound loops inside each ----

constexpr long long kMaxIterations = 256;  ///< of one loop inside an element
constexpr long long kMaxUnrolled = 4096;   ///< of all the loops inside an element together
constexpr long long kMaxNodes = 100000;    ///< of an unrolled scalar's expression

/** True when e, as a tree, has more than `budget` nodes. */
bool larger_than(const ExprPtr& e, long long& budget) {
    if (--budget < 0) return true;
    for (const auto& a : e->args)
        if (larger_than(a, budget)) return true;
    return false;
}

/** scalar = e, scalar += e, ...: the scalar's value from now on; a sum from 0 starts at its first term. */
void update_scalar(const Stmt& st, Scope& s) {
    const std::string& n = st.target->text;
    auto was = s.lets.find(n);
    if (was == s.lets.end())
        refuse("assigns " + n + ", which is not a floating-point scalar defined in the element" + at_line(st.line));
    auto zero = constant_value(was->second);
    if (st.op == "+=" && zero && *zero == 0)
        s.lets[n] = subst(st.value, s);
    else
        reassign(st, s);
    long long budget = kMaxNodes;
    if (larger_than(s.lets[n], budget))
        refuse("the value of " + n + " grows past " + std::to_string(kMaxNodes) + " terms as its loops unroll" +
               at_line(st.line));
}

/** A loop inside an element, unrolled: its variable held at each value in turn, the scalars updated term by term. */
void unroll(const Stmt& loop, Scope& s, long long& unrolled) {
    auto values = unrolled_values(loop, s, kMaxIterations);
    if (!values)
        refuse("the loop over " + loop.var + " inside each element runs from " + nest::to_text(loop.start) + " to " +
               nest::to_text(loop.bound) +
               ", not between integer constants (only constant-bound loops inside an element are unrolled)" +
               at_line(loop.line));
    for (long long v : *values) {
        if (++unrolled > kMaxUnrolled)
            refuse("the loops inside each element run more than " + std::to_string(kMaxUnrolled) +
                   " times together, too many to unroll" + at_line(loop.line));
        Scope body = s;
        body.fixed[loop.var] = v;
        body.loop_vars.insert(loop.var);
        std::set<std::string> local;  // declared in the iteration: not the element's scalars
        for (const Stmt& st : loop.body) {
            if (st.kind == Stmt::Kind::Decl) {
                declare(st, body);
                local.insert(st.var);
            } else if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Name) {
                update_scalar(st, body);
            } else if (st.kind == Stmt::Kind::For) {
                unroll(st, body, unrolled);
            } else {
                refuse("the loop over " + loop.var +
                       " inside each element does something else than define and update scalars" + at_line(st.line));
            }
        }
        for (const auto& [n, e] : body.lets)
            if (s.lets.count(n) && !local.count(n)) s.lets[n] = e;
    }
}

/** True when some loop of the block writes an array element. */
bool writes_in_loops(const Block& b, bool in_loop) {
    for (const Stmt& st : b) {
        if (in_loop && st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index) return true;
        bool inner = in_loop || st.kind == Stmt::Kind::For;
        if (writes_in_loops(st.body, inner) || writes_in_loops(st.else_body, inner)) return true;
    }
    return false;
}

/** True when a loop of the block reads an array at an index of its own variable: a reduction along a dimension. */
bool reads_along(const Block& b, Scope s, const std::set<std::string>& inner) {
    std::function<bool(const ExprPtr&)> in_expr = [&](const ExprPtr& e) -> bool {
        if (!e) return false;
        if (e->kind == Expr::Kind::Index && !inner.empty()) {
            auto p = to_poly(e->args[0], s);
            if (!p) return true;
            for (const auto& [m, k] : *p)
                for (const auto& n : m)
                    if (inner.count(n)) return true;
        }
        return std::any_of(e->args.begin(), e->args.end(), in_expr);
    };
    for (const Stmt& st : b) {
        if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Integer && st.init)
            if (auto p = to_poly(st.init, s)) s.ilets[st.var] = *p;
        if (in_expr(st.init) || in_expr(st.value) || in_expr(st.cond)) return true;
        std::set<std::string> in = inner;
        if (st.kind == Stmt::Kind::For) in.insert(st.var);
        if (reads_along(st.body, s, in) || reads_along(st.else_body, s, in)) return true;
    }
    return false;
}

/** for (i) { scalars; loops over constants updating them; y[i] = e; }: one element each, whatever its loops. */
bool is_element_loop(const Stmt& loop, const Scope& s) {
    const Block& b = loop.body;
    if (b.empty() || b.back().kind != Stmt::Kind::Assign || b.back().target->kind != Expr::Kind::Index) return false;
    return !writes_in_loops(b, false) && !reads_along(b, s, {});
}

/**
 * `c = i % cols` or `r = i / cols` in the loop over the elements i: the element's column or
 * row of a layout of `cols` columns, recorded in s; false when st is not such a declaration.
 */
bool element_position(const Stmt& st, const std::string& i, Scope& s) {
    if (st.kind != Stmt::Kind::Decl || st.type != Stmt::Type::Integer || !st.init) return false;
    const ExprPtr& e = st.init;
    if (e->kind != Expr::Kind::Binary || (e->text != "%" && e->text != "/") || !is_name(e->args[0], i)) return false;
    auto cols = to_poly(e->args[1], s);
    if (!cols || mentions(e->args[1], i)) return false;
    if (s.flat_cols && *s.flat_cols != *cols)
        refuse("the loop over " + i + " divides its variable by " + poly_text(*s.flat_cols) + " and by " + poly_text(*cols) +
               at_line(st.line));
    s.flat_cols = *cols;
    (e->text == "%" ? s.flat_col : s.flat_row) = st.var;
    s.loop_vars.insert(st.var);
    return true;
}

/** p / d for a divisor of one term, when every term of p is a multiple of it. */
std::optional<Poly> divided(const Poly& p, const Poly& d) {
    if (d.size() != 1 || d.begin()->second == 0) return std::nullopt;
    const auto& [dm, dk] = *d.begin();
    Poly out;
    for (const auto& [m, k] : p) {
        Monomial rest = m;
        for (const auto& n : dm) {
            auto at = std::find(rest.begin(), rest.end(), n);
            if (at == rest.end()) return std::nullopt;
            rest.erase(at);
        }
        if (k % dk != 0) return std::nullopt;
        out[rest] = k / dk;
    }
    return out;
}

/** for (i) { scalars; loops over constants; y[i] = e; } */
Derived flat_loop(const Stmt& loop, Scope s) {
    s.flat = true;
    s.col = loop.var;
    s.loop_vars.insert(loop.var);
    long long unrolled = 0;
    for (std::size_t k = 0; k < loop.body.size(); ++k) {
        const Stmt& st = loop.body[k];
        if (element_position(st, loop.var, s)) continue;
        if (st.kind == Stmt::Kind::Decl) {
            declare(st, s);
        } else if (st.kind == Stmt::Kind::For) {
            unroll(st, s, unrolled);
        } else if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Name) {
            update_scalar(st, s);
        } else if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=" &&
                   k + 1 == loop.body.size()) {
            auto [out, p] = access(st.target, s);
            if (p != variable(loop.var))
                refuse("the loop writes " + out + "[" + poly_text(p, s.loop_vars) + "], not " + out + "[" + loop.var +
                       "]" + at_line(st.line));
            std::string map = emit(fold_integers(subst(st.value, s)), s, st.line);
            json j = {{"op", "elementwise"}, {"map", map}, {"output", out}};
            if (s.flat_cols) {  // per-column or per-row operands: the elements as rows x cols
                auto rows = divided(poly_or_refuse(loop.bound, s, "the bound"), *s.flat_cols);
                if (!rows)
                    refuse("the loop over " + loop.var + " runs to " + nest::to_text(loop.bound) + ", not a multiple of " +
                           poly_text(*s.flat_cols) + ", the columns its element's position is taken in" + at_line(loop.line));
                j["layout"] = {{"rows", poly_text(*rows)}, {"cols", poly_text(*s.flat_cols)}};
                return {j, "an elementwise loop with per-row or per-column operands"};
            }
            return {j, unrolled ? "an elementwise loop, its inner loops unrolled" : "an elementwise loop"};
        } else {
            refuse("the loop over " + loop.var + " is neither scalar definitions nor ending with one output write" +
                   at_line(st.line));
        }
    }
    refuse("the loop over " + loop.var + " writes no output" + at_line(loop.line));
}

}  // namespace

Derived recognise_body(const Block& body, Scope s) {
    const Stmt* loop = nullptr;
    const Stmt* second = nullptr;
    for (const Stmt& st : body) {
        if (is_early_exit(st)) continue;
        if (st.kind == Stmt::Kind::Decl && !loop) {
            declare(st, s);
            continue;
        }
        // A second loop: the counts after a zeroing loop, or the copy of counts into a local array.
        if (st.kind == Stmt::Kind::For && (!loop || (!second && (is_histogram_loop(st) || is_histogram_loop(*loop))))) {
            (loop ? second : loop) = &st;
            continue;
        }
        if (st.kind == Stmt::Kind::For)
            refuse("kf_solve has more than one loop nest (lines " + std::to_string(loop->line) + " and " +
                   std::to_string(st.line) + ")");
        refuse("kf_solve has a statement outside its loop nest" + at_line(st.line));
    }
    if (!loop) refuse("kf_solve has no loop");
    if (second && is_histogram_loop(*loop)) return copied_histogram(*loop, *second, s);
    if (second || is_histogram_loop(*loop)) return histogram(second ? loop : nullptr, second ? *second : *loop, s);
    auto start = constant_value(loop->start);
    if (loop->step != 1 || !start || *start != 0)
        refuse("the loop over " + loop->var + " does not start at 0 with step 1" + at_line(loop->line));
    bool has_loop = false, only_indices = true;
    for (const Stmt& st : loop->body) {
        has_loop = has_loop || st.kind == Stmt::Kind::For;
        if (st.kind != Stmt::Kind::For && !(st.kind == Stmt::Kind::Decl && st.type != Stmt::Type::Floating))
            only_indices = false;
    }
    if (is_row_product(*loop, s)) return gemm_rows(*loop, s);
    if (!s.arrays.empty())
        refuse("declares the vector " + s.arrays.begin()->first +
               ", which is read only as a matrix product's row of sums (acc[j] += a * b in a loop over the inner size)");
    if (!has_loop || is_element_loop(*loop, s)) return flat_loop(*loop, s);
    if (only_indices && loop->body.back().kind == Stmt::Kind::For &&
        std::count_if(loop->body.begin(), loop->body.end(),
                      [](const Stmt& st) { return st.kind == Stmt::Kind::For; }) == 1)
        return is_product_nest(*loop, s) ? gemm(*loop, s) : cells(*loop, s);
    return lines(*loop, s);
}

}  // namespace ast

Recognition recognise_clang(const Task& task, const std::string& source, const std::string& file, bool& loaded) {
    std::string why;
    const Libclang* clang = load_libclang(&why);
    loaded = clang != nullptr;
    if (!clang) return {std::nullopt, why};
    // The reference is untrusted text: it is only parsed, and only when it names no file it may not read.
    if (source.size() > (1u << 20)) return cannot_derive(file, "the reference is larger than 1 MiB");
    if (auto d = screen_includes(source, file); !d.empty())
        return cannot_derive(file, "it names a file the recogniser may not read: " + d.front().message);
    std::string dir = task.dir.empty() ? std::string("/kf-reference") : std::filesystem::absolute(task.dir).string();
    std::optional<nest::Block> body =
        nest::read_kf_solve(*clang, dir + "/" + file, source, entry_header(task, Backend::Host), dir, why);
    if (!body) return cannot_derive(file, why);
    try {
        ast::Scope s;
        for (const auto& t : task.tensors)
            if (t.role == TensorRole::Input && (t.dtype == DType::U8 || t.dtype == DType::Bool))
                s.ranges[t.name] = {0, t.dtype == DType::U8 ? 255 : 1};
        ast::Derived d = ast::recognise_body(*body, s);
        return derived(task, d.j, file, " (libclang)", d.shape);
    } catch (const ast::Refusal& e) {
        return cannot_derive(file, e.what());
    }
}

}  // namespace kf
