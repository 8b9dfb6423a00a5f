// The AST recogniser's padded reads (recognise_parts.h): neighbours read under a bounds check
// (zero padding) or at clamped coordinates (replicate padding), and reads at an index of the
// cell's position (weights per channel).
#include <algorithm>
#include <array>

#include "recognise_parts.h"

namespace kf::ast {

namespace {

std::string line_text(int line) {
    return line ? at_line(line) : std::string();
}

/** True when no loop variable (other than a held one) is in p. */
bool is_bound(const Poly& p, const Scope& s) {
    for (const auto& [m, k] : p)
        for (const auto& n : m)
            if (s.loop_vars.count(n) && !s.fixed.count(n)) return false;
    return true;
}

/** min(max(e, lo), hi), either side optional. */
struct Clamp {
    Poly e;
    std::optional<Poly> lo, hi;
};

bool differs_by_0_or_1(const Poly& t, const Poly& a) {
    Poly d = add(t, a, -1);
    return d.empty() || d == constant(1);
}

/** e as a clamp of an index polynomial: max/min with bounds, or selects on comparisons with bounds. */
std::optional<Clamp> clamp_of(const ExprPtr& e, const Scope& s) {
    if (auto p = to_poly(e, s)) return Clamp{*p, std::nullopt, std::nullopt};
    if (e->kind == Expr::Kind::Call && (e->text == "max" || e->text == "min") && e->args.size() == 2) {
        for (int side = 0; side < 2; ++side) {
            auto b = to_poly(e->args[side], s);
            if (!b || !is_bound(*b, s)) continue;
            auto c = clamp_of(e->args[1 - side], s);
            if (!c) return std::nullopt;
            std::optional<Poly>& slot = e->text == "max" ? c->lo : c->hi;
            if (slot) return std::nullopt;
            slot = *b;
            return c;
        }
        return std::nullopt;
    }
    if (e->kind != Expr::Kind::Select) return std::nullopt;
    const ExprPtr& cond = e->args[0];
    static const std::map<std::string, std::string> flipped = {{"<", ">"}, {"<=", ">="}, {">", "<"}, {">=", "<="}};
    if (cond->kind != Expr::Kind::Binary || !flipped.count(cond->text)) return std::nullopt;
    auto x = to_poly(cond->args[0], s), k = to_poly(cond->args[1], s);
    if (!x || !k) return std::nullopt;
    std::string op = cond->text;
    if (is_bound(*x, s)) {
        std::swap(x, k);
        op = flipped.at(op);
    }
    if (!is_bound(*k, s)) return std::nullopt;
    // x <= a or x >= a, on integers.
    bool le = op[0] == '<';
    Poly a = op == "<" ? add(*k, constant(1), -1) : op == ">" ? add(*k, constant(1)) : *k;
    auto t1 = to_poly(e->args[1], s), t2 = to_poly(e->args[2], s);
    bool then_const = t1 && is_bound(*t1, s);
    if (!then_const && !(t2 && is_bound(*t2, s))) return std::nullopt;
    Poly t = then_const ? *t1 : *t2;
    auto rest = clamp_of(e->args[then_const ? 2 : 1], s);
    if (!rest || rest->e != *x) return std::nullopt;
    // x <= a ? t : x is max(x, t); x >= a ? t : x is min(x, t) (t = a or the next integer out).
    bool lower = le == then_const;
    if (!differs_by_0_or_1(lower ? t : a, lower ? a : t)) return std::nullopt;
    std::optional<Poly>& slot = lower ? rest->lo : rest->hi;
    if (slot) return std::nullopt;
    slot = t;
    return rest;
}

/** The index with each clamp replaced by a name kf_clampN (recorded in `found`). */
ExprPtr mark_clamps(const ExprPtr& e, const Scope& s, std::vector<Clamp>& found) {
    if (e->kind == Expr::Kind::Select || e->kind == Expr::Kind::Call) {
        auto c = clamp_of(e, s);
        if (!c) return e;
        found.push_back(*c);
        return Expr::name("kf_clamp" + std::to_string(found.size() - 1));
    }
    if (e->kind == Expr::Kind::Index) return e;
    return map_args(e, [&](const ExprPtr& a) { return mark_clamps(a, s, found); });
}

void collect_factors(const ExprPtr& e, std::vector<const Expr*>& out) {
    if (e->kind == Expr::Kind::Binary && e->text == "*") {
        collect_factors(e->args[0], out);
        collect_factors(e->args[1], out);
    } else if ((e->kind == Expr::Kind::Binary && e->text == "/") || (e->kind == Expr::Kind::Unary && e->text == "-")) {
        collect_factors(e->args[0], out);
    } else {
        out.push_back(e.get());
    }
}

void collect_reads(const ExprPtr& e, std::vector<const Expr*>& out) {
    if (e->kind == Expr::Kind::Index) out.push_back(e.get());
    for (const auto& a : e->args) collect_reads(a, out);
}

/** How far inside each edge a bounds check (or the reads) keep the cell: top, bottom, left, right. */
using Margins = std::array<long long, 4>;

/** Adds one comparison of a bounds check to m; false when it is not one. */
bool bounds_term(const ExprPtr& c, const Scope& s, Margins& m) {
    if (c->kind == Expr::Kind::Binary && c->text == "&&")
        return bounds_term(c->args[0], s, m) && bounds_term(c->args[1], s, m);
    if (c->kind != Expr::Kind::Binary) return false;
    auto a = to_poly(c->args[0], s), b = to_poly(c->args[1], s);
    if (!a || !b) return false;
    // As e >= 0.
    Poly e;
    if (c->text == ">=" || c->text == ">")
        e = add(*a, *b, -1);
    else if (c->text == "<=" || c->text == "<")
        e = add(*b, *a, -1);
    else
        return false;
    if (c->text == ">" || c->text == "<") e = add(e, constant(1), -1);
    long long c0 = e.count({}) ? e.at({}) : 0;
    Poly v = add(e, constant(c0), -1);
    Poly row = s.row_poly ? *s.row_poly : variable(s.row);
    if (v == variable(s.col)) {  // col + c0 >= 0
        m[2] = std::max(m[2], -c0);
    } else if (v == add(s.cols, variable(s.col), -1)) {  // col + (-c0 - 1) < cols
        m[3] = std::max(m[3], -c0 - 1);
    } else if (v == row) {
        m[0] = std::max(m[0], -c0);
    } else if (v == add(s.rows, row, -1)) {
        m[1] = std::max(m[1], -c0 - 1);
    } else {
        return false;
    }
    return true;
}

}  // namespace

std::optional<std::pair<long long, long long>> neighbour_offset(const Poly& p, const Scope& s) {
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
    if (!ok) return std::nullopt;
    return std::make_pair(di, dj);
}

std::optional<std::string> position_read(const std::string& tensor, const Poly& p, const Scope& s) {
    if (s.position.empty()) return std::nullopt;
    std::vector<std::pair<Monomial, long long>> terms(p.begin(), p.end());
    std::stable_sort(terms.begin(), terms.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    std::string text;
    for (const auto& [m, k] : terms) {
        std::string term;
        for (const auto& n : m) {
            auto at = s.position.find(n);
            if (at == s.position.end() && s.loop_vars.count(n)) return std::nullopt;
            std::string shown = at == s.position.end() ? n : at->second;
            bool alone = m.size() == 1 && (k == 1 || k == -1);
            if (!alone && shown.find(' ') != std::string::npos) shown = "(" + shown + ")";
            term += (term.empty() ? "" : " * ") + shown;
        }
        append_term(text, term, k);
    }
    return tensor + "[" + (text.empty() ? "0" : text) + "]";
}

std::optional<std::string> clamped_read(const ExprPtr& e, const Scope& s) {
    std::string tensor = e->text;
    ExprPtr index = e->args[0];
    if (auto a = s.aliases.find(e->text); a != s.aliases.end()) {
        tensor = a->second.first;
        index = Expr::binary("+", poly_expr(a->second.second), index);
    }
    std::vector<Clamp> found;
    ExprPtr marked = mark_clamps(index, s, found);
    auto p = found.empty() || s.row_poly || !s.clamped ? std::nullopt : to_poly(marked, s);
    if (!p) return std::nullopt;
    std::string why = "reads " + tensor + "[" + nest::to_text(index) +
                      "], not a neighbour whose row and column are each clamped to the layout";
    Poly r = variable(s.row), c = variable(s.col);
    long long di = 0, dj = 0;
    bool row_seen = false, col_seen = false;
    for (std::size_t k = 0; k < found.size(); ++k) {
        const Clamp& cl = found[k];
        auto offset_from = [&](const std::string& v) {
            Poly d = add(cl.e, variable(v), -1);
            return d.empty() || (d.size() == 1 && d.count({}));
        };
        bool is_row = offset_from(s.row);
        if ((!is_row && !offset_from(s.col)) || (is_row ? row_seen : col_seen)) refuse(why);
        Poly d = add(cl.e, variable(is_row ? s.row : s.col), -1);
        long long off = d.empty() ? 0 : d.at({});
        const Poly& extent = is_row ? s.rows : s.cols;
        if ((off < 0 && !cl.lo) || (off > 0 && !cl.hi) || (cl.lo && *cl.lo != Poly{}) ||
            (cl.hi && *cl.hi != add(extent, constant(1), -1)))
            refuse(why + " (the clamp is not to [0, " + poly_text(extent) + " - 1])");
        (is_row ? r : c) = variable("kf_clamp" + std::to_string(k));
        (is_row ? di : dj) = off;
        (is_row ? row_seen : col_seen) = true;
    }
    if (*p != add(mul(r, s.cols), c)) refuse(why);
    s.clamped->insert({di, dj});
    return "at(" + tensor + ", " + std::to_string(di) + ", " + std::to_string(dj) + ")";
}

ExprPtr guarded_term(const ExprPtr& cond, const ExprPtr& term, const Scope& s, int line) {
    if (!s.guarded) return nullptr;
    ExprPtr c = subst(cond, s);
    Margins given{0, 0, 0, 0}, needed{0, 0, 0, 0};
    if (!bounds_term(c, s, given)) return nullptr;
    ExprPtr t = subst(term, s);
    std::vector<const Expr*> factors, reads;
    collect_factors(t, factors);
    collect_reads(t, reads);
    for (const Expr* rd : reads) {
        auto p = to_poly(rd->args[0], s);
        auto d = p ? neighbour_offset(*p, s) : std::nullopt;
        if (!d || (d->first == 0 && d->second == 0)) continue;
        if (std::find(factors.begin(), factors.end(), rd) == factors.end())
            refuse("the term " + nest::to_text(term) + " read under a bounds check is not zero where its neighbour " +
                   rd->text + " reads 0" + line_text(line));
        needed[0] = std::max(needed[0], -d->first);
        needed[1] = std::max(needed[1], d->first);
        needed[2] = std::max(needed[2], -d->second);
        needed[3] = std::max(needed[3], d->second);
    }
    if (given != needed)
        refuse("the bounds check " + nest::to_text(cond) +
               " does not keep exactly the cells whose neighbour reads in " + nest::to_text(term) +
               " are inside the layout" + line_text(line));
    Scope g = s;
    g.offsets = s.guarded;
    return rewrite(t, g);
}

}  // namespace kf::ast
