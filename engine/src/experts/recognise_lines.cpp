// Rows and columns (the AST recogniser, recognise_parts.h): a loop over one dimension, with
// reductions and outputs along the other. Statements along a row may be conditional:
// - a reduction under a condition reduces select(cond, e, identity);
// - an element written under one keeps its earlier value where the condition fails;
// - `if (cond) continue;` puts the rest of the iteration under !cond;
// - a flag set where a condition holds may be read by a maximum's update,
//   `if (!any || v > m) m = v;`, and by the row's own exit for rows where it never held,
//   `if (!any) { y[r, every c] = K; continue; }`. The exit is accepted when the elements'
//   formula gives K where the condition fails (a masked softmax's row with no kept column).
#include <algorithm>
#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "recognise_parts.h"

namespace kf::ast {

namespace {

using nlohmann::json;

/** The value of an element not written yet: no name of the computation language starts with kf_. */
const char* const kUnwritten = "kf_unwritten";

// ---- Conditions and the values they select ----

ExprPtr negation(const ExprPtr& c) {
    if (c->kind == Expr::Kind::Unary && c->text == "!") return c->args[0];
    auto n = std::make_shared<Expr>();
    n->kind = Expr::Kind::Unary;
    n->text = "!";
    n->args = {c};
    return n;
}

/** a && b; a null condition is always true. */
ExprPtr conjunction(const ExprPtr& a, const ExprPtr& b) {
    return a ? Expr::binary("&&", a, b) : b;
}

/** select(c, a, b); a when c is null (always true). */
ExprPtr choice(const ExprPtr& c, const ExprPtr& a, const ExprPtr& b) {
    if (!c) return a;
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Select;
    e->args = {c, a, b};
    return e;
}

/** e where the condition written `c` is known to be `truth`: each select on c or !c replaced by its branch. */
ExprPtr assume(const ExprPtr& e, const std::string& c, bool truth) {
    if (e->kind == Expr::Kind::Select) {
        const ExprPtr& on = e->args[0];
        if (nest::to_text(on) == c) return assume(e->args[truth ? 1 : 2], c, truth);
        if (on->kind == Expr::Kind::Unary && on->text == "!" && nest::to_text(on->args[0]) == c)
            return assume(e->args[truth ? 2 : 1], c, truth);
    }
    return map_args(e, [&](const ExprPtr& a) { return assume(a, c, truth); });
}

/** Selects on !c turned around, their branches simplified knowing c, and a select of equal branches replaced by them. */
ExprPtr simplify(const ExprPtr& e) {
    const ExprPtr out = map_args(e, simplify);
    if (out->kind != Expr::Kind::Select) return out;
    const bool negated = out->args[0]->kind == Expr::Kind::Unary && out->args[0]->text == "!";
    const ExprPtr on = negated ? out->args[0]->args[0] : out->args[0];
    const std::string c = nest::to_text(on);
    const ExprPtr yes = assume(out->args[negated ? 2 : 1], c, true), no = assume(out->args[negated ? 1 : 2], c, false);
    if (nest::to_text(yes) == nest::to_text(no)) return yes;
    return choice(on, yes, no);
}

/** The identity of a combine, as the value a reduction takes where its condition fails. */
ExprPtr identity_of(const std::string& combine) {
    if (combine == "sum") return Expr::number(0, false);
    if (combine == "prod") return Expr::number(1, false);
    return Expr::number(combine == "max" ? -INFINITY : INFINITY, false);
}

/** `if (v > acc) acc = v;` (a max; v < acc a min), or `if (!flag || v > acc) acc = v;` with a flag. */
struct ConditionalUpdate {
    std::string acc, combine, flag;
    ExprPtr value;
};

std::optional<ConditionalUpdate> conditional_update(const Stmt& st) {
    if (st.kind != Stmt::Kind::If || !st.else_body.empty() || st.body.size() != 1) return std::nullopt;
    const Stmt& a = st.body[0];
    if (a.kind != Stmt::Kind::Assign || a.op != "=" || a.target->kind != Expr::Kind::Name) return std::nullopt;
    const std::string& acc = a.target->text;
    ExprPtr cond = st.cond;
    std::string flag;
    if (cond->kind == Expr::Kind::Binary && cond->text == "||") {
        for (int side = 0; side < 2 && flag.empty(); ++side) {
            const ExprPtr& n = cond->args[side];
            if (n->kind == Expr::Kind::Unary && n->text == "!" && n->args[0]->kind == Expr::Kind::Name) {
                flag = n->args[0]->text;
                cond = cond->args[1 - side];
            }
        }
        if (flag.empty()) return std::nullopt;
    }
    if (cond->kind != Expr::Kind::Binary) return std::nullopt;
    const std::string& op = cond->text;
    const bool greater = op == ">" || op == ">=", less = op == "<" || op == "<=";
    if (!greater && !less) return std::nullopt;
    const std::string v = nest::to_text(a.value);
    const bool v_left = nest::to_text(cond->args[0]) == v && is_name(cond->args[1], acc);
    const bool v_right = is_name(cond->args[0], acc) && nest::to_text(cond->args[1]) == v;
    if (!v_left && !v_right) return std::nullopt;
    const bool max = v_left ? greater : less;
    return ConditionalUpdate{acc, max ? "max" : "min", flag, a.value};
}

bool is_flag_exit(const Stmt& st, const std::map<std::string, std::string>& flags) {
    const ExprPtr& c = st.cond;
    return st.kind == Stmt::Kind::If && st.else_body.empty() && c->kind == Expr::Kind::Unary && c->text == "!" &&
           c->args[0]->kind == Expr::Kind::Name && flags.count(c->args[0]->text);
}

// ---- The loop over rows or columns ----

struct LineContext {
    bool by_rows = true;         ///< the outer loop is over the rows
    std::string rows, cols;      ///< the layout, as C expressions
    std::optional<Poly> inner;   ///< the inner loops' bound
    std::set<std::string> accs;  ///< scalars that may become reductions
    std::map<std::string, ExprPtr> acc_init;
    json stats = json::array();
    std::set<std::string> row_ints;  ///< integers declared in the row: the flags' candidates
    /** Flags set along the row: name -> the condition (computation language) under which they are set. */
    std::map<std::string, std::string> flags;
    /** Flags a maximum's update reads: its value is the row's only where the flag is true. */
    std::map<std::string, std::string> flag_reductions;  ///< flag -> the reduction's name
    /** The rows' exits where a flag is false: flag -> (output, the constant written, line). */
    std::map<std::string, std::tuple<std::string, std::string, int>> exits;
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

/**
 * The flag's exit, `if (!flag) { for (c) y[r, c] = K; continue; }`, checked: its loop runs
 * along the row as the others do and writes every element with a constant.
 */
void flag_exit(const Stmt& st, const Scope& s, LineContext& cx) {
    const std::string flag = st.cond->args[0]->text;
    const Block& b = st.body;
    if (b.size() != 2 || b[0].kind != Stmt::Kind::For || b[1].kind != Stmt::Kind::Continue)
        refuse("the exit where " + flag +
               " is false does something else than write each element of the row with a constant and continue" +
               at_line(st.line));
    const Stmt& loop = b[0];
    auto start = constant_value(loop.start);
    if (loop.step != 1 || !start || *start != 0 || poly_or_refuse(loop.bound, s, "the bound") != *cx.inner ||
        loop.body.size() != 1)
        refuse("the exit where " + flag + " is false does not write each element of the row once" +
               at_line(loop.line));
    const Stmt& w = loop.body[0];
    auto k = w.kind == Stmt::Kind::Assign && w.op == "=" && w.target->kind == Expr::Kind::Index
                 ? constant_value(w.value)
                 : std::nullopt;
    if (!k) refuse("the exit where " + flag + " is false writes something else than a constant" + at_line(w.line));
    Scope es = s;
    (cx.by_rows ? es.col : es.row) = loop.var;
    es.loop_vars.insert(loop.var);
    auto [out, p] = access(w.target, es);
    if (p != cell_index(es))
        refuse("the exit where " + flag + " is false writes " + out + "[" + poly_text(p, es.loop_vars) +
               "], not each element of the row" + at_line(w.line));
    if (cx.exits.count(flag)) refuse("a second exit where " + flag + " is false" + at_line(st.line));
    cx.exits[flag] = {out, nest::to_text(Expr::number(*k, false)), st.line};
}

/** The rows' exits and the flags' reductions checked against the elements' formula `map` of `out`. */
void check_exits(const LineContext& cx, const ExprPtr& map, const std::string& out) {
    for (const auto& [flag, reduction] : cx.flag_reductions)
        if (!cx.exits.count(flag))
            refuse(reduction + " is the row's only where " + flag + " is true, and no `if (!" + flag +
                   ") { ...; continue; }` writes the rows where it is false");
    for (const auto& [flag, exit] : cx.exits) {
        const auto& [written, k, line] = exit;
        if (written != out) refuse("the exit where " + flag + " is false writes " + written + ", not " + out + at_line(line));
        // A flag set unconditionally is false only in a row without elements: nothing to compare.
        const std::string& cond = cx.flags.at(flag);
        if (cond.empty()) continue;
        const std::string there = nest::to_text(simplify(assume(map, cond, false)));
        if (there != k)
            refuse("the exit where " + flag + " is false writes " + k + ", but where " + cond + " fails each element is " +
                   there + at_line(line));
    }
}

/** The layout as the computation language writes it. */
json layout_of(const LineContext& cx) { return json{{"rows", cx.rows}, {"cols", cx.cols}}; }

/** What the outer loop runs along, as the refusals name it. */
const char* along_of(const LineContext& cx) { return cx.by_rows ? "row" : "column"; }

/** One value per row (column), `y[r] = e`, after the reductions: a row (column) reduction. */
Derived line_reduction(const Stmt& outer, const Stmt& st, bool last, const Scope& s, const LineContext& cx) {
    const char* along = along_of(cx);
    auto [out, p] = access(st.target, s);
    if (p != variable(outer.var))
        refuse("writes " + out + "[" + poly_text(p, s.loop_vars) + "], not one value per " + along + " " + out +
               "[" + outer.var + "]" + at_line(st.line));
    if (!last) refuse("does more after writing " + out + "[" + outer.var + "]" + at_line(st.line));
    if (cx.stats.empty())
        refuse("writes " + out + "[" + outer.var + "] without a reduction over the " + along +
               at_line(st.line));
    if (!cx.exits.empty() || !cx.flag_reductions.empty())
        refuse("writes one value per " + std::string(along) + " after reading a flag set along it" +
               at_line(st.line));
    json j = {{"op", cx.by_rows ? "row_reduce" : "col_reduce"},
              {"layout", layout_of(cx)},
              {"stats", cx.stats},
              {"epilogue", emit(st.value, s, st.line)},
              {"output", out}};
    return {j, cx.by_rows ? "a row reduction" : "a column reduction"};
}

/**
 * An inner loop along the row (column) of the loop over rows (columns): its reductions, the
 * flags it sets and the output it writes. `s` is the outer loop's scope, which the loop
 * updates (the reductions it ends, the values it stores); the loop's own scope is a copy.
 */
class AlongLoop {
public:
    AlongLoop(const Stmt& outer, const Stmt& st, bool last, Scope& s, LineContext& cx)
        : outer_(outer), st_(st), last_(last), s_(s), cx_(cx), along_(along_of(cx)) {}

