// Reading kf_solve's AST into the loop-nest model (loop_nest.h). Only what the model knows is
// accepted: anything else is refused with the construct and its line, never guessed at.
#include "loop_nest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <stdexcept>

#include "libclang.h"

namespace kf::nest {

ExprPtr Expr::number(double v, bool integer) {
    auto e = std::make_shared<Expr>();
    e->kind = Kind::Number;
    e->value = v;
    e->integer = integer;
    return e;
}

ExprPtr Expr::name(const std::string& n) {
    auto e = std::make_shared<Expr>();
    e->kind = Kind::Name;
    e->text = n;
    return e;
}

ExprPtr Expr::binary(const std::string& op, ExprPtr a, ExprPtr b) {
    auto e = std::make_shared<Expr>();
    e->kind = Kind::Binary;
    e->text = op;
    e->args = {std::move(a), std::move(b)};
    return e;
}

namespace {

int precedence(const ExprPtr& e) {
    if (e->kind == Expr::Kind::Binary) {
        const std::string& op = e->text;
        if (op == "||") return 1;
        if (op == "&&") return 2;
        if (op == "==" || op == "!=") return 3;
        if (op == "<" || op == "<=" || op == ">" || op == ">=") return 4;
        if (op == "+" || op == "-") return 5;
        return 6;  // * / %
    }
    if (e->kind == Expr::Kind::Unary || e->kind == Expr::Kind::Cast) return 7;
    if (e->kind == Expr::Kind::Number && e->value < 0) return 7;
    return 8;
}

std::string number_text(double v, bool integer) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (integer || (v == std::floor(v) && std::fabs(v) < 1e15)) return std::to_string(static_cast<long long>(v));
    // The shortest decimal that reads back as the same double.
    char buf[40];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

}  // namespace

std::string to_text(const ExprPtr& e) {
    auto wrap = [](const ExprPtr& child, int min) {
        std::string s = to_text(child);
        return precedence(child) < min ? "(" + s + ")" : s;
    };
    switch (e->kind) {
        case Expr::Kind::Number:
            return number_text(e->value, e->integer);
        case Expr::Kind::Name:
            return e->text;
        case Expr::Kind::Index:
            return e->text + "[" + to_text(e->args[0]) + "]";
        case Expr::Kind::Unary:
            return e->text + wrap(e->args[0], 7);
        case Expr::Kind::Cast:
            return "(" + e->text + ")" + wrap(e->args[0], 8);
        case Expr::Kind::Binary: {
            int p = precedence(e);
            return wrap(e->args[0], p) + " " + e->text + " " + wrap(e->args[1], p + 1);
        }
        case Expr::Kind::Call:
        case Expr::Kind::Select: {
            std::string s = e->kind == Expr::Kind::Select ? "select(" : e->text + "(";
            for (std::size_t i = 0; i < e->args.size(); ++i) s += (i ? ", " : "") + to_text(e->args[i]);
            return s + ")";
        }
    }
    return {};
}

#ifdef KF_HAVE_CLANG_C

namespace {

/** A construct the model lacks; the message names it. */
struct Unmodelled : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** The limit on the AST nodes read (a reference's kf_solve is a few hundred). */
constexpr int kMaxNodes = 20000;

class Reader {
public:
    Reader(const Libclang& c, CXTranslationUnit tu) : c_(c), tu_(tu) {}

    std::string str(CXString s) const {
        const char* p = c_.getCString(s);
        std::string out = p ? p : "";
        c_.disposeString(s);
        return out;
    }

    std::vector<CXCursor> children(CXCursor cur) {
        std::vector<CXCursor> out;
        c_.visitChildren(
            cur,
            [](CXCursor child, CXCursor, CXClientData data) {
                static_cast<std::vector<CXCursor>*>(data)->push_back(child);
                return CXChildVisit_Continue;
            },
            &out);
        if ((nodes_ += static_cast<int>(out.size()) + 1) > kMaxNodes) throw Unmodelled("kf_solve is too large to read");
        return out;
    }

    int line_of(CXCursor cur) const {
        unsigned line = 0;
        c_.getExpansionLocation(c_.getCursorLocation(cur), nullptr, &line, nullptr, nullptr);
        return static_cast<int>(line);
    }

    unsigned offset_of(CXSourceLocation loc) const {
        unsigned off = 0;
        c_.getExpansionLocation(loc, nullptr, nullptr, nullptr, &off);
        return off;
    }

    /** The tokens of a cursor's extent, with each one's start offset. */
    std::vector<std::pair<std::string, unsigned>> tokens(CXCursor cur) const {
        CXToken* toks = nullptr;
        unsigned n = 0;
        c_.tokenize(tu_, c_.getCursorExtent(cur), &toks, &n);
        std::vector<std::pair<std::string, unsigned>> out;
        for (unsigned i = 0; i < n; ++i)
            out.emplace_back(str(c_.getTokenSpelling(tu_, toks[i])),
                             offset_of(c_.getRangeStart(c_.getTokenExtent(tu_, toks[i]))));
        if (toks) c_.disposeTokens(tu_, toks, n);
        return out;
    }

    std::string where(CXCursor cur) const { return " (line " + std::to_string(line_of(cur)) + ")"; }

    [[noreturn]] void refuse(CXCursor cur, const std::string& what) const { throw Unmodelled(what + where(cur)); }

    static bool is_cast_kind(CXCursorKind k) {
        return k == CXCursor_UnexposedExpr || k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr ||
               k == CXCursor_CXXFunctionalCastExpr;
    }

    /** True when a conversion from `from` to `to` truncates a floating-point value to an integer (not bool). */
    bool truncates(CXCursor to, CXCursor from) const {
        const CXTypeKind t = c_.getCanonicalType(c_.getCursorType(to)).kind;
        return t != CXType_Bool && is_integer_type(t) &&
               is_floating_type(c_.getCanonicalType(c_.getCursorType(from)).kind);
    }

    /**
     * Skips implicit conversions, parentheses and casts; stops at a conversion of a
     * floating-point value to an integer, which is not the value it converts.
     */
    CXCursor strip(CXCursor cur) {
        while (true) {
            CXCursorKind k = c_.getCursorKind(cur);
            if (k == CXCursor_ParenExpr || is_cast_kind(k)) {
                std::vector<CXCursor> ch = children(cur);
                CXCursor* last = nullptr;
                for (auto& x : ch)
                    if (c_.isExpression(c_.getCursorKind(x))) last = &x;
                if (!last || (k == CXCursor_UnexposedExpr && ch.size() != 1)) return cur;
                if (k != CXCursor_ParenExpr && truncates(cur, *last)) return cur;
                cur = *last;
                continue;
            }
            return cur;
        }
    }

    /** A type's spelling without const or volatile (`const int` is int). */
    std::string unqualified(CXType t) const {
        std::string n = str(c_.getTypeSpelling(t));
        for (bool again = true; again;) {
            again = false;
            for (const std::string q : {"const ", "volatile "})
                if (n.rfind(q, 0) == 0) {
                    n = n.substr(q.size());
                    again = true;
                }
        }
        return n;
    }

    /** The operand of a conversion that truncates a floating-point value to an integer, if `cur` is one. */
    std::optional<CXCursor> truncated_operand(CXCursor cur) {
        if (!is_cast_kind(c_.getCursorKind(cur))) return std::nullopt;
        std::vector<CXCursor> ch = children(cur);
        std::optional<CXCursor> last;
        for (auto& x : ch)
            if (c_.isExpression(c_.getCursorKind(x))) last = x;
        if (!last || !truncates(cur, *last)) return std::nullopt;
        return last;
    }

    /** The operator of a binary expression: the first token after its left operand. */
    std::string binary_operator(CXCursor cur, CXCursor lhs) const {
        unsigned end = offset_of(c_.getRangeEnd(c_.getCursorExtent(lhs)));
        for (const auto& [spelling, off] : tokens(cur))
            if (off >= end) return spelling;
        return {};
    }

    std::optional<double> evaluate(CXCursor cur, bool& integer) const {
        CXEvalResult r = c_.cursorEvaluate(cur);
        if (!r) return std::nullopt;
        std::optional<double> v;
        CXEvalResultKind k = c_.evalResultGetKind(r);
        if (k == CXEval_Int) {
            v = static_cast<double>(c_.evalResultGetAsLongLong(r));
            integer = true;
        } else if (k == CXEval_Float) {
            v = c_.evalResultGetAsDouble(r);
            integer = false;
        }
        c_.evalResultDispose(r);
        return v;
    }

    /** A float literal's value as the shortest decimal that reads back as the same float (0.2f is 0.2). */
    static double shortest_float(double v) {
        char buf[40];
        for (int digits = 1; digits <= 9; ++digits) {
            std::snprintf(buf, sizeof buf, "%.*g", digits, v);
            if (std::strtof(buf, nullptr) == static_cast<float>(v)) return std::strtod(buf, nullptr);
        }
        return v;
    }

    /**
     * The model's name of a math function the reference calls (its float form `expf` and
     * std:: overloads alike), or "" for a call the model does not know. Every one named here
     * is pure: it reads its arguments only, so a loop calling it may still run in parallel.
     * The kernels print the name back (std:: on the host; CUDA's float overloads on the GPU).
     */
    static std::string math_name(const std::string& f) {
        static const std::map<std::string, std::string> renamed = {{"fabs", "abs"}, {"abs", "abs"}, {"fmax", "max"},
                                                                   {"max", "max"},  {"fmin", "min"}, {"min", "min"}};
        static const std::set<std::string> kept = {
            "exp",  "exp2", "expm1", "log",  "log2",  "log10", "log1p", "sqrt",  "cbrt", "pow",   "hypot", "sin",
            "cos",  "tan",  "asin",  "acos", "atan",  "atan2", "sinh",  "cosh",  "tanh", "asinh", "acosh", "atanh",
            "erf",  "erfc", "floor", "ceil", "trunc", "round", "fmod",  "copysign", "fma", "isnan", "isinf",
            "isfinite", "signbit"};
        const auto known = [&](const std::string& g) -> std::string {
            if (auto it = renamed.find(g); it != renamed.end()) return it->second;
            return kept.count(g) ? g : std::string();
        };
        std::string name = known(f);
        if (name.empty() && f.size() > 1 && f.back() == 'f') name = known(f.substr(0, f.size() - 1));  // expf, fabsf
        return name;
    }

    static bool is_integer_type(CXTypeKind k) { return k >= CXType_Bool && k <= CXType_LongLong; }

    static bool is_floating_type(CXTypeKind k) {
        return k == CXType_Float || k == CXType_Double || k == CXType_LongDouble;
    }

    /**
     * The expression, marked `converted` where an integer value becomes floating point, and
     * `widened` where an integer value narrower than 64 bits becomes a 64-bit integer.
     */
    ExprPtr expr(CXCursor raw) {
        CXCursor cur = strip(raw);
        ExprPtr e = expr_stripped(cur);
        CXType outer_type = c_.getCanonicalType(c_.getCursorType(raw));
        CXType inner_type = c_.getCanonicalType(c_.getCursorType(cur));
        CXTypeKind outer = outer_type.kind, inner = inner_type.kind;
        if (is_integer_type(outer) && is_integer_type(inner) && e->kind != Expr::Kind::Number && e->widened.empty() &&
            c_.typeGetSizeOf(outer_type) == 8 && c_.typeGetSizeOf(inner_type) < 8) {
            auto marked = std::make_shared<Expr>(*e);
            marked->widened = unqualified(outer_type);
            return marked;
        }
        if (e->converted || !is_floating_type(outer) || !is_integer_type(inner)) return e;
        auto marked = std::make_shared<Expr>(*e);
        marked->converted = true;
        marked->cast = outer == CXType_Float ? "float" : "double";
        return marked;
    }

    /** The expression of a cursor without conversions, parentheses or casts around it. */
    ExprPtr expr_stripped(CXCursor cur) {
        CXCursorKind k = c_.getCursorKind(cur);
        if (auto operand = truncated_operand(cur)) {  // (int)v: v truncated toward zero
            auto e = std::make_shared<Expr>();
            e->kind = Expr::Kind::Cast;
            e->text = unqualified(c_.getCanonicalType(c_.getCursorType(cur)));
            e->integer = true;
            e->args = {expr(*operand)};
            return e;
        }
        switch (k) {
            case CXCursor_IntegerLiteral:
            case CXCursor_FloatingLiteral:
            case CXCursor_CXXBoolLiteralExpr:
                return literal(cur, k != CXCursor_FloatingLiteral);
            case CXCursor_DeclRefExpr:
                return named(cur);
            case CXCursor_ArraySubscriptExpr:
                return array_read(cur);
            case CXCursor_UnaryOperator:
                return unary(cur);
            case CXCursor_BinaryOperator:
                return binary(cur);
            case CXCursor_UnaryExpr: {  // sizeof(T), alignof(T): an integer constant
                bool integer = true;
                auto v = evaluate(cur, integer);
                if (!v || !integer) refuse(cur, "a sizeof or alignof that does not evaluate to a constant");
                return Expr::number(*v, true);
            }
            case CXCursor_ConditionalOperator: {
                std::vector<CXCursor> ch = children(cur);
                if (ch.size() != 3) refuse(cur, "a conditional it cannot take apart");
                auto e = std::make_shared<Expr>();
                e->kind = Expr::Kind::Select;
                e->args = {expr(ch[0]), expr(ch[1]), expr(ch[2])};
                return e;
            }
            case CXCursor_CallExpr:
                return call(cur);
            default:
                break;
        }
        refuse(cur, "the expression kind " + str(c_.getCursorKindSpelling(k)));
    }

    /** An integer, floating or bool literal, a float one at its shortest float spelling. */
    ExprPtr literal(CXCursor cur, bool integer) {
        auto v = evaluate(cur, integer);
        if (!v) refuse(cur, "a literal that does not evaluate");
        const bool single = c_.getCanonicalType(c_.getCursorType(cur)).kind == CXType_Float;
        if (single) v = shortest_float(*v);
        auto lit = std::make_shared<Expr>(*Expr::number(*v, integer));
        lit->f32 = single;
        return lit;
    }

    /** A name; inside an inlined helper, its parameter's or declaration's expression. */
    ExprPtr named(CXCursor cur) {
        std::string n = str(c_.getCursorSpelling(cur));
        if (params_.empty()) return Expr::name(n);
        auto p = params_.back().find(n);
        if (p == params_.back().end())
            refuse(cur, "a helper function reading " + n + ", neither a parameter nor one of its declarations");
        return p->second;
    }

    ExprPtr array_read(CXCursor cur) {
        std::vector<CXCursor> ch = children(cur);
        if (ch.size() != 2) refuse(cur, "an array read it cannot take apart");
        CXCursor base = strip(ch[0]);
        if (c_.getCursorKind(base) != CXCursor_DeclRefExpr)
            refuse(cur, "an array read of something else than a named pointer");
        auto e = std::make_shared<Expr>();
        e->kind = Expr::Kind::Index;
        e->text = str(c_.getCursorSpelling(base));
        e->args = {expr(ch[1])};
        return e;
    }

    /** -e, !e (a negated number folded), +e as e; ++ and -- are refused. */
    ExprPtr unary(CXCursor cur) {
        std::vector<CXCursor> ch = children(cur);
        auto toks = tokens(cur);
        if (ch.size() != 1 || toks.empty()) refuse(cur, "a unary operator it cannot take apart");
        std::string op = toks.front().first;
        if (op == "+") return expr(ch[0]);
        if (op != "-" && op != "!")
            refuse(cur, "the operator " + (op == "++" || op == "--" ? op : toks.back().first) + " inside an expression");
        auto e = std::make_shared<Expr>();
        e->kind = Expr::Kind::Unary;
        e->text = op;
        e->args = {expr(ch[0])};
        if (op == "-" && e->args[0]->kind == Expr::Kind::Number) {
            auto neg = std::make_shared<Expr>(*e->args[0]);
            neg->value = -neg->value;
            return neg;
        }
        return e;
    }

    ExprPtr binary(CXCursor cur) {
        std::vector<CXCursor> ch = children(cur);
        if (ch.size() != 2) refuse(cur, "a binary operator it cannot take apart");
        std::string op = binary_operator(cur, ch[0]);
        static const std::vector<std::string> known = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};
        if (std::find(known.begin(), known.end(), op) == known.end())
            refuse(cur, "the operator '" + op + "' inside an expression");
        return Expr::binary(op, expr(ch[0]), expr(ch[1]));
    }

    /** A call: of a lambda of kf_solve (inlined), a vector's operator[], a constant, std::clamp, a helper or a math function. */
    ExprPtr call(CXCursor cur) {
        if (str(c_.getCursorSpelling(cur)) == "operator()") return lambda_call(cur);
        if (str(c_.getCursorSpelling(cur)) == "operator[]") return vector_element(cur);
        std::string f = str(c_.getCursorSpelling(cur));
        int n = c_.cursorGetNumArguments(cur);
        if (n == 0) {  // INFINITY (__builtin_inff), std::numeric_limits<T>::infinity() ...
            bool integer = false;
            if (auto v = evaluate(cur, integer)) return Expr::number(*v, integer);
        }
        std::string name = math_name(f);
        if (f == "clamp" && n == 3) {  // std::clamp(v, lo, hi): min(max(v, lo), hi)
            auto arg = [&](int i) { return expr(c_.cursorGetArgument(cur, static_cast<unsigned>(i))); };
            auto call2 = [](const std::string& fn, ExprPtr a, ExprPtr b) {
                auto c = std::make_shared<Expr>();
                c->kind = Expr::Kind::Call;
                c->text = fn;
                c->args = {std::move(a), std::move(b)};
                return c;
            };
            return call2("min", call2("max", arg(0), arg(1)), arg(2));
        }
        if (name.empty() && helpers_.count(f)) return inline_call(cur, f, n);
        if (name.empty()) refuse(cur, "a call of " + (f.empty() ? std::string("something unnamed") : f));
        auto e = std::make_shared<Expr>();
        e->kind = Expr::Kind::Call;
        e->text = name;
        e->integer = is_integer_type(c_.getCanonicalType(c_.getCursorType(cur)).kind);  // std::abs(n / 2 - i)
        for (int i = 0; i < n; ++i) e->args.push_back(expr(c_.cursorGetArgument(cur, static_cast<unsigned>(i))));
        return e;
    }

    /** A lambda of kf_solve, called: its body inlined. */
    ExprPtr lambda_call(CXCursor cur) {
        std::vector<CXCursor> ch = children(cur);
        CXCursor callee = ch.empty() ? cur : strip(ch.front());
        const std::string f = str(c_.getCursorSpelling(callee));
        const int n = c_.cursorGetNumArguments(cur);
        auto l = lambdas_.find(f);
        if (c_.getCursorKind(callee) != CXCursor_DeclRefExpr || l == lambdas_.end() || n < 1)
            refuse(cur, "a call of operator() of " + (f.empty() ? std::string("something unnamed") : f) +
                            ", not a lambda declared in kf_solve");
        std::vector<CXCursor> args;
        for (int i = 1; i < n; ++i) args.push_back(c_.cursorGetArgument(cur, static_cast<unsigned>(i)));
        return inline_body(cur, f, l->second, args);
    }

    /** A std::vector's element. */
    ExprPtr vector_element(CXCursor cur) {
        std::vector<CXCursor> ch = children(cur);
        CXCursor base = ch.empty() ? cur : strip(ch.front());
        if (ch.size() != 3 || c_.getCursorKind(base) != CXCursor_DeclRefExpr)
            refuse(cur, "an element read of something else than a named vector");
        auto e = std::make_shared<Expr>();
        e->kind = Expr::Kind::Index;
        e->text = str(c_.getCursorSpelling(base));
        e->args = {expr(ch.back())};
        return e;
    }

    /**
     * A call of a static or inline function of the reference whose body is declarations of
     * scalars with their values, then one `return e;`: e with the arguments in place of the
     * parameters and each declaration's value in place of its name.
     */
    ExprPtr inline_call(CXCursor call, const std::string& f, int n) {
        CXCursor fn = helpers_.at(f);
        bool is_static = false;
        for (const auto& [spelling, off] : tokens(fn)) {
            if (spelling == f) break;
            is_static = is_static || spelling == "static" || spelling == "inline";
        }
        if (!is_static) refuse(call, "a call of " + f + ", which is not a static or inline function");
        std::vector<CXCursor> args;
        for (int i = 0; i < n; ++i) args.push_back(c_.cursorGetArgument(call, static_cast<unsigned>(i)));
        return inline_body(call, f, fn, args);
    }

    /**
     * The body of a function or lambda `fn` when it is declarations of scalars with their
     * values then one return (why not, when it is not); `parameters` receives its parameters.
     */
    std::string inline_shape(CXCursor fn, std::vector<std::string>& parameters, std::vector<CXCursor>& decls,
                             std::optional<CXCursor>& ret) {
        std::optional<CXCursor> body;
        for (CXCursor ch : children(fn)) {
            CXCursorKind k = c_.getCursorKind(ch);
            if (k == CXCursor_ParmDecl) parameters.push_back(str(c_.getCursorSpelling(ch)));
            if (k == CXCursor_CompoundStmt) body = ch;
        }
        std::vector<CXCursor> stmts = body ? children(*body) : std::vector<CXCursor>{};
        if (stmts.empty() || c_.getCursorKind(stmts.back()) != CXCursor_ReturnStmt || children(stmts.back()).size() != 1)
            return "its body does not end with one return of a value";
        for (std::size_t i = 0; i + 1 < stmts.size(); ++i) {
            if (c_.getCursorKind(stmts[i]) != CXCursor_DeclStmt) return "its body has more than declarations and one return";
            for (CXCursor var : children(stmts[i])) {
                bool init = false;
                for (CXCursor x : children(var)) init = init || c_.isExpression(c_.getCursorKind(x));
                if (c_.getCursorKind(var) != CXCursor_VarDecl ||
                    !scalar_type(c_.getCanonicalType(c_.getCursorType(var)).kind) || !init)
                    return "it declares " + str(c_.getCursorSpelling(var)) + ", not a scalar with a value";
                decls.push_back(var);
            }
        }
        ret = children(stmts.back())[0];
        return {};
    }

    /** A call of a helper `fn` (a function or a lambda) with the arguments `args`, inlined. */
    ExprPtr inline_body(CXCursor call, const std::string& f, CXCursor fn, const std::vector<CXCursor>& args) {
        std::vector<std::string> names;
        std::vector<CXCursor> decls;
        std::optional<CXCursor> ret;
        const std::string shape = inline_shape(fn, names, decls, ret);
        if (!shape.empty()) refuse(call, "a call of " + f + ", whose body is not declarations then one return: " + shape);
        if (names.size() != args.size() || params_.size() >= 4)
            refuse(call, "a call of " + f + " with " + std::to_string(args.size()) + " arguments for its " +
                             std::to_string(names.size()) + " parameters");
        std::map<std::string, ExprPtr> bound;
        for (std::size_t i = 0; i < args.size(); ++i) bound[names[i]] = expr(args[i]);
        params_.push_back(bound);
        for (CXCursor var : decls) {
            std::optional<CXCursor> init;
            for (CXCursor x : children(var))
                if (c_.isExpression(c_.getCursorKind(x))) init = x;
            ExprPtr v = c_.getCursorKind(*init) == CXCursor_InitListExpr ? brace_value(var, *init) : expr(*init);
            params_.back()[str(c_.getCursorSpelling(var))] = v;
        }
        ExprPtr e = expr(*ret);
        params_.pop_back();
        return e;
    }

    /** A scalar's brace initialiser: `{v}` is v, `{}` is zero. */
    ExprPtr brace_value(CXCursor var, CXCursor list) {
        std::vector<CXCursor> items;
        for (CXCursor x : children(list))
            if (c_.isExpression(c_.getCursorKind(x))) items.push_back(x);
        if (items.size() > 1) refuse(var, "the declaration of " + str(c_.getCursorSpelling(var)) + " with several values in braces");
        if (items.empty()) return Expr::number(0, type_of(var) == Stmt::Type::Integer);
        return expr(items[0]);
    }

    /**
     * A lambda declared in kf_solve, `auto f = [](float v) { ... };`: kept to be inlined where
     * it is called. Refused when it captures anything or its body is not declarations then one
     * return. False when `var` is no lambda.
     */
    bool lambda(CXCursor var) {
        std::optional<CXCursor> init;
        for (CXCursor x : children(var))
            if (c_.isExpression(c_.getCursorKind(x))) init = x;
        if (!init) return false;
        CXCursor l = strip(*init);
        if (c_.getCursorKind(l) != CXCursor_LambdaExpr) return false;
        const std::string n = str(c_.getCursorSpelling(var));
        auto toks = tokens(l);
        if (toks.size() < 2 || toks[0].first != "[" || toks[1].first != "]")
            refuse(var, "the lambda " + n + ", which captures names (only a lambda without captures, [], is inlined)");
        std::vector<std::string> names;
        std::vector<CXCursor> decls;
        std::optional<CXCursor> ret;
        const std::string shape = inline_shape(l, names, decls, ret);
        if (!shape.empty()) refuse(var, "the lambda " + n + ", whose body is not declarations then one return: " + shape);
        lambdas_[n] = l;
        return true;
    }

    /** The functions defined in the reference besides kf_solve, which a call may inline (one of each name). */
    void find_helpers(CXCursor tu) {
        std::set<std::string> twice;
        for (CXCursor ch : children(tu)) {
            if (c_.getCursorKind(ch) != CXCursor_FunctionDecl || !c_.isCursorDefinition(ch) ||
                !c_.locationIsFromMainFile(c_.getCursorLocation(ch)))
                continue;
            std::string n = str(c_.getCursorSpelling(ch));
            if (!helpers_.emplace(n, ch).second) twice.insert(n);
        }
        for (const auto& n : twice) helpers_.erase(n);
    }

    Block block(CXCursor cur) {
        Block out;
        if (c_.getCursorKind(cur) == CXCursor_CompoundStmt) {
            for (CXCursor ch : children(cur)) append(ch, out);
        } else {
            append(cur, out);
        }
        return out;
    }

    /** The kind of a scalar type; nullopt for any other. */
    static std::optional<Stmt::Type> scalar_type(CXTypeKind k) {
        switch (k) {
            case CXType_Bool:
            case CXType_Char_U:
            case CXType_UChar:
            case CXType_UShort:
            case CXType_UInt:
            case CXType_ULong:
            case CXType_ULongLong:
            case CXType_Char_S:
            case CXType_SChar:
            case CXType_Short:
            case CXType_Int:
            case CXType_Long:
            case CXType_LongLong:
                return Stmt::Type::Integer;
            case CXType_Float:
            case CXType_Double:
            case CXType_LongDouble:
                return Stmt::Type::Floating;
            default:
                return std::nullopt;
        }
    }

    Stmt::Type type_of(CXCursor decl) const {
        CXType t = c_.getCanonicalType(c_.getCursorType(decl));
        if (auto k = scalar_type(t.kind)) return *k;
        if (t.kind == CXType_Pointer) return Stmt::Type::Pointer;
        if (t.kind == CXType_ConstantArray && scalar_type(c_.getCanonicalType(c_.getArrayElementType(t)).kind))
            return Stmt::Type::Array;
        const std::string spelled = str(c_.getTypeSpelling(t));
        for (const char* v : {"std::vector<double", "std::vector<float"})
            if (spelled.rfind(v, 0) == 0) return Stmt::Type::Array;
        refuse(decl,
               "the declaration of " + str(c_.getCursorSpelling(decl)) + " of type " + str(c_.getTypeSpelling(t)));
    }

    Stmt decl(CXCursor var) {
        if (c_.getCursorKind(var) != CXCursor_VarDecl) refuse(var, "a declaration of something else than a variable");
        Stmt s;
        s.kind = Stmt::Kind::Decl;
        s.line = line_of(var);
        s.var = str(c_.getCursorSpelling(var));
        s.type = type_of(var);
        s.type_name = str(c_.getTypeSpelling(c_.getCanonicalType(c_.getCursorType(var))));
        CXCursor* init = nullptr;
        std::vector<CXCursor> ch = children(var);
        for (auto& x : ch)
            if (c_.isExpression(c_.getCursorKind(x))) init = &x;
        if (s.type == Stmt::Type::Array) {
            CXType t = c_.getCanonicalType(c_.getCursorType(var));
            s.init = t.kind == CXType_ConstantArray ? c_array_length(var, t, init, s.elements) : array_length(var, init);
            return s;
        }
        if (init && c_.getCursorKind(*init) == CXCursor_InitListExpr && s.type != Stmt::Type::Array)
            s.init = brace_value(var, *init);  // float s{0.0f};  float s{};
        else if (init)
            s.init = expr(*init);
        return s;
    }

    /** A C array's length, when it is filled with numbers: `T a[N] = {};`, `= {0, ...}` or
     *  `= {0.25f, 0.5f, 0.25f}` (then its values, in `elements`). */
    ExprPtr c_array_length(CXCursor var, CXType t, const CXCursor* init, std::vector<ExprPtr>& elements) {
        const std::string n = str(c_.getCursorSpelling(var));
        if (!init || c_.getCursorKind(*init) != CXCursor_InitListExpr)
            refuse(var, "the array " + n + " without `= {}`: its elements start undefined");
        bool zero = true;
        for (CXCursor v : children(*init)) {
            ExprPtr e = expr(v);
            if (e->kind != Expr::Kind::Number) refuse(var, "the array " + n + " filled with something else than numbers");
            zero = zero && e->value == 0;
            elements.push_back(std::move(e));
        }
        if (zero) elements.clear();
        return Expr::number(static_cast<double>(c_.getArraySize(t)), true);
    }

    /** A std::vector's length, from its constructor: (n) or (n, 0). */
    ExprPtr array_length(CXCursor var, const CXCursor* init) {
        const std::string n = str(c_.getCursorSpelling(var));
        if (!init) refuse(var, "the declaration of the vector " + n + " without a length");
        CXCursor call = strip(*init);
        // A constructor's call: its children are its arguments, the defaulted ones (the allocator)
        // written nowhere in the file.
        std::vector<CXCursor> args;
        if (c_.getCursorKind(call) == CXCursor_CallExpr)
            for (CXCursor a : children(call))
                if (c_.locationIsFromMainFile(c_.getCursorLocation(a))) args.push_back(a);
        if (args.size() != 1 && args.size() != 2)
            refuse(var, "the declaration of the vector " + n + " other than " + n + "(length)");
        if (args.size() == 2) {
            const ExprPtr fill = expr(args[1]);
            if (fill->kind != Expr::Kind::Number || fill->value != 0)
                refuse(var, "the vector " + n + " filled with something else than 0");
        }
        return expr(args[0]);
    }

    /** An assignment statement: =, op=, ++ or --. */
    bool assignment(CXCursor cur, Stmt& s) {
        CXCursorKind k = c_.getCursorKind(cur);
        std::vector<CXCursor> ch;
        if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) {
            ch = children(cur);
            if (ch.size() != 2) return false;
            std::string op = binary_operator(cur, ch[0]);
            if (op != "=" && op != "+=" && op != "-=" && op != "*=" && op != "/=") return false;
            s.op = op;
            s.target = expr(ch[0]);
            s.value = expr(ch[1]);
        } else if (k == CXCursor_UnaryOperator) {
            ch = children(cur);
            auto toks = tokens(cur);
            if (ch.size() != 1 || toks.empty()) return false;
            std::string op =
                toks.front().first == "++" || toks.front().first == "--" ? toks.front().first : toks.back().first;
            if (op != "++" && op != "--") return false;
            s.op = op == "++" ? "+=" : "-=";
            s.target = expr(ch[0]);
            s.value = Expr::number(1, true);
        } else {
            return false;
        }
        if (s.target->kind != Expr::Kind::Name && s.target->kind != Expr::Kind::Index)
            refuse(cur, "an assignment to something else than a name or an element");
        s.kind = Stmt::Kind::Assign;
        s.line = line_of(cur);
        return true;
    }

