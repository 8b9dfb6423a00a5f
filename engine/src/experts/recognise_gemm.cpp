// The AST recogniser's matrix products (recognise_parts.h): a two-level nest over the output's
// cells, each cell a sum over the inner dimension of a rows x inner and an inner x cols
// factor, then the epilogue written at the cell.
#include <array>

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

/** The computation of C = map(acc), acc = the sum over inner of a * b, C rows x cols. */
nlohmann::json gemm_json(const ExprPtr& rows, const ExprPtr& cols, const ExprPtr& inner, const std::string& acc,
                         const std::string& a, const std::string& b, const std::string& map, const std::string& out) {
    return {{"op", "gemm"},
            {"layout", {{"rows", nest::to_text(rows)}, {"cols", nest::to_text(cols)}, {"inner", nest::to_text(inner)}}},
            {"stats", nlohmann::json::array({{{"name", acc}, {"combine", "sum"}, {"map", a + " * " + b}}})},
            {"map", map},
            {"output", out}};
}

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

namespace {

/** A product's cell read in order: declarations, one accumulator from 0, the loop summing the product, the output write. */
struct GemmCell {
    std::string acc;
    ExprPtr acc_init;
    int acc_line = 0;
    const Stmt* sum = nullptr;
    ExprPtr term;
    std::string term_text;  // as written, for the refusals
    Scope ks;               // the scope of the sum's term
    const Stmt* write = nullptr;

    void read(const Stmt& inner, Scope& s);
    void read_sum(const Stmt& st, const Scope& s);
    void check(const Stmt& inner) const;
};

void GemmCell::read(const Stmt& inner, Scope& s) {
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
            read_sum(st, s);
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=" && sum) {
            write = &st;
            continue;
        }
        refuse("the cell is neither an accumulator, a loop summing into it nor the output's write" + at_line(st.line));
    }
}

// The loop over the inner dimension: declarations, then acc += term as its last statement.
void GemmCell::read_sum(const Stmt& st, const Scope& s) {
    if (sum)
        refuse("a second loop over " + st.var + " in each cell (lines " + std::to_string(sum->line) + " and " +
               std::to_string(st.line) + ")");
    from_zero(st);
    if (constant_bounds(st, s))
        refuse("the loop over " + st.var + " inside each cell runs to a constant, not to the inner size" +
               at_line(st.line));
    if (acc.empty()) refuse("the loop over " + st.var + " has no accumulator declared before it" + at_line(st.line));
    sum = &st;
    ks = s;
    ks.loop_vars.insert(st.var);
    for (std::size_t k = 0; k < st.body.size(); ++k) {
        const Stmt& in = st.body[k];
        if (in.kind == Stmt::Kind::Decl && k + 1 < st.body.size()) {
            declare(in, ks);
            continue;
        }
        auto upd = in.kind == Stmt::Kind::Assign && in.target->kind == Expr::Kind::Name && in.target->text == acc &&
                           k + 1 == st.body.size()
                       ? reduction_update(in, acc)
                       : std::nullopt;
        if (!upd || upd->first != "sum")
            refuse("the loop over " + st.var + " is not one sum into the accumulator (" + acc + " += a * b)" +
                   at_line(in.line));
        term = subst(upd->second, ks);
        term_text = nest::to_text(upd->second);
    }
    if (!term) refuse("the loop over " + st.var + " sums nothing" + at_line(st.line));
}

void GemmCell::check(const Stmt& inner) const {
    if (!sum) refuse("the cell sums nothing" + at_line(inner.line));
    if (!write) refuse("the cell writes no output" + at_line(inner.line));
    if (!acc_init) refuse(acc + " has no starting value" + at_line(acc_line));
    if (auto v = constant_value(acc_init); !v || *v != 0)
        refuse(acc + " starts at " + nest::to_text(acc_init) + ": a matrix product's sum starts at 0" +
               at_line(acc_line));
}

