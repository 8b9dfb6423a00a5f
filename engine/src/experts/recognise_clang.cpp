// The AST recogniser (kf/recognise.h): kf_solve read by libclang into a loop-nest model
// (loop_nest.h), whose index expressions are normalised as polynomials of the loop variables
// and sizes, then matched against the op classes' shapes.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "kf/compile.h"
#include "kf/task.h"
#include "libclang.h"
#include "loop_nest.h"
#include "recognise_parts.h"

namespace kf {

namespace {

using nest::Block;
using nest::Expr;
using nest::ExprPtr;
using nest::Stmt;
using nlohmann::json;

/** Why the loops are not a shape the recogniser knows. */
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void refuse(const std::string& why) {
    throw Refusal(why);
}
std::string at_line(int line) {
    return " (line " + std::to_string(line) + ")";
}

// ---- Index polynomials: monomials of names (sorted) with integer coefficients ----

using Monomial = std::vector<std::string>;
using Poly = std::map<Monomial, long long>;

Poly constant(long long v) {
    return v ? Poly{{{}, v}} : Poly{};
}
Poly variable(const std::string& n) {
    return {{{n}, 1}};
}
Poly add(Poly a, const Poly& b, long long sign = 1) {
    for (const auto& [m, k] : b)
        if ((a[m] += sign * k) == 0) a.erase(m);
    return a;
}
Poly mul(const Poly& a, const Poly& b) {
    Poly out;
    for (const auto& [ma, ka] : a)
        for (const auto& [mb, kb] : b) {
            Monomial m = ma;
            m.insert(m.end(), mb.begin(), mb.end());
            std::sort(m.begin(), m.end());
            if ((out[m] += ka * kb) == 0) out.erase(m);
        }
    return out;
}
/** The polynomial as C, highest degree first, the loop variables `first` first in each term. */
std::string poly_text(const Poly& p, const std::set<std::string>& first = {}) {
    if (p.empty()) return "0";
    std::vector<std::pair<Monomial, long long>> terms(p.begin(), p.end());
    std::stable_sort(terms.begin(), terms.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    std::string s;
    for (auto& [m, k] : terms) {
        std::stable_partition(m.begin(), m.end(), [&](const std::string& n) { return first.count(n) > 0; });
        std::string term;
        for (const auto& n : m) term += (term.empty() ? "" : " * ") + n;
        long long mag = k < 0 ? -k : k;
        if (term.empty())
            term = std::to_string(mag);
        else if (mag != 1)
            term = std::to_string(mag) + " * " + term;
        s += s.empty() ? (k < 0 ? "-" + term : term) : (k < 0 ? " - " : " + ") + term;
    }
    return s;
}

// ---- Scopes: what the names mean at a point of the nest ----

struct Scope {
    std::map<std::string, ExprPtr> lets;                          ///< floating scalars, already substituted
    std::map<std::string, Poly> ilets;                            ///< integer scalars
    std::map<std::string, std::pair<std::string, Poly>> aliases;  ///< pointer -> tensor + offset
    std::map<std::string, long long> fixed;                       ///< loop variables held at a value
    std::set<std::string> loop_vars;                              ///< refused as values
    std::string row, col;                                         ///< the cell's variables (empty: out of scope)
    Poly cols;                                                    ///< the layout's column count
    bool flat = false;                                            ///< one loop over the elements (col is its variable)
    bool cells = false;                                           ///< a nest over the cells: only [r, c] and neighbours
    std::set<std::pair<long long, long long>>* offsets = nullptr;  ///< the neighbour reads seen (cells)
    /** Output elements an earlier loop wrote as scratch: tensor -> (the row and column variables, the value). */
    std::map<std::string, std::pair<std::string, ExprPtr>> stored;
};

Poly cell_index(const Scope& s);

std::optional<Poly> to_poly(const ExprPtr& e, const Scope& s) {
    switch (e->kind) {
        case Expr::Kind::Number:
            if (!e->integer && e->value != static_cast<double>(static_cast<long long>(e->value))) return std::nullopt;
            return constant(static_cast<long long>(e->value));
        case Expr::Kind::Name:
            if (auto f = s.fixed.find(e->text); f != s.fixed.end()) return constant(f->second);
            if (auto l = s.ilets.find(e->text); l != s.ilets.end()) return l->second;
            return variable(e->text);
        case Expr::Kind::Unary: {
            auto a = e->text == "-" ? to_poly(e->args[0], s) : std::nullopt;
            if (!a) return std::nullopt;
            return add(Poly{}, *a, -1);
        }
        case Expr::Kind::Binary: {
            if (e->text != "+" && e->text != "-" && e->text != "*") return std::nullopt;
            auto a = to_poly(e->args[0], s), b = to_poly(e->args[1], s);
            if (!a || !b) return std::nullopt;
            if (e->text == "*") return mul(*a, *b);
            return add(*a, *b, e->text == "+" ? 1 : -1);
        }
        default:
            return std::nullopt;
    }
}

Poly poly_or_refuse(const ExprPtr& e, const Scope& s, const std::string& what) {
    auto p = to_poly(e, s);
    if (!p) refuse(what + " " + nest::to_text(e) + " is not an integer expression of the loop variables and sizes");
    return *p;
}

/** The polynomial written back as an expression (which reads back as the same polynomial). */
ExprPtr poly_expr(const Poly& p) {
    ExprPtr sum;
    for (const auto& [m, k] : p) {
        ExprPtr term = Expr::number(static_cast<double>(k), true);
        for (const auto& n : m) term = Expr::binary("*", term, Expr::name(n));
        sum = sum ? Expr::binary("+", sum, term) : term;
    }
    return sum ? sum : Expr::number(0, true);
}

/**
 * Scalars replaced by their definitions, held loop variables by their values; an array read
 * is resolved where it stands (row pointer, index definitions, held variables), so that it
 * keeps its meaning wherever the expression is used.
 */
ExprPtr subst(const ExprPtr& e, const Scope& s) {
    if (e->kind == Expr::Kind::Name) {
        if (auto l = s.lets.find(e->text); l != s.lets.end()) return l->second;
        if (auto f = s.fixed.find(e->text); f != s.fixed.end())
            return Expr::number(static_cast<double>(f->second), true);
        return e;
    }
    if (e->kind == Expr::Kind::Index) {
        auto p = to_poly(e->args[0], s);
        if (!p) return e;
        auto out = std::make_shared<Expr>(*e);
        Poly offset;
        if (auto a = s.aliases.find(e->text); a != s.aliases.end()) {
            out->text = a->second.first;
            offset = a->second.second;
        }
        Poly at = add(offset, *p);
        // An element an earlier loop of the row stored in the output: its value.
        if (auto st = s.stored.find(out->text);
            st != s.stored.end() && !s.row.empty() && !s.col.empty() && at == cell_index(s)) {
            if (st->second.first != s.row + "," + s.col)
                refuse("reads back " + out->text + " over other loop variables than those it was written with");
            return st->second.second;
        }
        out->args = {poly_expr(at)};
        return out;
    }
    if (e->args.empty()) return e;
    auto out = std::make_shared<Expr>(*e);
    for (auto& a : out->args) a = subst(a, s);
    return out;
}

Poly cell_index(const Scope& s) {
    Poly r = s.fixed.count(s.row) ? constant(s.fixed.at(s.row)) : variable(s.row);
    Poly c = s.fixed.count(s.col) ? constant(s.fixed.at(s.col)) : variable(s.col);
    return add(mul(r, s.cols), c);
}

/** The tensor and index polynomial of an array access (through row pointers). */
std::pair<std::string, Poly> access(const ExprPtr& e, const Scope& s) {
    std::string tensor = e->text;
    Poly offset;
    if (auto a = s.aliases.find(e->text); a != s.aliases.end()) {
        tensor = a->second.first;
        offset = a->second.second;
    }
    return {tensor, add(offset, poly_or_refuse(e->args[0], s, "the index of " + e->text + "[...]"))};
}

/** A tensor read written as the computation language reads it, or a refusal naming the index. */
std::string read_text(const ExprPtr& e, const Scope& s) {
    auto [tensor, p] = access(e, s);
    auto held = [&](const std::string& v) { return s.fixed.count(v) ? constant(s.fixed.at(v)) : variable(v); };
    std::string shown = tensor + "[" + poly_text(p, s.loop_vars) + "]";
    if (s.flat) {
        if (p == held(s.col)) return tensor;
        refuse("reads " + shown + ", not " + tensor + "[" + s.col + "]");
    }
    if (!s.row.empty() && !s.col.empty() && p == cell_index(s)) return tensor;
    if (s.cells) {
        Poly d = add(p, cell_index(s), -1);
        long long di = 0, dj = 0;
        bool ok = s.cols.size() == 1 && s.cols.begin()->second == 1;
        for (const auto& [m, k] : d) {
            if (m.empty())
                dj = k;
            else if (ok && m == s.cols.begin()->first)
                di = k;
            else
                ok = false;
        }
        if (ok && s.offsets) {
            s.offsets->insert({di, dj});
            return "at(" + tensor + ", " + std::to_string(di) + ", " + std::to_string(dj) + ")";
        }
        refuse("reads " + shown + ", neither the cell [" + poly_text(cell_index(s), s.loop_vars) +
               "] nor a neighbour at constant offsets");
    }
    if (!s.col.empty() && p == held(s.col)) return tensor;  // one element per column
    if (!s.row.empty() && p == held(s.row)) return tensor;  // one element per row
    std::string forms = s.col.empty()   ? tensor + "[" + s.row + "]"
                        : s.row.empty() ? tensor + "[" + s.col + "]"
                                        : tensor + "[" + poly_text(cell_index(s), s.loop_vars) + "], " + tensor + "[" +
                                              s.col + "] or " + tensor + "[" + s.row + "]";
    refuse("reads " + shown + ", not " + forms);
}

ExprPtr rewrite(const ExprPtr& e, const Scope& s) {
    switch (e->kind) {
        case Expr::Kind::Number:
            return e;
        case Expr::Kind::Name:
            if (s.loop_vars.count(e->text) && !s.fixed.count(e->text))
                refuse("uses the loop variable " + e->text + " as a value");
            return e;
        case Expr::Kind::Index:
            return Expr::name(read_text(e, s));
        default: {
            auto out = std::make_shared<Expr>(*e);
            for (auto& a : out->args) a = rewrite(a, s);
            return out;
        }
    }
}

/** An expression (substituted) in the computation language; a refusal names the statement's line. */
std::string emit(const ExprPtr& e, const Scope& s, int line) {
    try {
        return nest::to_text(rewrite(subst(e, s), s));
    } catch (const Refusal& r) {
        std::string why = r.what();
        refuse(why.find("(line ") == std::string::npos ? why + at_line(line) : why);
    }
}

std::optional<double> constant_value(const ExprPtr& e) {
    if (e->kind == Expr::Kind::Number) return e->value;
    if (e->kind == Expr::Kind::Unary && e->text == "-")
        if (auto v = constant_value(e->args[0])) return -*v;
    return std::nullopt;
}

/** An integer constant expression's value (loop bounds such as `1 + 1` from `<= 1`). */
std::optional<long long> constant_of(const ExprPtr& e, const Scope& s) {
    auto p = to_poly(e, s);
    if (!p) return std::nullopt;
    if (p->empty()) return 0;
    if (p->size() == 1 && p->begin()->first.empty()) return p->begin()->second;
    return std::nullopt;
}

bool is_identity(const std::string& combine, const ExprPtr& init) {
    auto v = constant_value(init);
    if (!v) return false;
    if (combine == "sum") return *v == 0;
    if (combine == "prod") return *v == 1;
    if (combine == "max") return *v <= -3.4e38;  // -inf, -FLT_MAX, -DBL_MAX
    return *v >= 3.4e38;
}

bool is_name(const ExprPtr& e, const std::string& n) {
    return e->kind == Expr::Kind::Name && e->text == n;
}

/** An accumulator's update: acc += e, acc *= e, acc = max(acc, e), ...; the combine and e. */
std::optional<std::pair<std::string, ExprPtr>> reduction_update(const Stmt& st, const std::string& acc) {
    if (st.op == "+=") return std::make_pair(std::string("sum"), st.value);
    if (st.op == "-=") {
        auto neg = std::make_shared<Expr>();
        neg->kind = Expr::Kind::Unary;
        neg->text = "-";
        neg->args = {st.value};
        return std::make_pair(std::string("sum"), ExprPtr(neg));
    }
    if (st.op == "*=") return std::make_pair(std::string("prod"), st.value);
    if (st.op != "=") return std::nullopt;
    const ExprPtr& v = st.value;
    bool call = v->kind == Expr::Kind::Call && (v->text == "max" || v->text == "min") && v->args.size() == 2;
    bool bin = v->kind == Expr::Kind::Binary && (v->text == "+" || v->text == "*");
    if (!call && !bin) return std::nullopt;
    std::string combine = call ? v->text : v->text == "+" ? "sum" : "prod";
    if (is_name(v->args[0], acc)) return std::make_pair(combine, v->args[1]);
    if (is_name(v->args[1], acc)) return std::make_pair(combine, v->args[0]);
    return std::nullopt;
}

bool is_early_exit(const Stmt& st) {
    return st.kind == Stmt::Kind::If && st.else_body.empty() && st.body.size() == 1 &&
           st.body[0].kind == Stmt::Kind::Return;
}

/** A declaration outside the loops: a scalar, an index or a row pointer. */
void declare(const Stmt& st, Scope& s) {
    if (st.type == Stmt::Type::Integer) {
        if (!st.init) refuse("declares " + st.var + " without a value" + at_line(st.line));
        s.ilets[st.var] = poly_or_refuse(st.init, s, "the value of " + st.var + at_line(st.line));
    } else if (st.type == Stmt::Type::Pointer) {
        const ExprPtr& e = st.init;
        if (e && e->kind == Expr::Kind::Name) {
            s.aliases[st.var] = {e->text, {}};
            return;
        }
        if (e && e->kind == Expr::Kind::Binary && e->text == "+") {
            for (int side = 0; side < 2; ++side)
                if (e->args[side]->kind == Expr::Kind::Name) {
                    auto p = to_poly(e->args[1 - side], s);
                    if (p) {
                        s.aliases[st.var] = {e->args[side]->text, *p};
                        return;
                    }
                }
        }
        refuse("declares the pointer " + st.var + " as something else than a tensor plus an offset" + at_line(st.line));
    } else if (st.init) {
        s.lets[st.var] = subst(st.init, s);
    }
}

/** A scalar assignment outside the reductions: the name's value from now on. */
void reassign(const Stmt& st, Scope& s) {
    const std::string& n = st.target->text;
    ExprPtr v = st.value;
    if (st.op != "=") v = Expr::binary(st.op.substr(0, 1), Expr::name(n), st.value);
    s.lets[n] = subst(v, s);
}

struct Derived {
    json j;
    std::string shape;
};

/** for (i) { scalars; y[i] = e; } */
Derived flat_loop(const Stmt& loop, Scope s) {
    s.flat = true;
    s.col = loop.var;
    s.loop_vars.insert(loop.var);
    for (std::size_t k = 0; k < loop.body.size(); ++k) {
        const Stmt& st = loop.body[k];
        if (st.kind == Stmt::Kind::Decl) {
            declare(st, s);
        } else if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=" &&
                   k + 1 == loop.body.size()) {
            auto [out, p] = access(st.target, s);
            if (p != variable(loop.var))
                refuse("the loop writes " + out + "[" + poly_text(p, s.loop_vars) + "], not " + out + "[" + loop.var +
                       "]" + at_line(st.line));
            json j = {{"op", "elementwise"}, {"map", emit(st.value, s, st.line)}, {"output", out}};
            return {j, "an elementwise loop"};
        } else {
            refuse("the loop over " + loop.var + " is neither scalar definitions nor ending with one output write" +
                   at_line(st.line));
        }
    }
    refuse("the loop over " + loop.var + " writes no output" + at_line(loop.line));
}

// ---- Rows and columns: a loop over one dimension, reductions and outputs along the other ----

struct LineContext {
    bool by_rows = true;         ///< the outer loop is over the rows
    std::string rows, cols;      ///< the layout, as C expressions
    std::optional<Poly> inner;   ///< the inner loops' bound
    std::set<std::string> accs;  ///< scalars that may become reductions
    std::map<std::string, ExprPtr> acc_init;
    json stats = json::array();
};

/** True when some index of the body multiplies `v` by something: v is the row. */
bool multiplies(const Block& body, const std::string& v, Scope s) {
    std::function<bool(const ExprPtr&)> in_expr = [&](const ExprPtr& e) -> bool {
        if (!e) return false;
        if (e->kind == Expr::Kind::Index) {
            if (auto p = to_poly(e->args[0], s))
                for (const auto& [m, k] : *p)
                    if (m.size() > 1 && std::count(m.begin(), m.end(), v)) return true;
        }
        return std::any_of(e->args.begin(), e->args.end(), in_expr);
    };
    std::function<bool(const Block&)> in_block = [&](const Block& b) -> bool {
        for (const Stmt& st : b) {
            if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Integer && st.init)
                if (auto p = to_poly(st.init, s)) s.ilets[st.var] = *p;
            if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Pointer && st.init)
                if (auto p = to_poly(st.init, s))
                    for (const auto& [m, k] : *p)
                        if (m.size() > 1 && std::count(m.begin(), m.end(), v)) return true;
            if (in_expr(st.init) || in_expr(st.target) || in_expr(st.value) || in_expr(st.cond) || in_block(st.body) ||
                in_block(st.else_body))
                return true;
        }
        return false;
    };
    return in_block(body);
}