    Stmt loop(CXCursor cur) {
        std::vector<CXCursor> ch = children(cur);
        if (ch.size() != 4 || c_.getCursorKind(ch[0]) != CXCursor_DeclStmt)
            refuse(cur, "a for loop without a declared variable, a condition and an increment");
        Stmt s;
        s.kind = Stmt::Kind::For;
        s.line = line_of(cur);
        std::vector<CXCursor> vars = children(ch[0]);
        if (vars.size() != 1) refuse(cur, "a for loop declaring several variables");
        Stmt d = decl(vars[0]);
        if (d.type != Stmt::Type::Integer || !d.init)
            refuse(cur, "a for loop whose variable is not an integer from a start");
        s.var = d.var;
        s.start = d.init;
        CXCursor cond = strip(ch[1]);
        std::vector<CXCursor> cc = children(cond);
        std::string op = cc.size() == 2 ? binary_operator(cond, cc[0]) : "";
        bool down = op == ">" || op == ">=";
        if (c_.getCursorKind(cond) != CXCursor_BinaryOperator || (op != "<" && op != "<=" && !down))
            refuse(cur, "a for loop whose condition is not var < bound, var <= bound, var > bound or var >= bound");
        ExprPtr lhs = expr(cc[0]);
        if (lhs->kind != Expr::Kind::Name || lhs->text != s.var)
            refuse(cur, "a for loop whose condition does not compare its variable");
        s.bound = expr(cc[1]);
        if (op == "<=") s.bound = Expr::binary("+", s.bound, Expr::number(1, true));
        if (op == ">=") s.bound = Expr::binary("-", s.bound, Expr::number(1, true));
        Stmt inc;
        if (!assignment(ch[2], inc) || inc.target->kind != Expr::Kind::Name || inc.target->text != s.var ||
            inc.op != (down ? "-=" : "+=") || inc.value->kind != Expr::Kind::Number || !inc.value->integer ||
            inc.value->value <= 0)
            refuse(cur, down ? "a for loop counting down whose decrement is not --var or var -= <count>"
                             : "a for loop whose increment is not ++var or var += <count>");
        s.step = static_cast<long long>(inc.value->value) * (down ? -1 : 1);
        ++depth_;
        s.body = block(ch[3]);
        --depth_;
        return s;
    }