    /** The computation when the loop writes the output as the row's last statement; else nothing, its stats kept in cx. */
    std::optional<Derived> read() {
        enter();
        run(st_.body, nullptr, true);
        settle_flags();
        if (!out_.empty()) return written();
        if (new_stats_.empty()) refuse("the loop over " + st_.var + " neither reduces nor writes" + at_line(st_.line));
        for (auto& j : new_stats_) cx_.stats.push_back(j);
        return std::nullopt;
    }

private:
    /** The loop's start and bound checked against the row's, and its scope. */
    void enter() {
        const Stmt& st = st_;
        start_ = constant_value(st.start);
        if (st.step != 1 || !start_ || (*start_ != 0 && *start_ != 1))
            refuse("the loop over " + st.var + " does not start at 0 or 1 with step 1" + at_line(st.line));
        Poly bound = poly_or_refuse(st.bound, s_, "the bound");
        if (!cx_.inner) {
            cx_.inner = bound;
            (cx_.by_rows ? cx_.cols : cx_.rows) = nest::to_text(st.bound);
        } else if (bound != *cx_.inner) {
            refuse("the loop over " + st.var + " runs to " + nest::to_text(st.bound) + ", the earlier one to " +
                   poly_text(*cx_.inner) + at_line(st.line));
        }
        ls_ = s_;
        (cx_.by_rows ? ls_.col : ls_.row) = st.var;
        ls_.loop_vars.insert(st.var);
        ls_.cols = cx_.by_rows ? bound : poly_or_refuse(outer_.bound, s_, "the bound");
        s_.cols = ls_.cols;
    }

