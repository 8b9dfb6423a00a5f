// The AST recogniser's reading of expressions (recognise_parts.h): index polynomials, what
// the names mean at a point of the nest, and expressions written back as the computation
// language reads them.
#include <algorithm>

#include "recognise_parts.h"

namespace kf::ast {

[[noreturn]] void refuse(const std::string& why) {
    throw Refusal(why);
}
std::string at_line(int line) {
    return " (line " + std::to_string(line) + ")";
}

// ---- Index polynomials: monomials of names (sorted) with integer coefficients ----

Poly constant(long long v) {
    return v ? Poly{{{}, v}} : Poly{};
}
std::optional<long long> constant_poly(const Poly& p) {
    if (p.empty()) return 0;
    if (p.size() == 1 && p.begin()->first.empty()) return p.begin()->second;
    return std::nullopt;
}
Poly variable(const std::string& n) {
    return {{{n}, 1}};
}
Poly add(Poly a, const Poly& b, long long sign) {
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
std::string poly_text(const Poly& p, const std::set<std::string>& first) {
    if (p.empty()) return "0";
    std::vector<std::pair<Monomial, long long>> terms(p.begin(), p.end());
    std::stable_sort(terms.begin(), terms.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    std::string s;
    for (auto& [m, k] : terms) {
        std::stable_partition(m.begin(), m.end(), [&](const std::string& n) { return first.count(n) > 0; });
        std::string term;
        for (const auto& n : m) term += (term.empty() ? "" : " * ") + n;
        append_term(s, term, k);
    }
    return s;
}

void append_term(std::string& text, std::string term, long long k) {
    long long mag = k < 0 ? -k : k;
    if (term.empty())
        term = std::to_string(mag);
    else if (mag != 1)
        term = std::to_string(mag) + " * " + term;
    text += text.empty() ? (k < 0 ? "-" + term : term) : (k < 0 ? " - " : " + ") + term;
}

// ---- Names and reads at a point of the nest ----

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

ExprPtr map_args(const ExprPtr& e, const std::function<ExprPtr(const ExprPtr&)>& f) {
    if (e->args.empty()) return e;
    auto out = std::make_shared<Expr>(*e);
    for (auto& a : out->args) a = f(a);
    return out;
}

bool mentions(const ExprPtr& e, const std::string& n) {
    if (e->kind == Expr::Kind::Name && e->text == n) return true;
    return std::any_of(e->args.begin(), e->args.end(), [&](const ExprPtr& a) { return mentions(a, n); });
}

namespace {
/** e with the name `was` written `now`. */
ExprPtr renamed(const ExprPtr& e, const std::string& was, const std::string& now) {
    if (e->kind == Expr::Kind::Name && e->text == was) {
        auto n = std::make_shared<Expr>(*e);
        n->text = now;
        return n;
    }
    return map_args(e, [&](const ExprPtr& a) { return renamed(a, was, now); });
}
}  // namespace

ExprPtr stored_value(const std::string& tensor, const Scope& s) {
    auto st = s.stored.find(tensor);
    if (st == s.stored.end()) return nullptr;
    // Written in a loop over another variable: its value with that variable renamed.
    ExprPtr v = st->second.value;
    for (const auto& [was, now] : {std::pair(st->second.row, s.row), std::pair(st->second.col, s.col)}) {
        if (was == now) continue;
        if (mentions(v, now))
            refuse("reads back " + tensor + " in a loop over " + now + ", a name its stored value already has");
        v = renamed(v, was, now);
    }
    return v;
}

/**
 * Scalars replaced by their definitions, held loop variables by their values; an array read
 * is resolved where it stands (row pointer, index definitions, held variables), so that it
 * keeps its meaning wherever the expression is used.
 */
ExprPtr subst(const ExprPtr& e, const Scope& s) {
    if (e->kind == Expr::Kind::Name) {
        if (auto l = s.lets.find(e->text); l != s.lets.end()) return l->second;
        ExprPtr v;
        if (auto f = s.fixed.find(e->text); f != s.fixed.end())
            v = Expr::number(static_cast<double>(f->second), true);
        else if (auto l = s.ilets.find(e->text); l != s.ilets.end())
            v = poly_expr(l->second);
        else
            return e;
        if (!e->converted) return v;
        // An integer the C code converts to floating point stays marked so (fold_integers).
        auto marked = std::make_shared<Expr>(*v);
        marked->converted = true;
        return marked;
    }
    if (e->kind == Expr::Kind::Index) {
        auto p = to_poly(e->args[0], s);
        if (!p) {  // a clamped index: its integer names resolved here
            auto out = std::make_shared<Expr>(*e);
            out->args = {subst(e->args[0], s)};
            if (auto a = s.aliases.find(e->text); a != s.aliases.end()) {
                out->text = a->second.first;
                out->args = {Expr::binary("+", poly_expr(a->second.second), out->args[0])};
            }
            return out;
        }
        auto out = std::make_shared<Expr>(*e);
        Poly offset;
        if (auto a = s.aliases.find(e->text); a != s.aliases.end()) {
            out->text = a->second.first;
            offset = a->second.second;
        }
        Poly at = add(offset, *p);
        // An element an earlier loop of the row stored in the output: its value.
        if (!s.row.empty() && !s.col.empty() && at == cell_index(s))
            if (ExprPtr v = stored_value(out->text, s)) return v;
        out->args = {poly_expr(at)};
        return out;
    }
    return map_args(e, [&](const ExprPtr& a) { return subst(a, s); });
}

Poly cell_index(const Scope& s) {
    if (s.row_poly) return add(mul(*s.row_poly, s.cols), variable(s.col));
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
    if (s.cells && !to_poly(e->args[0], s))
        if (auto c = clamped_read(e, s)) return *c;
    auto [tensor, p] = access(e, s);
    auto held = [&](const std::string& v) { return s.fixed.count(v) ? constant(s.fixed.at(v)) : variable(v); };
    std::string shown = tensor + "[" + poly_text(p, s.loop_vars) + "]";
    if (s.flat) {
        if (p == held(s.col)) return tensor;
        // The element's column or row, `c = i % cols` (`r = i / cols`): a per-column (per-row) operand.
        if ((!s.flat_col.empty() && p == variable(s.flat_col)) || (!s.flat_row.empty() && p == variable(s.flat_row)))
            return tensor;
        refuse("reads " + shown + ", not " + tensor + "[" + s.col + "]");
    }
    if (!s.row.empty() && !s.col.empty() && p == cell_index(s)) return tensor;
    if (s.cells) {
        if (auto d = neighbour_offset(p, s); d && s.offsets) {
            s.offsets->insert(*d);
            return "at(" + tensor + ", " + std::to_string(d->first) + ", " + std::to_string(d->second) + ")";
        }
        if (auto w = position_read(tensor, p, s)) return *w;
        refuse("reads " + shown + ", neither the cell [" + poly_text(cell_index(s), s.loop_vars) +
               "], a neighbour at constant offsets nor an index of the cell's position");
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
        case Expr::Kind::Cast:
            refuse("converts " + nest::to_text(rewrite(e->args[0], s)) + " to " + e->text +
                   " (truncating it), which the computation language does not model");
        case Expr::Kind::Select:
            if (auto zero = constant_value(e->args[2]); zero && *zero == 0 && s.cells && s.guarded)
                if (ExprPtr g = guarded_term(e->args[0], e->args[1], s, 0)) return g;
            [[fallthrough]];
        default:
            return map_args(e, [&](const ExprPtr& a) { return rewrite(a, s); });
    }
}

/** An expression, already substituted, with its reads rewritten; a refusal names the statement's line. */
ExprPtr rewritten(const ExprPtr& e, const Scope& s, int line) {
    try {
        return rewrite(e, s);
    } catch (const Refusal& r) {
        std::string why = r.what();
        refuse(why.find("(line ") == std::string::npos ? why + at_line(line) : why);
    }
}

/** An expression (substituted) in the computation language; a refusal names the statement's line. */
std::string emit(const ExprPtr& e, const Scope& s, int line) {
    return nest::to_text(rewritten(subst(e, s), s, line));
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
    return p ? constant_poly(*p) : std::nullopt;
}

std::optional<std::vector<long long>> unrolled_values(const Stmt& loop, const Scope& s, long long limit) {
    auto from = constant_of(loop.start, s), to = constant_of(loop.bound, s);
    if (!from || !to || loop.step == 0) return std::nullopt;
    std::vector<long long> out;
    for (long long v = *from; loop.step > 0 ? v < *to : v > *to; v += loop.step) {
        if (static_cast<long long>(out.size()) >= limit)
            refuse("the loop over " + loop.var + " runs more than " + std::to_string(limit) +
                   " times, too many to unroll" + at_line(loop.line));
        out.push_back(v);
    }
    return out;
}

namespace {

/** True when e is an integer value in C: an integer literal or integer arithmetic, not converted. */
bool integer_typed(const ExprPtr& e) {
    return e->kind == Expr::Kind::Number && e->integer && !e->converted;
}

}  // namespace

ExprPtr fold_integers(const ExprPtr& e) {
    if (e->args.empty()) return e;
    const ExprPtr out = map_args(e, fold_integers);
    std::optional<long long> v;
    if (out->kind == Expr::Kind::Unary && out->text == "-" && integer_typed(out->args[0])) {
        v = -static_cast<long long>(out->args[0]->value);
    } else if (out->kind == Expr::Kind::Binary && integer_typed(out->args[0]) && integer_typed(out->args[1])) {
        auto a = static_cast<long long>(out->args[0]->value), b = static_cast<long long>(out->args[1]->value);
        const std::string& op = out->text;
        if (op == "+") v = a + b;
        if (op == "-") v = a - b;
        if (op == "*") v = a * b;
        if ((op == "/" || op == "%") && b != 0) v = op == "/" ? a / b : a % b;  // C's truncating division
    }
    if (!v) return out;
    auto n = std::make_shared<Expr>(*Expr::number(static_cast<double>(*v), true));
    n->converted = e->converted;
    return n;
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
    if (st.type == Stmt::Type::Array) {
        if (!st.elements.empty()) refuse("the array " + st.var + " filled with something else than 0" + at_line(st.line));
        s.arrays[st.var] = st.init;
        return;
    }
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

}  // namespace kf::ast