    /**
     * A call that fills an array with 0, as the loop `for (kf_z = 0; kf_z < n; ++kf_z) p[kf_z] = 0;`:
     * memset(p, 0, n * sizeof(*p)) (the byte count a multiple of the element's size),
     * std::fill(p, p + n, 0), std::fill_n(p, n, 0). Any other call is refused.
     */
    Stmt zeroing(CXCursor call) {
        const std::string f = str(c_.getCursorSpelling(call));
        const int n = c_.cursorGetNumArguments(call);
        auto arg = [&](int i) { return c_.cursorGetArgument(call, static_cast<unsigned>(i)); };
        // A row copied inside a loop (a gather's `memcpy(out + i * d, table + idx[i] * d, ...)`);
        // a whole array copied at the top is left refused: there is no loop of the reference's to spread.
        if (f == "memcpy" && n == 3 && depth_ > 0) return copying(call);
        if ((f != "memset" && f != "fill" && f != "fill_n") || n != 3) refuse(call, "a call of " + (f.empty() ? std::string("something unnamed") : f));
        const ExprPtr p = expr(arg(0));
        const ExprPtr value = expr(arg(f == "memset" ? 1 : 2));
        if (p->kind != Expr::Kind::Name) refuse(call, "a call of " + f + " on something else than a named pointer");
        if (value->kind != Expr::Kind::Number || value->value != 0)
            refuse(call, "a call of " + f + " filling " + p->text + " with something else than 0");
        ExprPtr count;
        if (f == "fill_n") {
            count = expr(arg(1));
        } else if (f == "fill") {
            const ExprPtr last = expr(arg(1));
            if (last->kind == Expr::Kind::Binary && last->text == "+")
                for (int side = 0; side < 2 && !count; ++side)
                    if (last->args[side]->kind == Expr::Kind::Name && last->args[side]->text == p->text)
                        count = last->args[1 - side];
            if (!count) refuse(call, "a call of fill whose end is not " + p->text + " + count");
        } else {
            count = element_count(call, arg(0), arg(2), "a memset of " + p->text);
        }
        return one_statement_loop(call, "kf_z", count, at_offset(p->text, Expr::number(0, true), "kf_z"),
                                  Expr::number(0, true));
    }