    /** A condition in the computation language ("" for none). */
    std::string condition_text(const ExprPtr& g, int line) const {
        return g ? nest::to_text(simplify(rewritten(g, ls_, line))) : std::string();
    }

    /** The reduction's start: the identity, or the first element from a loop starting at 1. */
    void check_start(const std::string& acc, const std::string& combine, const ExprPtr& e, const ExprPtr& g, int line) {
        const ExprPtr& init = cx_.acc_init[acc];
        if (!init) refuse(acc + " has no starting value" + at_line(line));
        if (*start_ == 0) {
            if (!is_identity(combine, init))
                refuse(acc + " starts at " + nest::to_text(init) + ", which is not the identity of " + combine +
                       at_line(line));
            return;
        }
        if (g)
            refuse(acc + " starts at the " + std::string(along_) +
                   "'s first element, which the condition may leave out" + at_line(line));
        Scope first = ls_;
        first.fixed[st_.var] = 0;
        std::string a = nest::to_text(rewrite(init, first)), b = emit(e, first, line);
        if (a != b)
            refuse(acc + " starts at " + nest::to_text(init) + " and the loop over " + st_.var + " at 1: not the " +
                   along_ + "'s first element" + at_line(line));
    }

    void add_stat(const std::string& acc, const std::string& combine, const ExprPtr& e, const ExprPtr& g, int line) {
        if (!out_.empty() && last_) refuse("reduces into " + acc + " after writing the output" + at_line(line));
        std::string map = g ? nest::to_text(simplify(rewritten(choice(g, subst(e, ls_), identity_of(combine)), ls_, line)))
                            : emit(e, ls_, line);
        new_stats_.push_back({{"name", acc}, {"combine", combine}, {"map", map}});
        cx_.accs.erase(acc);
        s_.lets.erase(acc);
        ls_.lets.erase(acc);
    }