Derived lines(const Stmt& outer, Scope s) {
    LineContext cx;
    cx.by_rows = multiplies(outer.body, outer.var, s);
    std::string& mine = cx.by_rows ? s.row : s.col;
    mine = outer.var;
    s.loop_vars.insert(outer.var);
    (cx.by_rows ? cx.rows : cx.cols) = nest::to_text(outer.bound);
    const char* along = cx.by_rows ? "row" : "column";
    const Block& body = outer.body;
    auto layout = [&] { return json{{"rows", cx.rows}, {"cols", cx.cols}}; };
    for (std::size_t k = 0; k < body.size(); ++k) {
        const Stmt& st = body[k];
        bool last = k + 1 == body.size();
        if (st.kind == Stmt::Kind::Decl) {
            declare(st, s);
            if (st.type == Stmt::Type::Floating) {
                cx.accs.insert(st.var);
                cx.acc_init[st.var] = st.init ? subst(st.init, s) : nullptr;
            }
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Name) {
            bool stat = std::any_of(cx.stats.begin(), cx.stats.end(),
                                    [&](const json& j) { return j["name"] == st.target->text; });
            if (!s.lets.count(st.target->text) && !stat)
                refuse("assigns " + st.target->text + ", which is neither a scalar nor a reduction" + at_line(st.line));
            reassign(st, s);
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=") {
            // One value per row (column): y[r] = e.
            auto [out, p] = access(st.target, s);
            if (p != variable(outer.var))
                refuse("writes " + out + "[" + poly_text(p, s.loop_vars) + "], not one value per " + along + " " + out +
                       "[" + outer.var + "]" + at_line(st.line));
            if (!last) refuse("does more after writing " + out + "[" + outer.var + "]" + at_line(st.line));
            if (cx.stats.empty())
                refuse("writes " + out + "[" + outer.var + "] without a reduction over the " + along +
                       at_line(st.line));
            json j = {{"op", cx.by_rows ? "row_reduce" : "col_reduce"},
                      {"layout", layout()},
                      {"stats", cx.stats},
                      {"epilogue", emit(st.value, s, st.line)},
                      {"output", out}};
            return {j, cx.by_rows ? "a row reduction" : "a column reduction"};
        }
        if (st.kind != Stmt::Kind::For)
            refuse("the loop over " + outer.var + " has a statement the recogniser does not know" + at_line(st.line));
        // An inner loop along the row (column): reductions, or the output.
        auto start = constant_value(st.start);
        if (st.step != 1 || !start || (*start != 0 && *start != 1))
            refuse("the loop over " + st.var + " does not start at 0 or 1 with step 1" + at_line(st.line));
        Poly bound = poly_or_refuse(st.bound, s, "the bound");
        if (!cx.inner) {
            cx.inner = bound;
            (cx.by_rows ? cx.cols : cx.rows) = nest::to_text(st.bound);
        } else if (bound != *cx.inner) {
            refuse("the loop over " + st.var + " runs to " + nest::to_text(st.bound) + ", the earlier one to " +
                   poly_text(*cx.inner) + at_line(st.line));
        }
        Scope ls = s;
        (cx.by_rows ? ls.col : ls.row) = st.var;
        ls.loop_vars.insert(st.var);
        ls.cols = cx.by_rows ? bound : poly_or_refuse(outer.bound, s, "the bound");
        s.cols = ls.cols;
        std::vector<std::pair<std::string, ExprPtr>> updates;  // (name, combine) with map
        json new_stats = json::array();
        std::optional<Derived> written;
        for (std::size_t q = 0; q < st.body.size(); ++q) {
            const Stmt& in = st.body[q];
            if (in.kind == Stmt::Kind::Decl) {
                declare(in, ls);
                continue;
            }
            if (in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Name) {
                const std::string& acc = in.target->text;
                auto upd = cx.accs.count(acc) ? reduction_update(in, acc) : std::nullopt;
                if (!upd)
                    refuse("assigns " + acc + " inside the loop over " + st.var + " other than as a reduction" +
                           at_line(in.line));
                if (written) refuse("reduces into " + acc + " after writing the output" + at_line(in.line));
                const std::string& combine = upd->first;
                std::string map = emit(upd->second, ls, in.line);
                const ExprPtr& init = cx.acc_init[acc];
                if (!init) refuse(acc + " has no starting value" + at_line(in.line));
                if (*start == 0) {
                    if (!is_identity(combine, init))
                        refuse(acc + " starts at " + nest::to_text(init) + ", which is not the identity of " + combine +
                               at_line(in.line));
                } else {
                    Scope first = ls;
                    first.fixed[st.var] = 0;
                    std::string a = nest::to_text(rewrite(init, first)), b = emit(upd->second, first, in.line);
                    if (a != b)
                        refuse(acc + " starts at " + nest::to_text(init) + " and the loop over " + st.var +
                               " at 1: not the " + along + "'s first element" + at_line(in.line));
                }
                new_stats.push_back({{"name", acc}, {"combine", combine}, {"map", map}});
                cx.accs.erase(acc);
                s.lets.erase(acc);
                ls.lets.erase(acc);
                continue;
            }
            if (in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Index && in.op == "=" && !written) {
                auto [out, p] = access(in.target, ls);
                if (p != cell_index(ls))
                    refuse("writes " + out + "[" + poly_text(p, ls.loop_vars) + "], not " + out + "[" +
                           poly_text(cell_index(ls), ls.loop_vars) + "]" + at_line(in.line));
                if (!last) {
                    // Scratch: the element read back by a later loop of the row (a softmax's exponentials).
                    ls.stored[out] = {ls.row + "," + ls.col, subst(in.value, ls)};
                    s.stored[out] = ls.stored[out];
                    continue;
                }
                std::string map = emit(in.value, ls, in.line);
                if (!new_stats.empty()) {
                    // A running combine written at each element: a scan.
                    if (new_stats.size() != 1 || !cx.stats.empty() || *start != 0)
                        refuse("the loop over " + st.var + " writes " + out +
                               " while reducing: only one running combine from the identity is a scan" +
                               at_line(in.line));
                    json j = {{"op", cx.by_rows ? "row_scan" : "col_scan"},
                              {"layout", layout()},
                              {"stats", new_stats},
                              {"map", map},
                              {"output", out}};
                    written = Derived{
                        j, cx.by_rows ? "a running combine along each row" : "a running combine down each column"};
                } else {
                    if (cx.stats.empty())
                        refuse("writes every element of the " + std::string(along) + " without a reduction first" +
                               at_line(in.line));
                    if (!cx.by_rows)
                        refuse("normalises each column (only rows are normalised by an op class)" + at_line(in.line));
                    json j = {{"op", "row_normalize"},
                              {"layout", layout()},
                              {"stats", cx.stats},
                              {"map", map},
                              {"output", out}};
                    written = Derived{j, "reductions over each row, then every element of the row"};
                }
                continue;
            }
            refuse("the loop over " + st.var + " is neither a reduction nor an output write" + at_line(in.line));
        }
        if (written) return *written;
        if (new_stats.empty()) refuse("the loop over " + st.var + " neither reduces nor writes" + at_line(st.line));
        for (auto& j : new_stats) cx.stats.push_back(j);
    }
    refuse("the loop over " + outer.var + " writes no output" + at_line(outer.line));
}