    /** dst[v] = value for v from 0 to count: the loop a call reads as. */
    Stmt one_statement_loop(CXCursor call, const std::string& v, const ExprPtr& count, ExprPtr dst, ExprPtr value) {
        Stmt s;
        s.kind = Stmt::Kind::For;
        s.line = line_of(call);
        s.var = v;
        s.start = Expr::number(0, true);
        s.bound = count;
        Stmt w;
        w.kind = Stmt::Kind::Assign;
        w.line = s.line;
        w.op = "=";
        w.target = std::move(dst);
        w.value = std::move(value);
        s.body = {w};
        return s;
    }

    /** p[off + v] (p[v] where off is 0). */
    static ExprPtr at_offset(const std::string& p, const ExprPtr& off, const std::string& v) {
        auto e = std::make_shared<Expr>();
        e->kind = Expr::Kind::Index;
        e->text = p;
        const bool zero = off->kind == Expr::Kind::Number && off->value == 0;
        e->args = {zero ? Expr::name(v) : Expr::binary("+", off, Expr::name(v))};
        return e;
    }

    /** The element count of a byte count `bytes` of the pointer `ptr`: a count times the element's size; refused otherwise. */
    ExprPtr element_count(CXCursor call, CXCursor ptr, CXCursor bytes_arg, const std::string& what) {
        CXType t = c_.getCanonicalType(c_.getCursorType(strip(ptr)));
        long long size = t.kind == CXType_Pointer ? c_.typeGetSizeOf(c_.getPointeeType(t)) : -1;
        const ExprPtr bytes = expr(bytes_arg);
        auto times = [&](const ExprPtr& k) { return k->kind == Expr::Kind::Number && k->value == size; };
        ExprPtr count;
        if (size > 0 && bytes->kind == Expr::Kind::Binary && bytes->text == "*") {
            if (times(bytes->args[1])) count = bytes->args[0];
            else if (times(bytes->args[0])) count = bytes->args[1];
        } else if (size > 0 && bytes->kind == Expr::Kind::Number && std::fmod(bytes->value, size) == 0) {
            count = Expr::number(bytes->value / size, true);
        }
        if (!count)
            refuse(call, what + " whose length is not a count times the size of its element" +
                             (size > 0 ? " (" + std::to_string(size) + " bytes)" : ""));
        return count;
    }