    /** The loop's statements, under the condition g (null: always); `top`: the body itself. */
    void run(const Block& b, ExprPtr g, bool top) {
        for (const Stmt& in : b) {
            if (in.kind == Stmt::Kind::Decl) {
                declare(in, ls_);
                continue;
            }
            if (in.kind == Stmt::Kind::If) {
                branch(in, g, top);
                continue;
            }
            if (in.kind == Stmt::Kind::Continue || in.kind == Stmt::Kind::Break || in.kind == Stmt::Kind::Return)
                refuse("leaves an iteration of the loop over " + st_.var +
                       " other than by `if (cond) continue;` in its body" + at_line(in.line));
            if (in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Name) {
                assign_scalar(in, g);
                continue;
            }
            if (in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Index && in.op == "=") {
                write_element(in, g);
                continue;
            }
            refuse("the loop over " + st_.var + " is neither a reduction nor an output write" + at_line(in.line));
        }
    }

    /**
     * An if under g: a conditional update of a reduction, `if (cond) continue;` (the rest of
     * the body then runs under g && !cond), or branches run under their conditions.
     */
    void branch(const Stmt& in, ExprPtr& g, bool top) {
        guarded_ = true;
        if (auto u = conditional_update(in); u && cx_.accs.count(u->acc)) {
            if (u->flag.empty()) {
                check_start(u->acc, u->combine, u->value, g, in.line);
            } else {
                auto f = s_.ilets.find(u->flag);
                if (f == s_.ilets.end() || f->second != constant(0) || *start_ != 0)
                    refuse("reads " + u->flag + " in the update of " + u->acc +
                           ", which is not a flag declared false and set along the " + along_ +
                           at_line(in.line));
                flag_reads_.emplace_back(u->flag, condition_text(g, in.line));
                cx_.flag_reductions[u->flag] = u->acc;
            }
            add_stat(u->acc, u->combine, u->value, g, in.line);
            return;
        }
        ExprPtr c = subst(in.cond, ls_);
        if (in.else_body.empty() && in.body.size() == 1 && in.body[0].kind == Stmt::Kind::Continue) {
            if (!top)
                refuse("continues the loop over " + st_.var + " from inside another condition" +
                       at_line(in.line));
            g = conjunction(g, negation(c));  // the rest of the iteration runs where !c
            return;
        }
        run(in.body, conjunction(g, c), false);
        run(in.else_body, conjunction(g, negation(c)), false);
    }