// ---- Cells: a two-level nest, each cell written once (transposes, stencils) ----

/** The rows (top, bottom) and columns (left, right) an edge condition selects, as distances from each edge. */
struct Edges {
    std::set<long long> top, bottom, left, right;
};

void edge_terms(const ExprPtr& cond, const Scope& s, const Poly& rows, Edges& out, int line) {
    if (cond->kind == Expr::Kind::Binary && cond->text == "||") {
        edge_terms(cond->args[0], s, rows, out, line);
        edge_terms(cond->args[1], s, rows, out, line);
        return;
    }
    static const std::map<std::string, std::string> flipped = {
        {"==", "=="}, {"<", ">"}, {"<=", ">="}, {">", "<"}, {">=", "<="}};
    std::string why = "the edge condition " + nest::to_text(cond) + " is not a comparison of " + s.row + " or " +
                      s.col + " with a bound" + at_line(line);
    if (cond->kind != Expr::Kind::Binary || !flipped.count(cond->text)) refuse(why);
    std::string op = cond->text;
    ExprPtr a = cond->args[0], b = cond->args[1];
    if (!is_name(a, s.row) && !is_name(a, s.col)) {
        std::swap(a, b);
        op = flipped.at(op);
    }
    if (!is_name(a, s.row) && !is_name(a, s.col)) refuse(why);
    bool is_row = is_name(a, s.row);
    Poly extent = is_row ? rows : s.cols;
    Poly p = poly_or_refuse(b, s, "the bound in the edge condition");
    auto single = [](const Poly& q) -> std::optional<long long> {
        if (q.empty()) return 0;
        if (q.size() == 1 && q.begin()->first.empty()) return q.begin()->second;
        return std::nullopt;
    };
    std::set<long long>& near = is_row ? out.top : out.left;
    std::set<long long>& far = is_row ? out.bottom : out.right;
    if (auto c = single(p)) {  // near the start: var == c, var < c, var <= c
        if (op == "==")
            near.insert(*c);
        else if (op == "<" || op == "<=")
            for (long long v = 0; v < *c + (op == "<=" ? 1 : 0) && v < 64; ++v) near.insert(v);
        else
            refuse(why);
    } else if (auto k = single(add(p, extent, -1))) {  // near the end: var == n + k, var >= n + k, var > n + k
        if (op == "==")
            far.insert(-*k - 1);
        else if (op == ">=" || op == ">")
            for (long long v = 0; v < -*k - (op == ">" ? 1 : 0) && v < 64; ++v) far.insert(v);
        else
            refuse(why);
    } else {
        refuse(why);
    }
}