    /** A pointer expression as a named pointer and an element offset: p, p + off, off + p, &p[off]. */
    std::pair<std::string, ExprPtr> pointer_at(CXCursor call, const ExprPtr& e, const std::string& what) {
        if (e->kind == Expr::Kind::Name) return {e->text, Expr::number(0, true)};
        if (e->kind == Expr::Kind::Binary && e->text == "+")
            for (int side = 0; side < 2; ++side)
                if (e->args[side]->kind == Expr::Kind::Name && !e->args[1 - side]->converted)
                    return {e->args[side]->text, e->args[1 - side]};
        refuse(call, "a call of memcpy whose " + what + " is not a named pointer plus an offset");
    }

    /**
     * memcpy(dst, src, n * sizeof(*dst)) as the loop `for (kf_m = 0; kf_m < n; ++kf_m)
     * dst[kf_m] = src[kf_m];`, dst and src a named pointer or one plus an element offset
     * (`out + i * d`), the byte count a count times the element's size.
     */
    Stmt copying(CXCursor call) {
        auto arg = [&](int i) { return c_.cursorGetArgument(call, static_cast<unsigned>(i)); };
        auto [dst, doff] = pointer_at(call, expr(arg(0)), "destination");
        auto [src, soff] = pointer_at(call, expr(arg(1)), "source");
        const ExprPtr count = element_count(call, arg(0), arg(2), "a memcpy");
        return one_statement_loop(call, "kf_m", count, at_offset(dst, doff, "kf_m"), at_offset(src, soff, "kf_m"));
    }

