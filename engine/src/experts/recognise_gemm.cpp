// The AST recogniser's matrix products (recognise_parts.h): a two-level nest over the output's
// cells, each cell a sum over the inner dimension of a rows x inner and an inner x cols
// factor, then the epilogue written at the cell.
#include <nlohmann/json.hpp>

#include "recognise_parts.h"

namespace kf::ast {

namespace {

/** True when the loop's start and bound are integer constants in `s` (a loop over neighbours, not a sum). */
bool constant_bounds(const Stmt& loop, const Scope& s) {
    return constant_of(loop.start, s) && constant_of(loop.bound, s);
}

void from_zero(const Stmt& loop) {
    auto start = constant_value(loop.start);
    if (loop.step != 1 || !start || *start != 0)
        refuse("the loop over " + loop.var + " does not start at 0 with step 1" + at_line(loop.line));
}

/** One factor of the sum's product: its tensor, its index, and the read as a refusal shows it. */
struct Factor {
    std::string tensor;
    Poly at;
    std::string shown;
};

/** The loop that indexes the output's rows, the one of its columns, and the sum's factors in the product's order. */
struct Product {
    const Stmt* row = nullptr;
    const Stmt* col = nullptr;
    bool left_first = true;
};

}  // namespace

bool is_product_nest(const Stmt& outer, const Scope& scope) {
    if (outer.body.empty() || outer.body.back().kind != Stmt::Kind::For) return false;
    const Stmt& inner = outer.body.back();
    if (inner.body.empty() || inner.body.back().kind == Stmt::Kind::For) return false;
    Scope s = scope;
    for (const Block* b : {&outer.body, &inner.body})
        for (const Stmt& st : *b) {
            if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Integer && st.init)
                if (auto p = to_poly(st.init, s)) s.ilets[st.var] = *p;
            if (b == &inner.body && st.kind == Stmt::Kind::For && !constant_bounds(st, s)) return true;
        }
    return false;
}

