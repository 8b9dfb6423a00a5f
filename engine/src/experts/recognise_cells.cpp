// The AST recogniser's two-level nests over the cells (recognise_parts.h): elementwise nests,
// transposes and stencils with a branch for the edge cells.
#include <algorithm>
#include <regex>
#include <functional>

#include <nlohmann/json.hpp>

#include "recognise_parts.h"

namespace kf::ast {

using nlohmann::json;

namespace {

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
    std::set<long long>& near = is_row ? out.top : out.left;
    std::set<long long>& far = is_row ? out.bottom : out.right;
    if (auto c = constant_poly(p)) {  // near the start: var == c, var < c, var <= c
        if (op == "==")
            near.insert(*c);
        else if (op == "<" || op == "<=")
            for (long long v = 0; v < *c + (op == "<=" ? 1 : 0) && v < 64; ++v) near.insert(v);
        else
            refuse(why);
    } else if (auto k = constant_poly(add(p, extent, -1))) {  // near the end: var == n + k, var >= n + k, var > n + k
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

bool only_indices_then_loop(const Block& b) {
    if (b.empty() || b.back().kind != Stmt::Kind::For) return false;
    for (std::size_t k = 0; k + 1 < b.size(); ++k)
        if (b[k].kind != Stmt::Kind::Decl || b[k].type == Stmt::Type::Floating) return false;
    return true;
}

void starts_at_zero(const Stmt& loop) {
    auto start = constant_value(loop.start);
    if (loop.step != 1 || !start || *start != 0)
        refuse("the loop over " + loop.var + " does not start at 0 with step 1" + at_line(loop.line));
}

/** if (bounds check) acc += term: the term added, read under zero padding; false for another branch. */
bool guarded_update(const Stmt& st, Scope& sc) {
    if (!st.else_body.empty() || st.body.size() != 1) return false;
    const Stmt& a = st.body[0];
    if (a.kind != Stmt::Kind::Assign || a.target->kind != Expr::Kind::Name || !sc.lets.count(a.target->text) ||
        (a.op != "+=" && a.op != "-="))
        return false;
    ExprPtr t = guarded_term(st.cond, a.value, sc, st.line);
    if (!t)
        refuse("adds to " + a.target->text + " under " + nest::to_text(st.cond) +
               ", which is not a bounds check of the cell's row and column" + at_line(st.line));
    ExprPtr& acc = sc.lets[a.target->text];
    auto zero = constant_value(acc);
    if (a.op == "-=") {
        auto neg = std::make_shared<Expr>();
        neg->kind = Expr::Kind::Unary;
        neg->text = "-";
        neg->args = {t};
        t = neg;
    }
    acc = zero && *zero == 0 ? t : Expr::binary("+", acc, t);
    return true;
}

Derived cell_body(const Stmt& inner, Scope s, const std::string& out, const Poly& p, bool transpose,
                  const json& layout);

}  // namespace

Derived cells(const Stmt& outer, Scope s) {
    s.loop_vars.insert(outer.var);
    for (const Stmt& st : outer.body)
        if (st.kind == Stmt::Kind::Decl) declare(st, s);
    // Three loops (b, c, t) over [(b * C + c) * T + t]: the outer two are the row.
    const Stmt* mid = nullptr;
    if (only_indices_then_loop(outer.body.back().body)) {
        mid = &outer.body.back();
        starts_at_zero(*mid);
        s.loop_vars.insert(mid->var);
        for (const Stmt& st : mid->body)
            if (st.kind == Stmt::Kind::Decl) declare(st, s);
    }
    const Stmt& inner = mid ? mid->body.back() : outer.body.back();
    starts_at_zero(inner);
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
    if (mid) {
        Poly bm = poly_or_refuse(mid->bound, s, "the bound");
        s.row_poly = add(mul(variable(outer.var), bm), variable(mid->var));
        if (p != add(mul(*s.row_poly, b2), variable(inner.var)))
            refuse("writes " + out + "[" + poly_text(p, s.loop_vars) + "], not [(" + outer.var + " * " +
                   nest::to_text(mid->bound) + " + " + mid->var + ") * " + nest::to_text(inner.bound) + " + " +
                   inner.var + "] of the loops over " + outer.var + ", " + mid->var + " and " + inner.var +
                   at_line(write->line));
        s.row = mid->var;
        s.col = inner.var;
        s.cols = b2;
        s.rows = mul(b1, bm);
        std::string per = nest::to_text(mid->bound);
        if (per.find(' ') != std::string::npos) per = "(" + per + ")";
        s.position = {{outer.var, "row() / " + per}, {mid->var, "row() % " + per}, {inner.var, "col()"}};
        json layout = {{"rows", poly_text(s.rows)}, {"cols", nest::to_text(inner.bound)}};
        return cell_body(inner, s, out, p, false, layout);
    }
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
    s.rows = s.row == outer.var ? b1 : b2;
    s.position = {{s.row, "row()"}, {s.col, "col()"}};
    json layout = {{"rows", nest::to_text(rs.bound)}, {"cols", nest::to_text(cs.bound)}};
    return cell_body(inner, s, out, p, transpose, layout);
}

namespace {

/** One cell's statements read in order: what they write, the neighbours they read, the edge branch. */
struct CellReader {
    const Stmt& inner;
    const std::string& out;
    const Poly& p;
    bool transpose;
    const json& layout;
    const Poly& rows;