Derived cells(const Stmt& outer, Scope s) {
    s.loop_vars.insert(outer.var);
    for (const Stmt& st : outer.body)
        if (st.kind == Stmt::Kind::Decl) declare(st, s);
    const Stmt& inner = outer.body.back();
    auto start = constant_value(inner.start);
    if (inner.step != 1 || !start || *start != 0)
        refuse("the loop over " + inner.var + " does not start at 0 with step 1" + at_line(inner.line));
    s.loop_vars.insert(inner.var);
    // Which loop is the row: the output's index, read after the cell's index definitions.
    Scope pre = s;
    const Stmt* write = nullptr;
    std::vector<Poly> reads;
    std::function<void(const ExprPtr&)> find_reads = [&](const ExprPtr& e) {
        if (!e) return;
        if (e->kind == Expr::Kind::Index) {
            if (auto a = to_poly(e->args[0], pre)) {
                auto al = pre.aliases.find(e->text);
                reads.push_back(al == pre.aliases.end() ? *a : add(al->second.second, *a));
            }
        }
        for (const auto& a : e->args) find_reads(a);
    };
    std::function<void(const Block&)> find_write = [&](const Block& b) {
        for (const Stmt& st : b) {
            if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Integer && st.init)
                if (auto p = to_poly(st.init, pre)) pre.ilets[st.var] = *p;
            if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index) write = &st;
            find_reads(st.init);
            find_reads(st.value);
            find_write(st.body);
            find_write(st.else_body);
        }
    };
    find_write(inner.body);
    if (!write) refuse("the loops over " + outer.var + " and " + inner.var + " write no output" + at_line(inner.line));
    auto [out, p] = access(write->target, pre);
    Poly b1 = poly_or_refuse(outer.bound, s, "the bound"), b2 = poly_or_refuse(inner.bound, s, "the bound");
    // Either loop may be the row; the reading with the most inputs read at their cell wins.
    bool transpose = false, found = false;
    long long best = -1;
    for (int order = 0; order < 2; ++order) {
        const Stmt& r = order ? inner : outer;
        const Stmt& c = order ? outer : inner;
        Poly rows = order ? b2 : b1, cols = order ? b1 : b2;
        Poly full = add(mul(variable(r.var), cols), variable(c.var));
        Poly swapped = add(mul(variable(c.var), rows), variable(r.var));
        if (p != full && p != swapped) continue;
        long long score = std::count(reads.begin(), reads.end(), full);
        if (score > best) {
            best = score;
            found = true;
            transpose = p != full;
            s.row = r.var;
            s.col = c.var;
            s.cols = cols;
        }
    }
    if (!found)
        refuse("writes " + out + "[" + poly_text(p, s.loop_vars) +
               "], neither [r * cols + c] nor [c * rows + r] of the loops over " + outer.var + " and " + inner.var +
               at_line(write->line));
    const Stmt& rs = s.row == outer.var ? outer : inner;
    const Stmt& cs = s.row == outer.var ? inner : outer;
    Poly rows = s.row == outer.var ? b1 : b2;
    json layout = {{"rows", nest::to_text(rs.bound)}, {"cols", nest::to_text(cs.bound)}};

    std::set<std::pair<long long, long long>> offsets;
    s.cells = true;
    s.offsets = &offsets;
    std::optional<std::string> border;
    std::optional<Edges> edges;
    int border_line = 0;
    long long unrolled = 0;
    std::optional<std::string> map;
    // The cell's statements; a constant-bound loop (over neighbours) is unrolled.
    std::function<void(const Block&, Scope&, bool)> run = [&](const Block& b, Scope& sc, bool in_loop) {
        for (std::size_t k = 0; k < b.size(); ++k) {
            const Stmt& st = b[k];
            if (map) refuse("does more after writing " + out + at_line(st.line));
            switch (st.kind) {
                case Stmt::Kind::Decl:
                    declare(st, sc);
                    continue;
                case Stmt::Kind::Assign:
                    if (st.target->kind == Expr::Kind::Name) {
                        if (!sc.lets.count(st.target->text))
                            refuse("assigns " + st.target->text + " before giving it a value" + at_line(st.line));
                        reassign(st, sc);
                        continue;
                    }
                    if (in_loop || st.op != "=")
                        refuse("writes " + st.target->text + " inside a loop or with " + st.op + at_line(st.line));
                    if (auto [o, q] = access(st.target, sc); q != p)
                        refuse("writes " + o + "[" + poly_text(q, sc.loop_vars) + "] besides " + out + "[" +
                               poly_text(p, sc.loop_vars) + "]" + at_line(st.line));
                    if (transpose) {
                        Scope t = sc;
                        t.cells = false;
                        map = emit(st.value, t, st.line);
                    } else {
                        map = emit(st.value, sc, st.line);
                    }
                    continue;
                case Stmt::Kind::If: {
                    bool with_continue =
                        st.else_body.empty() && st.body.size() == 2 && st.body[1].kind == Stmt::Kind::Continue;
                    const Stmt& w = st.body.empty() ? st : st.body[0];
                    if (in_loop || border || (!with_continue && (st.else_body.empty() || st.body.size() != 1)) ||
                        w.kind != Stmt::Kind::Assign || w.target->kind != Expr::Kind::Index || w.op != "=")
                        refuse("has a branch other than one for the edge cells (if (edge) { " + out +
                               "[...] = ...; continue; })" + at_line(st.line));
                    if (access(w.target, sc).second != p)
                        refuse("the edge branch writes elsewhere than " + out + "[" + poly_text(p, sc.loop_vars) + "]" +
                               at_line(st.line));
                    Scope bs = sc;
                    bs.offsets = nullptr;
                    border = emit(w.value, bs, w.line);
                    Edges e;
                    edge_terms(st.cond, sc, rows, e, st.line);
                    edges = e;
                    border_line = st.line;
                    if (!with_continue) run(st.else_body, sc, in_loop);
                    continue;
                }
                case Stmt::Kind::For: {
                    auto from = constant_of(st.start, sc), to = constant_of(st.bound, sc);
                    if (!from || !to)
                        refuse("the loop over " + st.var + " inside each cell runs to " + nest::to_text(st.bound) +
                               ", not a constant (only loops over neighbours at constant offsets are unrolled)" +
                               at_line(st.line));
                    for (long long v = *from; v < *to; v += st.step) {
                        if (++unrolled > 4096)
                            refuse("the loops inside each cell run too long to unroll" + at_line(st.line));
                        Scope body = sc;
                        body.fixed[st.var] = v;
                        for (const Stmt& in : st.body) {
                            if (in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Name &&
                                sc.lets.count(in.target->text)) {
                                // acc += e: the running value, term by term.
                                auto upd = reduction_update(in, in.target->text);
                                if (!upd || upd->first != "sum")
                                    refuse("accumulates " + in.target->text + " other than by a sum" +
                                           at_line(in.line));
                                ExprPtr sofar = sc.lets[in.target->text];
                                ExprPtr term = subst(upd->second, body);
                                auto zero = constant_value(sofar);
                                sc.lets[in.target->text] = zero && *zero == 0 ? term : Expr::binary("+", sofar, term);
                                body.lets[in.target->text] = sc.lets[in.target->text];
                            } else {
                                run({in}, body, true);
                                for (const auto& [n, e] : body.lets)
                                    if (sc.lets.count(n)) sc.lets[n] = e;
                            }
                        }
                    }
                    continue;
                }
                default:
                    refuse("has a statement the recogniser does not know inside each cell" + at_line(st.line));
            }
        }
    };
    run(inner.body, s, false);
    if (!map) refuse("the cell writes no output" + at_line(inner.line));
    if (transpose) {
        if (border) refuse("a transpose with an edge branch" + at_line(border_line));
        return {json{{"op", "transpose"}, {"layout", layout}, {"map", *map}, {"output", out}}, "a transpose"};
    }
    long long rr = 0, rc = 0;
    for (const auto& [di, dj] : offsets) {
        rr = std::max(rr, di < 0 ? -di : di);
        rc = std::max(rc, dj < 0 ? -dj : dj);
    }
    if (rr == 0 && rc == 0) {
        if (border) refuse("an edge branch, but no neighbour is read" + at_line(border_line));
        return {json{{"op", "elementwise"}, {"map", *map}, {"output", out}}, "an elementwise nest"};
    }
    if (!border)
        refuse("reads neighbours at offsets up to " + std::to_string(std::max(rr, rc)) +
               " without a branch for the edge cells (padding is not recognised)" + at_line(inner.line));
    auto upto = [](long long n) {
        std::set<long long> v;
        for (long long i = 0; i < n; ++i) v.insert(i);
        return v;
    };
    if (edges->top != upto(rr) || edges->bottom != upto(rr) || edges->left != upto(rc) || edges->right != upto(rc))
        refuse("the edge branch does not select exactly the cells within the reach of the neighbour reads (" +
               std::to_string(rr) + " rows, " + std::to_string(rc) + " columns)" + at_line(border_line));
    return {json{{"op", "stencil"}, {"layout", layout}, {"map", *map}, {"border", *border}, {"output", out}},
            "a stencil with an edge branch"};
}