    /** The root name of an lvalue or pointer expression (a[i], *p, (p), p + k), empty when none. */
    std::string root_name(CXCursor cur) {
        for (int guard = 0; guard < 64; ++guard) {
            cur = strip(cur);
            CXCursorKind k = c_.getCursorKind(cur);
            if (k == CXCursor_DeclRefExpr) return str(c_.getCursorSpelling(cur));
            std::vector<CXCursor> ch = children(cur);
            if (ch.empty()) return {};
            if (k == CXCursor_BinaryOperator && ch.size() == 2) {  // p + k: the pointer side
                CXTypeKind t0 = c_.getCanonicalType(c_.getCursorType(strip(ch[0]))).kind;
                cur = t0 == CXType_Pointer ? ch[0] : ch[1];
                continue;
            }
            cur = ch[0];  // a[i], *p, p->x, p.x
        }
        return {};
    }

    /**
     * A statement the model lacks, kept as written: its text, the names it uses, and those it
     * may assign (assignment and ++/-- targets, pointers passed to a call), less its own
     * declarations.
     */
    Stmt opaque(CXCursor cur, const std::string& why) {
        Stmt s;
        s.kind = Stmt::Kind::Opaque;
        s.line = line_of(cur);
        s.why = why;
        CXSourceRange r = c_.getCursorExtent(cur);
        unsigned b = offset_of(c_.getRangeStart(r)), e = offset_of(c_.getRangeEnd(r));
        if (b < e && e <= source_.size()) s.text = source_.substr(b, e - b);
        std::set<std::string> names, assigned, declared;
        std::vector<CXCursor> todo = {cur};
        while (!todo.empty()) {
            CXCursor x = todo.back();
            todo.pop_back();
            CXCursorKind k = c_.getCursorKind(x);
            if (k == CXCursor_DeclRefExpr) names.insert(str(c_.getCursorSpelling(x)));
            if (k == CXCursor_VarDecl) declared.insert(str(c_.getCursorSpelling(x)));
            std::vector<CXCursor> ch = children(x);
            if ((k == CXCursor_BinaryOperator && ch.size() == 2 && binary_operator(x, ch[0]) == "=") ||
                k == CXCursor_CompoundAssignOperator) {
                assigned.insert(root_name(ch[0]));
            } else if (k == CXCursor_UnaryOperator && ch.size() == 1) {
                auto toks = tokens(x);
                if (!toks.empty() && (toks.front().first == "++" || toks.front().first == "--" ||
                                      toks.back().first == "++" || toks.back().first == "--"))
                    assigned.insert(root_name(ch[0]));
            } else if (k == CXCursor_CallExpr) {
                for (int i = 0, n = c_.cursorGetNumArguments(x); i < n; ++i) {
                    CXCursor a = c_.cursorGetArgument(x, static_cast<unsigned>(i));
                    CXTypeKind t = c_.getCanonicalType(c_.getCursorType(strip(a))).kind;
                    if (t == CXType_Pointer || t == CXType_LValueReference) assigned.insert(root_name(a));
                }
            }
            for (CXCursor c : ch) todo.push_back(c);
        }
        for (const auto& d : declared) {
            names.erase(d);
            assigned.erase(d);
        }
        assigned.erase("");
        s.names.assign(names.begin(), names.end());
        s.assigned.assign(assigned.begin(), assigned.end());
        s.helpers = called_helpers(cur);
        // The names it declares at its own level (a declaration statement's), in scope after it.
        if (c_.getCursorKind(cur) == CXCursor_DeclStmt)
            for (CXCursor var : children(cur))
                if (c_.getCursorKind(var) == CXCursor_VarDecl) s.declared.push_back(str(c_.getCursorSpelling(var)));
        if (first_opaque_.empty()) first_opaque_ = why;
        return s;
    }