    CellReader(const Stmt& inner_, const std::string& out_, const Poly& p_, bool transpose_, const json& layout_,
               const Poly& rows_)
        : inner(inner_), out(out_), p(p_), transpose(transpose_), layout(layout_), rows(rows_) {}

    Offsets offsets, guarded, clamped;
    std::optional<std::string> border;
    std::optional<Edges> edges;
    int border_line = 0;
    long long unrolled = 0;
    std::optional<std::string> map;

    void run(const Block& b, Scope& sc, bool in_loop);
    void assign(const Stmt& st, Scope& sc, bool in_loop);
    void edge_branch(const Stmt& st, Scope& sc, bool in_loop);
    void unroll(const Stmt& st, Scope& sc);
    Derived result();
    Derived elementwise();
    Derived padded_stencil();
    Derived edge_stencil(long long rr, long long rc);
};

// The cell's statements; a constant-bound loop (over neighbours) is unrolled.
void CellReader::run(const Block& b, Scope& sc, bool in_loop) {
    for (std::size_t k = 0; k < b.size(); ++k) {
        const Stmt& st = b[k];
        if (map) refuse("does more after writing " + out + at_line(st.line));
        switch (st.kind) {
            case Stmt::Kind::Decl:
                declare(st, sc);
                continue;
            case Stmt::Kind::Assign:
                assign(st, sc, in_loop);
                continue;
            case Stmt::Kind::If:
                edge_branch(st, sc, in_loop);
                continue;
            case Stmt::Kind::For:
                unroll(st, sc);
                continue;
            default:
                refuse("has a statement the recogniser does not know inside each cell" + at_line(st.line));
        }
    }
}

void CellReader::assign(const Stmt& st, Scope& sc, bool in_loop) {
    if (st.target->kind == Expr::Kind::Name) {
        if (!sc.lets.count(st.target->text))
            refuse("assigns " + st.target->text + " before giving it a value" + at_line(st.line));
        reassign(st, sc);
        return;
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
}

// if (edge) { out[...] = ...; continue; } (or an else with the inner cells' statements).
void CellReader::edge_branch(const Stmt& st, Scope& sc, bool in_loop) {
    if (guarded_update(st, sc)) return;
    bool with_continue = st.else_body.empty() && st.body.size() == 2 && st.body[1].kind == Stmt::Kind::Continue;
    const Stmt& w = st.body.empty() ? st : st.body[0];
    if (in_loop || border || (!with_continue && (st.else_body.empty() || st.body.size() != 1)) ||
        w.kind != Stmt::Kind::Assign || w.target->kind != Expr::Kind::Index || w.op != "=")
        refuse("has a branch other than one for the edge cells (if (edge) { " + out + "[...] = ...; continue; })" +
               at_line(st.line));
    if (access(w.target, sc).second != p)
        refuse("the edge branch writes elsewhere than " + out + "[" + poly_text(p, sc.loop_vars) + "]" +
               at_line(st.line));
    Scope bs = sc;
    bs.offsets = nullptr;
    bs.guarded = bs.clamped = nullptr;
    border = emit(w.value, bs, w.line);
    Edges e;
    edge_terms(st.cond, sc, rows, e, st.line);
    edges = e;
    border_line = st.line;
    if (!with_continue) run(st.else_body, sc, in_loop);
}

// A loop over neighbours at constant offsets, its body read once per value; acc += e sums term by term.
void CellReader::unroll(const Stmt& st, Scope& sc) {
    auto values = unrolled_values(st, sc, 4096);
    if (!values)
        refuse("the loop over " + st.var + " inside each cell runs to " + nest::to_text(st.bound) +
               ", not a constant (only loops over neighbours at constant offsets are unrolled)" + at_line(st.line));
    for (long long v : *values) {
        if (++unrolled > 4096) refuse("the loops inside each cell run too long to unroll" + at_line(st.line));
        Scope body = sc;
        body.fixed[st.var] = v;
        for (const Stmt& in : st.body) {
            if (in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Name && sc.lets.count(in.target->text)) {
                // acc += e: the running value, term by term.
                auto upd = reduction_update(in, in.target->text);
                if (!upd || upd->first != "sum")
                    refuse("accumulates " + in.target->text + " other than by a sum" + at_line(in.line));
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
}

// What the cell computes, from what it wrote and how far it read.
Derived CellReader::result() {
    if (!map) refuse("the cell writes no output" + at_line(inner.line));
    if (transpose) {
        if (border) refuse("a transpose with an edge branch" + at_line(border_line));
        return {json{{"op", "transpose"}, {"layout", layout}, {"map", *map}, {"output", out}}, "a transpose"};
    }
    Offsets all = offsets;
    all.insert(guarded.begin(), guarded.end());
    all.insert(clamped.begin(), clamped.end());
    long long rr = 0, rc = 0;
    for (const auto& [di, dj] : all) {
        rr = std::max(rr, di < 0 ? -di : di);
        rc = std::max(rc, dj < 0 ? -dj : dj);
    }
    if (rr == 0 && rc == 0) return elementwise();
    if (!guarded.empty() || !clamped.empty()) return padded_stencil();
    return edge_stencil(rr, rc);
}

Derived CellReader::elementwise() {
    if (border) refuse("an edge branch, but no neighbour is read" + at_line(border_line));
    // Per-column and per-row operands (bias[c], scale[r]): the computation language reads a
    // tensor of cols (rows) elements at the cell's column (row) by its name alone.
    static const std::regex at_col("\\b([A-Za-z_][A-Za-z0-9_]*)\\[col\\(\\)\\]"), at_row("\\b([A-Za-z_][A-Za-z0-9_]*)\\[row\\(\\)\\]");
    const std::string broadcast = std::regex_replace(std::regex_replace(*map, at_col, "$1"), at_row, "$1");
    if (broadcast.find("row()") != std::string::npos || broadcast.find("col()") != std::string::npos)
        refuse("reads at an index of the cell's position other than its row or its column, without reading a neighbour "
               "(only a stencil reads so)" +
               at_line(inner.line));
    if (broadcast != *map)
        return {json{{"op", "elementwise"}, {"layout", layout}, {"map", broadcast}, {"output", out}},
                "an elementwise nest with per-row or per-column operands"};
    return {json{{"op", "elementwise"}, {"map", *map}, {"output", out}}, "an elementwise nest"};
}

// Neighbours read under a bounds check (zero padding) or clamped to the edges.
Derived CellReader::padded_stencil() {
    std::string pad = guarded.empty() ? "clamp" : "zero";
    if (!guarded.empty() && !clamped.empty())
        refuse("reads some neighbours under a bounds check and others clamped" + at_line(inner.line));
    if (border) refuse("an edge branch besides padded neighbour reads" + at_line(border_line));
    for (const auto& [di, dj] : offsets)
        if (di || dj)
            refuse("reads a neighbour at (" + std::to_string(di) + ", " + std::to_string(dj) +
                   ") without a bounds check or a clamp, the others padded" + at_line(inner.line));
    return {json{{"op", "stencil"}, {"layout", layout}, {"map", *map}, {"pad", pad}, {"output", out}},
            pad == "zero" ? "a stencil with zero padding" : "a stencil with clamped padding"};
}

// Neighbours read as they are, the cells within their reach (rr rows, rc columns) written by the edge branch.
Derived CellReader::edge_stencil(long long rr, long long rc) {
    if (!border)
        refuse("reads neighbours at offsets up to " + std::to_string(std::max(rr, rc)) +
               " without a branch for the edge cells, a bounds check or a clamp" + at_line(inner.line));
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

Derived cell_body(const Stmt& inner, Scope s, const std::string& out, const Poly& p, bool transpose,
                  const json& layout) {
    CellReader r(inner, out, p, transpose, layout, s.rows);
    s.cells = true;
    s.offsets = &r.offsets;
    s.guarded = &r.guarded;
    s.clamped = &r.clamped;
    r.run(inner.body, s, false);
    return r.result();
}

}  // namespace

}  // namespace kf::ast