Derived gemm(const Stmt& outer, Scope s) {
    from_zero(outer);
    s.loop_vars.insert(outer.var);
    for (std::size_t k = 0; k + 1 < outer.body.size(); ++k) declare(outer.body[k], s);
    const Stmt& inner = outer.body.back();
    from_zero(inner);
    s.loop_vars.insert(inner.var);

    // The cell: declarations, one accumulator from 0, the loop summing the product, the output write.
    std::string acc;
    ExprPtr acc_init;
    int acc_line = 0;
    const Stmt* sum = nullptr;
    ExprPtr term;
    std::string term_text;  // as written, for the refusals
    Scope ks;               // the scope of the sum's term
    const Stmt* write = nullptr;
    for (std::size_t q = 0; q < inner.body.size(); ++q) {
        const Stmt& st = inner.body[q];
        if (write) refuse("does more after writing " + write->target->text + at_line(st.line));
        if (st.kind == Stmt::Kind::Decl) {
            if (st.type == Stmt::Type::Floating && !sum) {
                if (!acc.empty())
                    refuse("declares " + st.var + " besides the accumulator " + acc + " before the loop over the sum" +
                           at_line(st.line));
                acc = st.var;
                acc_init = st.init;
                acc_line = st.line;
                continue;
            }
            declare(st, s);
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Name) {
            if (!sum && st.target->text == acc && st.op == "=") {  // acc = 0; after its declaration
                acc_init = st.value;
                acc_line = st.line;
                continue;
            }
            if (!sum || (!s.lets.count(st.target->text) && st.target->text != acc))
                refuse("assigns " + st.target->text + " outside the sum and the epilogue's scalars" + at_line(st.line));
            reassign(st, s);
            continue;
        }
        if (st.kind == Stmt::Kind::For) {
            if (sum)
                refuse("a second loop over " + st.var + " in each cell (lines " + std::to_string(sum->line) + " and " +
                       std::to_string(st.line) + ")");
            from_zero(st);
            if (constant_bounds(st, s))
                refuse("the loop over " + st.var + " inside each cell runs to a constant, not to the inner size" +
                       at_line(st.line));
            if (acc.empty())
                refuse("the loop over " + st.var + " has no accumulator declared before it" + at_line(st.line));
            sum = &st;
            ks = s;
            ks.loop_vars.insert(st.var);
            for (std::size_t k = 0; k < st.body.size(); ++k) {
                const Stmt& in = st.body[k];
                if (in.kind == Stmt::Kind::Decl && k + 1 < st.body.size()) {
                    declare(in, ks);
                    continue;
                }
                auto upd = in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Name &&
                                   in.target->text == acc && k + 1 == st.body.size()
                               ? reduction_update(in, acc)
                               : std::nullopt;
                if (!upd || upd->first != "sum")
                    refuse("the loop over " + st.var + " is not one sum into the accumulator (" + acc + " += a * b)" +
                           at_line(in.line));
                term = subst(upd->second, ks);
                term_text = nest::to_text(upd->second);
            }
            if (!term) refuse("the loop over " + st.var + " sums nothing" + at_line(st.line));
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=" && sum) {
            write = &st;
            continue;
        }
        refuse("the cell is neither an accumulator, a loop summing into it nor the output's write" + at_line(st.line));
    }
    if (!sum) refuse("the cell sums nothing" + at_line(inner.line));
    if (!write) refuse("the cell writes no output" + at_line(inner.line));
    if (!acc_init) refuse(acc + " has no starting value" + at_line(acc_line));
    if (auto v = constant_value(acc_init); !v || *v != 0)
        refuse(acc + " starts at " + nest::to_text(acc_init) + ": a matrix product's sum starts at 0" +
               at_line(acc_line));

    // The term: a product of two reads, one indexed by the row and the sum, one by the sum and the column.
    if (term->kind != Expr::Kind::Binary || term->text != "*" || term->args[0]->kind != Expr::Kind::Index ||
        term->args[1]->kind != Expr::Kind::Index)
        refuse("sums " + term_text + ", not a product of two tensor reads" + at_line(sum->line));
    Factor f[2];
    for (int i = 0; i < 2; ++i) {
        auto [t, p] = access(term->args[i], ks);
        f[i] = {t, p, t + "[" + poly_text(p, ks.loop_vars) + "]"};
    }
    const Poly k = variable(sum->var);
    const Poly inner_size = poly_or_refuse(sum->bound, s, "the bound");
    std::optional<Product> found;
    for (const Stmt* r : {&outer, &inner}) {
        const Stmt* c = r == &outer ? &inner : &outer;
        Poly cols = poly_or_refuse(c->bound, s, "the bound");
        Poly left = add(mul(variable(r->var), inner_size), k), right = add(mul(k, cols), variable(c->var));
        for (int first = 0; first < 2; ++first)
            if (f[first].at == left && f[1 - first].at == right) found = Product{r, c, first == 0};
    }
    if (!found) {
        for (const Stmt* r : {&outer, &inner}) {
            const Stmt* c = r == &outer ? &inner : &outer;
            Poly left = add(mul(variable(r->var), inner_size), k);
            Poly transposed = add(mul(variable(c->var), inner_size), k);
            for (int first = 0; first < 2; ++first)
                if (f[first].at == left && f[1 - first].at == transposed)
                    refuse("sums " + f[0].shown + " * " + f[1].shown + ": " + f[1 - first].shown +
                           " is a transposed factor, and a gemm reads its inner x cols factor at [" + sum->var +
                           " * cols + c]" + at_line(sum->line));
        }
        refuse("sums " + f[0].shown + " * " + f[1].shown + ", not a rows x inner factor [r * " +
               nest::to_text(sum->bound) + " + " + sum->var + "] times an inner x cols factor [" + sum->var +
               " * cols + c] of the loops over " + outer.var + " and " + inner.var + at_line(sum->line));
    }
    const Stmt& rs = *found->row;
    const Stmt& cs = *found->col;

    // The epilogue: the sum and reads at the cell, per column or per row.
    s.row = rs.var;
    s.col = cs.var;
    s.cols = poly_or_refuse(cs.bound, s, "the bound");
    auto [out, p] = access(write->target, s);
    if (p != cell_index(s))
        refuse("writes " + out + "[" + poly_text(p, s.loop_vars) + "], not " + out + "[" +
               poly_text(cell_index(s), s.loop_vars) + "] of the product's rows and columns" + at_line(write->line));
    std::string map = emit(write->value, s, write->line);
    const std::string& a = f[found->left_first ? 0 : 1].tensor;
    const std::string& b = f[found->left_first ? 1 : 0].tensor;
    nlohmann::json j = {
        {"op", "gemm"},
        {"layout",
         {{"rows", nest::to_text(rs.bound)}, {"cols", nest::to_text(cs.bound)}, {"inner", nest::to_text(sum->bound)}}},
        {"stats", nlohmann::json::array({{{"name", acc}, {"combine", "sum"}, {"map", a + " * " + b}}})},
        {"map", map},
        {"output", out}};
    return {j, "a matrix product"};
}

}  // namespace kf::ast