    /** A scalar assigned under g: a flag set, or a reduction's update. */
    void assign_scalar(const Stmt& in, const ExprPtr& g) {
        const std::string& acc = in.target->text;
        auto f = s_.ilets.find(acc);
        auto one = constant_value(in.value);
        if (f != s_.ilets.end() && f->second == constant(0) && in.op == "=" && one && *one == 1) {
            // A flag: whether the condition held anywhere along the row.
            if (!cx_.row_ints.count(acc))
                refuse("sets " + acc + ", declared outside the loop over " + outer_.var +
                       ": a flag is declared false in each " + along_ + at_line(in.line));
            if (flags_set_.count(acc) || cx_.flags.count(acc))
                refuse("sets " + acc + " a second time" + at_line(in.line));
            flags_set_[acc] = condition_text(g, in.line);
            return;
        }
        auto upd = cx_.accs.count(acc) ? reduction_update(in, acc) : std::nullopt;
        if (!upd)
            refuse("assigns " + acc + " inside the loop over " + st_.var + " other than as a reduction" +
                   at_line(in.line));
        check_start(acc, upd->first, upd->second, g, in.line);
        add_stat(acc, upd->first, upd->second, g, in.line);
    }

    /** The output's element written under g: its value so far, which later statements of the row may read. */
    void write_element(const Stmt& in, const ExprPtr& g) {
        auto [tensor, p] = access(in.target, ls_);
        if (p != cell_index(ls_))
            refuse("writes " + tensor + "[" + poly_text(p, ls_.loop_vars) + "], not " + tensor + "[" +
                   poly_text(cell_index(ls_), ls_.loop_vars) + "]" + at_line(in.line));
        if (!out_.empty() && tensor != out_)
            refuse("writes both " + out_ + " and " + tensor + " along the " + along_ + at_line(in.line));
        if (out_.empty()) {
            out_ = tensor;
            cell_ = stored_value(out_, ls_);
            if (!cell_) cell_ = Expr::name(kUnwritten);
        }
        // Read back later in the row: the element's value so far (a softmax's exponentials).
        cell_ = choice(g, subst(in.value, ls_), cell_);
        ls_.stored[out_] = {ls_.row, ls_.col, cell_};
        write_line_ = in.line;
    }

    /** Each flag read by an update set under the update's condition; the flags set become the row's. */
    void settle_flags() {
        for (const auto& [flag, cond] : flag_reads_) {
            auto f = flags_set_.find(flag);
            if (f == flags_set_.end() || f->second != cond)
                refuse("the update reading " + flag + " runs " + (cond.empty() ? "always" : "where " + cond) +
                       ", and the loop over " + st_.var + " does not set " + flag + " under that condition" +
                       at_line(st_.line));
        }
        for (const auto& [flag, cond] : flags_set_) {
            cx_.flags[flag] = cond;
            s_.ilets.erase(flag);
        }
    }