/** The term: a product of two reads, one indexed by the row and the sum, one by the sum and the column. */
std::array<Factor, 2> factors(const GemmCell& cell) {
    const ExprPtr& term = cell.term;
    if (term->kind != Expr::Kind::Binary || term->text != "*" || term->args[0]->kind != Expr::Kind::Index ||
        term->args[1]->kind != Expr::Kind::Index)
        refuse("sums " + cell.term_text + ", not a product of two tensor reads" + at_line(cell.sum->line));
    std::array<Factor, 2> f;
    for (int i = 0; i < 2; ++i) {
        auto [t, p] = access(term->args[i], cell.ks);
        f[i] = {t, p, t + "[" + poly_text(p, cell.ks.loop_vars) + "]"};
    }
    return f;
}

/** Which loop indexes the rows and which the columns, from the factors' indices; a transposed factor is refused. */
Product find_product(const Stmt& outer, const Stmt& inner, const Stmt& sum, const std::array<Factor, 2>& f,
                     const Scope& s) {
    const Poly k = variable(sum.var);
    const Poly inner_size = poly_or_refuse(sum.bound, s, "the bound");
    std::optional<Product> found;
    for (const Stmt* r : {&outer, &inner}) {
        const Stmt* c = r == &outer ? &inner : &outer;
        Poly cols = poly_or_refuse(c->bound, s, "the bound");
        Poly left = add(mul(variable(r->var), inner_size), k), right = add(mul(k, cols), variable(c->var));
        for (int first = 0; first < 2; ++first)
            if (f[first].at == left && f[1 - first].at == right) found = Product{r, c, first == 0};
    }
    if (found) return *found;
    for (const Stmt* r : {&outer, &inner}) {
        const Stmt* c = r == &outer ? &inner : &outer;
        Poly left = add(mul(variable(r->var), inner_size), k);
        Poly transposed = add(mul(variable(c->var), inner_size), k);
        for (int first = 0; first < 2; ++first)
            if (f[first].at == left && f[1 - first].at == transposed)
                refuse("sums " + f[0].shown + " * " + f[1].shown + ": " + f[1 - first].shown +
                       " is a transposed factor, and a gemm reads its inner x cols factor at [" + sum.var +
                       " * cols + c]" + at_line(sum.line));
    }
    refuse("sums " + f[0].shown + " * " + f[1].shown + ", not a rows x inner factor [r * " + nest::to_text(sum.bound) +
           " + " + sum.var + "] times an inner x cols factor [" + sum.var + " * cols + c] of the loops over " +
           outer.var + " and " + inner.var + at_line(sum.line));
}

}  // namespace

Derived gemm(const Stmt& outer, Scope s) {
    from_zero(outer);
    s.loop_vars.insert(outer.var);
    for (std::size_t k = 0; k + 1 < outer.body.size(); ++k) declare(outer.body[k], s);
    const Stmt& inner = outer.body.back();
    from_zero(inner);
    s.loop_vars.insert(inner.var);

    GemmCell cell;
    cell.read(inner, s);
    cell.check(inner);
    const std::array<Factor, 2> f = factors(cell);
    const Product found = find_product(outer, inner, *cell.sum, f, s);
    const Stmt& rs = *found.row;
    const Stmt& cs = *found.col;

    // The epilogue: the sum and reads at the cell, per column or per row.
    s.row = rs.var;
    s.col = cs.var;
    s.cols = poly_or_refuse(cs.bound, s, "the bound");
    const Stmt* write = cell.write;
    auto [out, p] = access(write->target, s);
    if (p != cell_index(s))
        refuse("writes " + out + "[" + poly_text(p, s.loop_vars) + "], not " + out + "[" +
               poly_text(cell_index(s), s.loop_vars) + "] of the product's rows and columns" + at_line(write->line));
    std::string map = emit(write->value, s, write->line);
    const std::string& a = f[found.left_first ? 0 : 1].tensor;
    const std::string& b = f[found.left_first ? 1 : 0].tensor;
    return {gemm_json(rs.bound, cs.bound, cell.sum->bound, cell.acc, a, b, map, out), "a matrix product"};
}

