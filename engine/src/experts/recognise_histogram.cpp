// The AST recogniser's histograms (recognise_parts.h): counts of the elements per bin, the
// bins checked against [0, bins), after the counts are zeroed.
#include <nlohmann/json.hpp>

#include "recognise_parts.h"

namespace kf::ast {

namespace {

/** The count's update in a histogram's loop: out[bin] += 1 (++out[bin]), alone or under an if; null if none. */
const Stmt* count_update(const Stmt& st) {
    const Stmt* a = &st;
    if (st.kind == Stmt::Kind::If && st.else_body.empty() && st.body.size() == 1) a = &st.body[0];
    if (a->kind != Stmt::Kind::Assign || a->target->kind != Expr::Kind::Index || a->op != "+=") return nullptr;
    auto one = constant_value(a->value);
    return one && *one == 1 ? a : nullptr;
}

/** Adds one comparison of the bin check (bin >= 0, bin < bins) to lower/upper; false when it is not one. */
bool bin_check(const ExprPtr& c, const ExprPtr& bin, const Scope& s, bool& lower, std::optional<Poly>& upper) {
    if (c->kind == Expr::Kind::Binary && c->text == "&&")
        return bin_check(c->args[0], bin, s, lower, upper) && bin_check(c->args[1], bin, s, lower, upper);
    static const std::map<std::string, std::string> flipped = {{"<", ">"}, {"<=", ">="}, {">", "<"}, {">=", "<="}};
    if (c->kind != Expr::Kind::Binary || !flipped.count(c->text)) return false;
    std::string op = c->text;
    ExprPtr a = c->args[0], b = c->args[1];
    if (nest::to_text(a) != nest::to_text(bin)) {
        std::swap(a, b);
        op = flipped.at(op);
    }
    auto k = to_poly(b, s);
    if (nest::to_text(a) != nest::to_text(bin) || !k) return false;
    if ((op == ">=" && k->empty()) || (op == ">" && *k == constant(-1))) {
        lower = true;
        return true;
    }
    if (op == "<" || op == "<=") {
        upper = op == "<" ? *k : add(*k, constant(1));
        return true;
    }
    return false;
}

}  // namespace

bool is_histogram_loop(const Stmt& loop) {
    return !loop.body.empty() && count_update(loop.body.back()) &&
           nest::to_text(count_update(loop.body.back())->target->args[0]) != loop.var;
}

Derived histogram(const Stmt* zero, const Stmt& loop, Scope s) {
    const Stmt& last = loop.body.back();
    const Stmt* update = count_update(last);
    std::string out = update->target->text;
    if (!zero) refuse("counts into " + out + " without zeroing it first" + at_line(loop.line));
    if (zero->body.size() != 1 || zero->body[0].kind != Stmt::Kind::Assign || zero->body[0].op != "=" ||
        zero->body[0].target->kind != Expr::Kind::Index || zero->body[0].target->text != out ||
        !is_name(zero->body[0].target->args[0], zero->var) || !constant_value(zero->body[0].value) ||
        *constant_value(zero->body[0].value) != 0)
        refuse("the loop before the counts does not zero " + out + "[" + zero->var + "]" + at_line(zero->line));
    s.flat = true;
    s.col = loop.var;
    s.loop_vars.insert(loop.var);
    // The bin: named by an integer declaration of the loop, or written in the update.
    ExprPtr bin = update->target->args[0];
    for (std::size_t k = 0; k + 1 < loop.body.size(); ++k) {
        const Stmt& st = loop.body[k];
        if (st.kind != Stmt::Kind::Decl || st.type != Stmt::Type::Integer || !st.init)
            refuse("the loop over " + loop.var + " does more than name the bin and count it" + at_line(st.line));
        if (is_name(bin, st.var)) bin = subst(st.init, s);
    }
    if (last.kind != Stmt::Kind::If)
        refuse("counts " + out + "[" + nest::to_text(update->target->args[0]) +
               "] without checking that the bin is in [0, bins)" + at_line(last.line));
    bool lower = false;
    std::optional<Poly> upper;
    ExprPtr named = update->target->args[0];
    ExprPtr cond = last.cond;
    if (named->kind == Expr::Kind::Name) {  // the check reads the declared name: its value in its place
        std::map<std::string, ExprPtr> lets = s.lets;
        s.lets[named->text] = bin;
        cond = subst(cond, s);
        s.lets = lets;
    }
    if (!bin_check(cond, bin, s, lower, upper) || !lower || !upper)
        refuse("the condition " + nest::to_text(last.cond) + " is not the bin's check 0 <= bin && bin < bins" +
               at_line(last.line));
    if (*upper != poly_or_refuse(zero->bound, s, "the bound"))
        refuse("counts bins [0, " + poly_text(*upper) + ") of " + out + ", zeroed up to " + nest::to_text(zero->bound) +
               at_line(last.line));
    nlohmann::json j = {
        {"op", "histogram"}, {"bins", nest::to_text(zero->bound)}, {"map", emit(bin, s, last.line)}, {"output", out}};
    return {j, "a histogram"};
}

}  // namespace kf::ast