    /**
     * The definitions of the reference's functions that `cur` calls, directly or through each
     * other, in the file's order, to be copied beside a statement kept as written. Refused where
     * one reads a variable of the file, or where `cur` calls a lambda of kf_solve (inlined where
     * the model reads its calls, not kept) or a function of the reference that is not one of them.
     */
    std::vector<Helper> called_helpers(CXCursor cur) {
        std::map<std::string, Helper> found;
        std::vector<std::pair<CXCursor, std::string>> todo = {{cur, std::string()}};  // a cursor, the helper it is in
        while (!todo.empty()) {
            auto [x, in] = todo.back();
            todo.pop_back();
            if (c_.getCursorKind(x) == CXCursor_DeclRefExpr) {
                CXCursor ref = c_.getCursorReferenced(x);
                const std::string n = str(c_.getCursorSpelling(ref));
                const CXCursorKind rk = c_.getCursorKind(ref);
                const bool here = c_.locationIsFromMainFile(c_.getCursorLocation(ref));
                if (here && rk == CXCursor_FunctionDecl && n != "kf_solve") {
                    auto h = helpers_.find(n);
                    if (h == helpers_.end())
                        refuse(x, "a call of " + n + ", a function of the reference defined more than once or inside a namespace");
                    if (!found.count(n)) {
                        CXSourceRange r = c_.getCursorExtent(h->second);
                        const unsigned b = offset_of(c_.getRangeStart(r)), e = offset_of(c_.getRangeEnd(r));
                        found[n] = {n, b < e && e <= source_.size() ? source_.substr(b, e - b) : std::string(), b};
                        for (CXCursor ch : children(h->second)) todo.emplace_back(ch, n);
                    }
                } else if (here && rk == CXCursor_VarDecl && !in.empty() && !inside(ref, helpers_.at(in))) {
                    refuse(x, "a call of " + in + ", which reads " + n + ", a variable of the file");
                } else if (here && rk == CXCursor_VarDecl && in.empty() && lambdas_.count(n)) {
                    refuse(x, "a call of the lambda " + n + " in a statement the model lacks");
                }
            }
            for (CXCursor ch : children(x)) todo.emplace_back(ch, in);
        }
        std::vector<Helper> out;
        for (auto& [n, h] : found) out.push_back(std::move(h));
        std::sort(out.begin(), out.end(), [](const Helper& a, const Helper& b) { return a.offset < b.offset; });
        return out;
    }

    /** True when the declaration `decl` lies within the extent of `outer`. */
    bool inside(CXCursor decl, CXCursor outer) const {
        CXSourceRange r = c_.getCursorExtent(outer);
        const unsigned at = offset_of(c_.getCursorLocation(decl));
        return at >= offset_of(c_.getRangeStart(r)) && at <= offset_of(c_.getRangeEnd(r));
    }

    void append(CXCursor cur, Block& out) {
        if (!keep_opaque_ || depth_ == 0) return append_modelled(cur, out);
        Block got;
        try {
            append_modelled(cur, got);
        } catch (const Unmodelled& e) {
            out.push_back(opaque(cur, e.what()));
            return;
        }
        for (auto& st : got) out.push_back(std::move(st));
    }