namespace {

/** The vector element `acc[j]`'s statement: an assignment to an element of a local vector. */
const std::string* vector_target(const Stmt& st, const Scope& s) {
    if (st.kind != Stmt::Kind::Assign || st.target->kind != Expr::Kind::Index) return nullptr;
    return s.arrays.count(st.target->text) ? &st.target->text : nullptr;
}

/** `e` with every read acc[j] replaced by the name acc; a read of acc at another index is refused. */
ExprPtr row_sums_as_name(const ExprPtr& e, const std::string& acc, const std::string& j, int line) {
    if (e->kind == Expr::Kind::Index && e->text == acc) {
        if (!is_name(e->args[0], j))
            refuse("reads " + acc + "[" + nest::to_text(e->args[0]) + "], not " + acc + "[" + j + "]" + at_line(line));
        return Expr::name(acc);
    }
    return map_args(e, [&](const ExprPtr& a) { return row_sums_as_name(a, acc, j, line); });
}

/** The loop over a row's columns from 0, to the same bound as the sum's. */
void over_the_row(const Stmt& loop, const Poly& cols, const Scope& s, const std::string& what) {
    from_zero(loop);
    if (poly_or_refuse(loop.bound, s, "the bound") != cols)
        refuse("the loop " + what + " runs to " + nest::to_text(loop.bound) + ", not to the row's length" + at_line(loop.line));
}

}  // namespace

bool is_row_product(const Stmt& outer, const Scope& scope) {
    Scope s = scope;
    for (const Stmt& st : outer.body) {
        if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Array && st.elements.empty()) s.arrays[st.var] = st.init;
        if (st.kind != Stmt::Kind::For || st.body.empty() || st.body.back().kind != Stmt::Kind::For) continue;
        const Stmt& in = st.body.back();
        if (in.body.size() == 1 && vector_target(in.body[0], s) && in.body[0].op == "+=") return true;
    }
    return false;
}

