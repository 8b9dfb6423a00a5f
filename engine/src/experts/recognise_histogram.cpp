// The AST recogniser's histograms (recognise_parts.h): counts of the elements per bin, the
// bins checked against [0, bins) (or known to lie there: a byte input and 256 bins), into the
// output after it is zeroed, or into a local array filled with 0 then copied to the output.
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

namespace {

/** The bin's value as a histogram's map: a floating-point value converted to an integer is the map truncated. */
ExprPtr bin_value(const ExprPtr& bin) { return bin->kind == Expr::Kind::Cast ? bin->args[0] : bin; }

/** The range of values of `bin` when it is an integer input read at the loop's element (u8: 0..255). */
std::optional<std::pair<long long, long long>> input_range(const ExprPtr& bin, const Scope& s) {
    if (bin->kind != Expr::Kind::Index) return std::nullopt;
    auto [tensor, p] = access(bin, s);
    auto r = s.ranges.find(tensor);
    if (r == s.ranges.end() || p != variable(s.col)) return std::nullopt;
    return r->second;
}

/**
 * The bin the loop counts, checked to lie in [0, bins): by the condition of the count, or by the
 * range of the integer input it reads (bins a constant).
 */
ExprPtr checked_bin(const Stmt& loop, Scope& s, const Poly& bins, const std::string& bins_text) {
    const Stmt& last = loop.body.back();
    const Stmt* update = count_update(last);
    const std::string& out = update->target->text;
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
    if (last.kind != Stmt::Kind::If) {
        auto range = input_range(bin, s);
        auto n = constant_poly(bins);
        if (range && n && range->first >= 0 && range->second < *n) return bin_value(bin);
        refuse("counts " + out + "[" + nest::to_text(update->target->args[0]) +
               "] without checking that the bin is in [0, bins)" +
               (range && n ? ": its values reach " + std::to_string(range->second) + ", past " + bins_text : "") +
               at_line(last.line));
    }
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
    if (*upper != bins)
        refuse("counts bins [0, " + poly_text(*upper) + ") of " + out + ", zeroed up to " + bins_text + at_line(last.line));
    return bin_value(bin);
}

}  // namespace

Derived histogram(const Stmt* zero, const Stmt& loop, Scope s) {
    std::string out = count_update(loop.body.back())->target->text;
    if (!zero) refuse("counts into " + out + " without zeroing it first" + at_line(loop.line));
    if (zero->body.size() != 1 || zero->body[0].kind != Stmt::Kind::Assign || zero->body[0].op != "=" ||
        zero->body[0].target->kind != Expr::Kind::Index || zero->body[0].target->text != out ||
        !is_name(zero->body[0].target->args[0], zero->var) || !constant_value(zero->body[0].value) ||
        *constant_value(zero->body[0].value) != 0)
        refuse("the loop before the counts does not zero " + out + "[" + zero->var + "]" + at_line(zero->line));
    const std::string bins = nest::to_text(zero->bound);
    ExprPtr bin = checked_bin(loop, s, poly_or_refuse(zero->bound, s, "the bound"), bins);
    nlohmann::json j = {{"op", "histogram"}, {"bins", bins}, {"map", emit(bin, s, loop.body.back().line)}, {"output", out}};
    return {j, "a histogram"};
}

Derived copied_histogram(const Stmt& loop, const Stmt& copy, Scope s) {
    const std::string local = count_update(loop.body.back())->target->text;
    auto length = s.arrays.find(local);
    if (length == s.arrays.end())
        refuse("counts into " + local + ", which is neither an output zeroed first nor a local array filled with 0" +
               at_line(loop.line));
    const std::string bins = nest::to_text(length->second);
    const Poly n = poly_or_refuse(length->second, s, "the length of " + local);
    // The copy: for (b = 0; b < n; ++b) out[b] = local[b];
    auto start = constant_value(copy.start);
    const Stmt* w = copy.body.size() == 1 ? &copy.body[0] : nullptr;
    if (copy.step != 1 || !start || *start != 0 || !w || w->kind != Stmt::Kind::Assign || w->op != "=" ||
        w->target->kind != Expr::Kind::Index || !is_name(w->target->args[0], copy.var) ||
        w->value->kind != Expr::Kind::Index || w->value->text != local || !is_name(w->value->args[0], copy.var) ||
        poly_or_refuse(copy.bound, s, "the bound") != n)
        refuse("the loop after the counts does not copy each of " + local + "'s " + bins + " elements, out[" +
               copy.var + "] = " + local + "[" + copy.var + "]" + at_line(copy.line));
    const std::string out = w->target->text;
    ExprPtr bin = checked_bin(loop, s, n, bins);
    nlohmann::json j = {{"op", "histogram"}, {"bins", bins}, {"map", emit(bin, s, loop.body.back().line)}, {"output", out}};
    return {j, "a histogram counted in a local array, then copied"};
}

}  // namespace kf::ast