    void append_modelled(CXCursor cur, Block& out) {
        CXCursorKind k = c_.getCursorKind(cur);
        Stmt s;
        s.line = line_of(cur);
        switch (k) {
            case CXCursor_NullStmt:
                return;
            case CXCursor_CompoundStmt:
                for (CXCursor ch : children(cur)) append(ch, out);
                return;
            case CXCursor_DeclStmt:
                for (CXCursor var : children(cur))
                    if (c_.getCursorKind(var) != CXCursor_VarDecl || !lambda(var)) out.push_back(decl(var));
                return;
            case CXCursor_ForStmt:
                out.push_back(loop(cur));
                return;
            case CXCursor_IfStmt: {
                std::vector<CXCursor> ch = children(cur);
                if (ch.size() < 2 || ch.size() > 3 || !c_.isExpression(c_.getCursorKind(ch[0])))
                    refuse(cur, "an if statement with a declaration");
                s.kind = Stmt::Kind::If;
                s.cond = expr(ch[0]);
                s.body = block(ch[1]);
                if (ch.size() == 3) s.else_body = block(ch[2]);
                out.push_back(s);
                return;
            }
            case CXCursor_ReturnStmt:
                if (!children(cur).empty()) refuse(cur, "a return with a value");
                s.kind = Stmt::Kind::Return;
                out.push_back(s);
                return;
            case CXCursor_ContinueStmt:
                s.kind = Stmt::Kind::Continue;
                out.push_back(s);
                return;
            case CXCursor_BreakStmt:
                s.kind = Stmt::Kind::Break;
                out.push_back(s);
                return;
            case CXCursor_CallExpr:
                out.push_back(zeroing(cur));
                return;
            case CXCursor_UnexposedExpr: {
                // A call whose value is dropped (std::fill_n's iterator), or a statement wrapped
                // where a temporary is bound to a reference (y[i] = std::max(v, 0.0f)).
                if (c_.getCursorKind(strip(cur)) == CXCursor_CallExpr) {
                    out.push_back(zeroing(strip(cur)));
                    return;
                }
                std::vector<CXCursor> ch = children(cur);
                if (ch.size() == 1) return append_modelled(ch[0], out);
                break;
            }
            case CXCursor_CStyleCastExpr:  // (void)name; marks a parameter unused
                if (c_.getCanonicalType(c_.getCursorType(cur)).kind == CXType_Void) {
                    std::vector<CXCursor> ch = children(cur);
                    if (ch.size() == 1 && c_.getCursorKind(strip(ch[0])) == CXCursor_DeclRefExpr) return;
                }
                break;
            default:
                break;
        }
        if (assignment(cur, s)) {
            out.push_back(s);
            return;
        }
        refuse(cur, "the statement kind " + str(c_.getCursorKindSpelling(k)));
    }

    /** kf_solve's definition in the main file, or a null cursor. */
    std::optional<CXCursor> find_kf_solve(CXCursor parent) {
        for (CXCursor ch : children(parent)) {
            CXCursorKind k = c_.getCursorKind(ch);
            if (!c_.locationIsFromMainFile(c_.getCursorLocation(ch))) continue;
            if (k == CXCursor_FunctionDecl && str(c_.getCursorSpelling(ch)) == "kf_solve" && c_.isCursorDefinition(ch))
                return ch;
            if (k == CXCursor_LinkageSpec || k == CXCursor_Namespace || k == CXCursor_UnexposedDecl)
                if (auto f = find_kf_solve(ch)) return f;
        }
        return std::nullopt;
    }

    bool keep_opaque_ = false;
    std::string source_;
    std::string first_opaque_;  ///< why the first opaque statement is not modelled

private:
    const Libclang& c_;
    CXTranslationUnit tu_;
    int nodes_ = 0;
    int depth_ = 0;  ///< loops around the statement being read
    std::map<std::string, CXCursor> helpers_;
    std::map<std::string, CXCursor> lambdas_;  ///< lambdas declared in kf_solve, inlined where called
    std::vector<std::map<std::string, ExprPtr>> params_;  ///< the inlined calls' arguments and declarations, innermost last
};

}  // namespace

std::optional<Block> read_kf_solve(const Libclang& clang, const std::string& path, const std::string& source,
                                   const std::string& header, const std::string& include_dir, std::string& why,
                                   bool keep_opaque) {
    std::string header_path = (include_dir.empty() ? std::string(".") : include_dir) + "/kf_task.h";
    std::vector<std::string> args = {"-x", "c++", "-std=c++17", "-fsyntax-only", "-w", "-I" + include_dir};
    if (!clang.resource_dir.empty()) {
        args.push_back("-resource-dir");
        args.push_back(clang.resource_dir);
    }
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    CXUnsavedFile files[2] = {{path.c_str(), source.c_str(), static_cast<unsigned long>(source.size())},
                              {header_path.c_str(), header.c_str(), static_cast<unsigned long>(header.size())}};
    CXIndex index = clang.createIndex(0, 0);
    CXTranslationUnit tu = nullptr;
    CXErrorCode err = clang.parseTranslationUnit2(index, path.c_str(), argv.data(), static_cast<int>(argv.size()),
                                                  files, 2, CXTranslationUnit_None, &tu);
    std::optional<Block> out;
    if (err != CXError_Success || !tu) {
        why = "libclang could not parse it (error " + std::to_string(static_cast<int>(err)) + ")";
    } else {
        Reader r(clang, tu);
        r.keep_opaque_ = keep_opaque;
        r.source_ = source;
        // The first error, if any: the body may not be what was written.
        for (unsigned i = 0, n = clang.getNumDiagnostics(tu); i < n && why.empty(); ++i) {
            CXDiagnostic d = clang.getDiagnostic(tu, i);
            if (clang.getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
                unsigned line = 0;
                CXFile file = nullptr;
                clang.getExpansionLocation(clang.getDiagnosticLocation(d), &file, &line, nullptr, nullptr);
                why = "it does not parse: line " + std::to_string(line) + ": " + r.str(clang.getDiagnosticSpelling(d));
            }
            clang.disposeDiagnostic(d);
        }
        if (why.empty()) {
            try {
                r.find_helpers(clang.getTranslationUnitCursor(tu));
                auto f = r.find_kf_solve(clang.getTranslationUnitCursor(tu));
                if (!f) {
                    why = "no definition of kf_solve";
                } else {
                    std::vector<CXCursor> ch = r.children(*f);
                    if (ch.empty() || clang.getCursorKind(ch.back()) != CXCursor_CompoundStmt)
                        why = "kf_solve has no body";
                    else
                        out = r.block(ch.back());
                    if (out && !r.first_opaque_.empty()) why = "kf_solve has " + r.first_opaque_ + ", kept as written";
                }
            } catch (const Unmodelled& e) {
                why = std::string("kf_solve has ") + e.what() + ", which the recogniser does not model";
            }
        }
        clang.disposeTranslationUnit(tu);
    }
    clang.disposeIndex(index);
    return out;
}

#else

std::optional<Block> read_kf_solve(const Libclang&, const std::string&, const std::string&, const std::string&,
                                   const std::string&, std::string& why, bool) {
    why = "built without clang-c/Index.h";
    return std::nullopt;
}

#endif

}  // namespace kf::nest