Derived gemm_rows(const Stmt& outer, Scope s) {
    from_zero(outer);
    s.loop_vars.insert(outer.var);
    std::string acc, fresh;  // fresh: a vector declared in each row, zero-filled there
    bool zeroed = false;     // by a loop, or by the declaration of `fresh`
    const Stmt *sum = nullptr, *inner = nullptr, *epilogue = nullptr;
    Poly cols;
    ExprPtr cols_bound;
    ExprPtr term;
    Scope ks;  // the scope of the sum's term
    for (const Stmt& st : outer.body) {
        if (st.kind == Stmt::Kind::Decl) {
            if (sum && st.type != Stmt::Type::Pointer)
                refuse("declares " + st.var + " between the sum and the output's loop" + at_line(st.line));
            if (st.type == Stmt::Type::Array && !zeroed) fresh = st.var;
            declare(st, s);
            continue;
        }
        if (st.kind != Stmt::Kind::For)
            refuse("each row is neither a loop zeroing the row of sums, the loop summing into it nor the output's loop" +
                   at_line(st.line));
        if (!zeroed && !fresh.empty() && !(st.body.size() == 1 && vector_target(st.body[0], s))) {
            acc = fresh;  // declared in the row, zero-filled: no loop zeroes it, this loop is the sum's
            cols = poly_or_refuse(s.arrays.at(fresh), s, "the length of " + fresh);
            cols_bound = s.arrays.at(fresh);
            zeroed = true;
        }
        if (!zeroed) {  // for (j) acc[j] = 0;
            const std::string* v = st.body.size() == 1 ? vector_target(st.body[0], s) : nullptr;
            if (!v || st.body[0].op != "=" || !is_name(st.body[0].target->args[0], st.var) ||
                constant_value(st.body[0].value) != std::optional<double>(0))
                refuse("the first loop of each row does not set the row of sums to 0 (" +
                       std::string(v ? *v : "acc") + "[" + st.var + "] = 0)" + at_line(st.line));
            acc = *v;
            zeroed = true;
            from_zero(st);
            cols = poly_or_refuse(st.bound, s, "the bound");
            cols_bound = st.bound;
            continue;
        }
        if (!sum) {  // for (k) { ...; for (j) acc[j] += a * b; }
            from_zero(st);
            if (constant_of(st.bound, s))
                refuse("the loop over " + st.var + " runs to a constant, not to the inner size" + at_line(st.line));
            sum = &st;
            ks = s;
            ks.loop_vars.insert(st.var);
            for (std::size_t q = 0; q + 1 < st.body.size(); ++q) {
                if (st.body[q].kind != Stmt::Kind::Decl)
                    refuse("the loop over " + st.var + " does more than declare and sum into " + acc + at_line(st.body[q].line));
                declare(st.body[q], ks);
            }
            inner = st.body.empty() ? nullptr : &st.body.back();
            if (!inner || inner->kind != Stmt::Kind::For || inner->body.size() != 1 || !vector_target(inner->body[0], ks) ||
                *vector_target(inner->body[0], ks) != acc || inner->body[0].op != "+=" ||
                !is_name(inner->body[0].target->args[0], inner->var))
                refuse("the loop over " + st.var + " does not end with one loop summing into " + acc + " (" + acc +
                       "[j] += a * b)" + at_line(st.line));
            over_the_row(*inner, cols, ks, "summing into " + acc);
            ks.loop_vars.insert(inner->var);
            term = subst(inner->body[0].value, ks);
            continue;
        }
        if (!epilogue) {
            over_the_row(st, cols, s, "writing the output");
            epilogue = &st;
            continue;
        }
        refuse("each row has a fourth loop" + at_line(st.line));
    }
    if (!epilogue) refuse("the loop over " + outer.var + " does not zero, sum and write a row" + at_line(outer.line));

    // The term: a product of two reads, [i * K + k] and [k * N + j].
    const std::string term_text = nest::to_text(inner->body[0].value);
    if (term->kind != Expr::Kind::Binary || term->text != "*" || term->args[0]->kind != Expr::Kind::Index ||
        term->args[1]->kind != Expr::Kind::Index)
        refuse("sums " + term_text + " into " + acc + ", not a product of two tensor reads" + at_line(inner->line));
    const Poly k = variable(sum->var);
    const Poly inner_size = poly_or_refuse(sum->bound, s, "the bound");
    const Poly left = add(mul(variable(outer.var), inner_size), k), right = add(mul(k, cols), variable(inner->var));
    std::string tensor[2];
    Poly at[2];
    for (int i = 0; i < 2; ++i) std::tie(tensor[i], at[i]) = access(term->args[i], ks);
    const int first = at[0] == left && at[1] == right ? 0 : at[1] == left && at[0] == right ? 1 : -1;
    if (first < 0)
        refuse("sums " + tensor[0] + "[" + poly_text(at[0], ks.loop_vars) + "] * " + tensor[1] + "[" +
               poly_text(at[1], ks.loop_vars) + "], not a rows x inner factor [" + outer.var + " * " +
               nest::to_text(sum->bound) + " + " + sum->var + "] times an inner x cols factor [" + sum->var + " * cols + " +
               inner->var + "]" + at_line(inner->line));

    // The output's loop: scalars of acc[j] and reads at the cell, then the write.
    s.row = outer.var;
    s.col = epilogue->var;
    s.cols = cols;
    s.loop_vars.insert(epilogue->var);
    const Stmt* write = nullptr;
    for (const Stmt& st : epilogue->body) {
        if (write) refuse("does more after writing " + write->target->text + at_line(st.line));
        if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Floating && st.init) {
            Stmt d = st;
            d.init = row_sums_as_name(st.init, acc, epilogue->var, st.line);
            declare(d, s);
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=") {
            write = &st;
            continue;
        }
        refuse("the output's loop does more than declare scalars and write the output" + at_line(st.line));
    }
    if (!write) refuse("the loop over " + epilogue->var + " writes no output" + at_line(epilogue->line));
    auto [out, p] = access(write->target, s);
    if (p != cell_index(s))
        refuse("writes " + out + "[" + poly_text(p, s.loop_vars) + "], not " + out + "[" + poly_text(cell_index(s), s.loop_vars) +
               "] of the product's rows and columns" + at_line(write->line));
    const std::string map = emit(row_sums_as_name(write->value, acc, epilogue->var, write->line), s, write->line);
    return {gemm_json(outer.bound, cols_bound, sum->bound, acc, tensor[first], tensor[1 - first], map, out),
            "a matrix product (a row of sums)"};
}

}  // namespace kf::ast