    /**
     * The loop wrote the output: stored for the row's later loops, or, the row's last
     * statement, the computation (a scan, an elementwise map or a normalisation).
     */
    std::optional<Derived> written() {
        ExprPtr value = guarded_ ? simplify(cell_) : cell_;
        if (mentions(value, kUnwritten))
            refuse("writes " + out_ + " under a condition only, leaving its other elements unwritten" +
                   at_line(write_line_));
        if (!last_) {
            s_.stored[out_] = {ls_.row, ls_.col, value};
            for (auto& j : new_stats_) cx_.stats.push_back(j);
            return std::nullopt;
        }
        ExprPtr map = rewritten(value, ls_, write_line_);
        if (guarded_) map = simplify(map);
        if (!new_stats_.empty()) {
            // A running combine written at each element: a scan.
            if (new_stats_.size() != 1 || !cx_.stats.empty() || *start_ != 0 || guarded_)
                refuse("the loop over " + st_.var + " writes " + out_ +
                       " while reducing: only one running combine from the identity, without conditions, is a scan" +
                       at_line(write_line_));
            json j = {{"op", cx_.by_rows ? "row_scan" : "col_scan"},
                      {"layout", layout_of(cx_)},
                      {"stats", new_stats_},
                      {"map", nest::to_text(map)},
                      {"output", out_}};
            return Derived{j, cx_.by_rows ? "a running combine along each row" : "a running combine down each column"};
        }
        if (cx_.stats.empty() && cx_.by_rows && cx_.exits.empty()) {
            // No reduction: a map of each element and the row's own operands (t[r], a row pointer's reads).
            json j = {{"op", "elementwise"}, {"layout", layout_of(cx_)}, {"map", nest::to_text(map)}, {"output", out_}};
            return Derived{j, "every element of the row, from per-row operands"};
        }
        if (cx_.stats.empty())
            refuse("writes every element of the " + std::string(along_) + " without a reduction first" +
                   at_line(write_line_));
        if (!cx_.by_rows)
            refuse("normalises each column (only rows are normalised by an op class)" + at_line(write_line_));
        check_exits(cx_, map, out_);
        json j = {{"op", "row_normalize"},
                  {"layout", layout_of(cx_)},
                  {"stats", cx_.stats},
                  {"map", nest::to_text(map)},
                  {"output", out_}};
        return Derived{j, cx_.exits.empty() ? "reductions over each row, then every element of the row"
                                            : "reductions over each row, then every element of the row, with an exit "
                                              "for the rows where a flag stays false"};
    }

    const Stmt& outer_;
    const Stmt& st_;          ///< the loop along the row
    const bool last_;         ///< the loop is the row's last statement
    Scope& s_;                ///< the row's scope
    LineContext& cx_;
    const char* const along_;
    Scope ls_;                ///< the loop's scope
    std::optional<double> start_;
    json new_stats_ = json::array();
    bool guarded_ = false;    ///< a statement of the loop runs under a condition
    std::string out_;         ///< the output the loop writes, and its element's value so far
    ExprPtr cell_;
    int write_line_ = 0;
    std::map<std::string, std::string> flags_set_;                 ///< flag -> its condition
    std::vector<std::pair<std::string, std::string>> flag_reads_;  ///< (flag, the condition of the update reading it)
};

}  // namespace

Derived lines(const Stmt& outer, Scope s) {
    LineContext cx;
    cx.by_rows = multiplies(outer.body, outer.var, s);
    std::string& mine = cx.by_rows ? s.row : s.col;
    mine = outer.var;
    s.loop_vars.insert(outer.var);
    (cx.by_rows ? cx.rows : cx.cols) = nest::to_text(outer.bound);
    const Block& body = outer.body;
    for (std::size_t k = 0; k < body.size(); ++k) {
        const Stmt& st = body[k];
        bool last = k + 1 == body.size();
        if (st.kind == Stmt::Kind::Decl) {
            declare(st, s);
            if (st.type == Stmt::Type::Integer) cx.row_ints.insert(st.var);
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
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=")
            return line_reduction(outer, st, last, s, cx);
        if (st.kind == Stmt::Kind::If && is_flag_exit(st, cx.flags)) {
            flag_exit(st, s, cx);
            continue;
        }
        if (st.kind != Stmt::Kind::For)
            refuse("the loop over " + outer.var + " has a statement the recogniser does not know" + at_line(st.line));
        // An inner loop along the row (column): reductions, or the output.
        if (std::optional<Derived> d = AlongLoop(outer, st, last, s, cx).read()) return *d;
    }
    refuse("the loop over " + outer.var + " writes no output" + at_line(outer.line));
}

}  // namespace kf::ast