Derived recognise_body(const Block& body) {
    Scope s;
    const Stmt* loop = nullptr;
    for (const Stmt& st : body) {
        if (is_early_exit(st)) continue;
        if (st.kind == Stmt::Kind::Decl && !loop) {
            declare(st, s);
            continue;
        }
        if (st.kind == Stmt::Kind::For && !loop) {
            loop = &st;
            continue;
        }
        if (st.kind == Stmt::Kind::For)
            refuse("kf_solve has more than one loop nest (lines " + std::to_string(loop->line) + " and " +
                   std::to_string(st.line) + ")");
        refuse("kf_solve has a statement outside its loop nest" + at_line(st.line));
    }
    if (!loop) refuse("kf_solve has no loop");
    auto start = constant_value(loop->start);
    if (loop->step != 1 || !start || *start != 0)
        refuse("the loop over " + loop->var + " does not start at 0 with step 1" + at_line(loop->line));
    bool has_loop = false, only_indices = true;
    for (const Stmt& st : loop->body) {
        has_loop = has_loop || st.kind == Stmt::Kind::For;
        if (st.kind != Stmt::Kind::For && !(st.kind == Stmt::Kind::Decl && st.type != Stmt::Type::Floating))
            only_indices = false;
    }
    if (!has_loop) return flat_loop(*loop, s);
    if (only_indices && loop->body.back().kind == Stmt::Kind::For &&
        std::count_if(loop->body.begin(), loop->body.end(),
                      [](const Stmt& st) { return st.kind == Stmt::Kind::For; }) == 1)
        return cells(*loop, s);
    return lines(*loop, s);
}

}  // namespace

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
    std::optional<Block> body =
        nest::read_kf_solve(*clang, dir + "/" + file, source, entry_header(task, Backend::Host), dir, why);
    if (!body) return cannot_derive(file, why);
    try {
        Derived d = recognise_body(*body);
        return derived(task, d.j, file, " (libclang)", d.shape);
    } catch (const Refusal& e) {
        return cannot_derive(file, e.what());
    }
}

}  // namespace kf
