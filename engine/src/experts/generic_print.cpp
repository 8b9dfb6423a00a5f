// The loop-nest model printed back as C++ (host) or CUDA device code: the reference's own
// statements, with its math calls under names both dialects know and every loop variable a
// long long, so that an index the reference widened by a cast stays wide.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "generic_parts.h"

namespace kf::generic {

namespace {

std::string number(const Expr& e) {
    if (std::isinf(e.value)) {
        std::string inf = e.f32 ? "INFINITY" : "((double)INFINITY)";
        return e.value > 0 ? inf : "(-" + inf + ")";
    }
    if (e.integer) {
        const long long v = static_cast<long long>(e.value);
        std::string s = std::to_string(v);
        if (v > 2147483647LL || v < -2147483647LL) s += "LL";
        return v < 0 ? "(" + s + ")" : s;
    }
    char buf[48];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, e.value);
        if (e.f32 ? std::strtof(buf, nullptr) == static_cast<float>(e.value) : std::strtod(buf, nullptr) == e.value) break;
    }
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (e.f32) s += "f";
    return e.value < 0 ? "(" + s + ")" : s;
}

}  // namespace

std::string Printer::expr(const ExprPtr& e) const {
    if (auto r = replace.find(e.get()); r != replace.end()) return r->second;
    std::string out;
    switch (e->kind) {
        case Expr::Kind::Number:
            out = number(*e);
            break;
        case Expr::Kind::Name: {
            auto r = rename.find(e->text);
            out = r == rename.end() ? e->text : r->second;
            break;
        }
        case Expr::Kind::Index: {
            auto r = rename.find(e->text);
            out = (r == rename.end() ? e->text : r->second) + "[" + expr(e->args[0]) + "]";
            break;
        }
        case Expr::Kind::Unary:
            out = "(" + e->text + expr(e->args[0]) + ")";
            break;
        case Expr::Kind::Binary:
            out = "(" + expr(e->args[0]) + " " + e->text + " " + expr(e->args[1]) + ")";
            break;
        case Expr::Kind::Select:
            out = "(" + expr(e->args[0]) + " ? " + expr(e->args[1]) + " : " + expr(e->args[2]) + ")";
            break;
        case Expr::Kind::Cast:  // a floating-point value truncated to an integer, as the reference wrote it
            out = "static_cast<" + e->text + ">(" + expr(e->args[0]) + ")";
            break;
        case Expr::Kind::Call: {
            std::string f = e->text;
            if (f == "max" || f == "min") {
                f = "kf_" + f;
            } else {
                if (f == "abs" && !e->integer) f = "fabs";  // std::abs of an integer stays an integer
                if (dialect == Dialect::Host) f = "std::" + f;
            }
            out = f + "(";
            for (std::size_t i = 0; i < e->args.size(); ++i) out += (i ? ", " : "") + expr(e->args[i]);
            out += ")";
            break;
        }
    }
    // 64-bit index arithmetic where the reference widened an operand (`(size_t)idx[j] * d`).
    if (!e->widened.empty() && e->kind != Expr::Kind::Number) out = "static_cast<" + e->widened + ">(" + out + ")";
    if (e->converted && !e->cast.empty()) out = "static_cast<" + e->cast + ">(" + out + ")";
    return out;
}

std::string Printer::declaration(const Stmt& s) const {
    const std::string& t = s.type_name;
    if (s.type == Stmt::Type::Array) {
        // A C array (`float [9]`): the element type, then the length from the model.
        std::string elem = t.substr(0, t.find('['));
        while (!elem.empty() && elem.back() == ' ') elem.pop_back();
        if (t.find('[') == std::string::npos) {  // a std::vector<T>: zero-filled, its length at run time
            return t + " " + s.var + "(" + expr(s.init) + ");";
        }
        std::string values;
        for (const auto& v : s.elements) values += (values.empty() ? "" : ", ") + expr(v);
        return elem + " " + s.var + "[" + expr(s.init) + "] = {" + values + "};";
    }
    std::string type = t;
    if (s.type == Stmt::Type::Integer && type != "bool") type = "long long";
    return type + " " + s.var + (s.init ? " = " + expr(s.init) : std::string()) + ";";
}

std::string Printer::loop_header(const Stmt& loop, const std::string& start_override,
                                 const std::string& step_override) const {
    const std::string start = start_override.empty() ? expr(loop.start) : start_override;
    const std::string step = step_override.empty() ? std::to_string(loop.step) : step_override;
    return "for (long long " + loop.var + " = " + start + "; " + loop.var + (loop.step > 0 ? " < " : " > ") +
           expr(loop.bound) + "; " + loop.var + " += " + step + ")";
}

std::string Printer::stmt(const Stmt& s, const std::string& indent) const {
    switch (s.kind) {
        case Stmt::Kind::For:
            return indent + loop_header(s) + " {\n" + block(s.body, indent + "    ") + indent + "}\n";
        case Stmt::Kind::Decl:
            return indent + declaration(s) + "\n";
        case Stmt::Kind::Assign:
            return indent + expr(s.target) + " " + s.op + " " + expr(s.value) + ";\n";
        case Stmt::Kind::If: {
            std::string out = indent + "if (" + expr(s.cond) + ") {\n" + block(s.body, indent + "    ") + indent + "}";
            if (!s.else_body.empty()) out += " else {\n" + block(s.else_body, indent + "    ") + indent + "}";
            return out + "\n";
        }
        case Stmt::Kind::Return:
            return indent + "return;\n";
        case Stmt::Kind::Continue:
            return indent + "continue;\n";
        case Stmt::Kind::Break:
            return indent + "break;\n";
        case Stmt::Kind::Opaque: {
            std::string text = s.text;
            while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
            if (text.empty() || (text.back() != ';' && text.back() != '}')) text += ";";
            return indent + "// kept as written (line " + std::to_string(s.line) + ")\n" + indent + text + "\n";
        }
    }
    return {};
}

std::string Printer::block(const Block& b, const std::string& indent) const {
    std::string out;
    for (const Stmt& s : b) out += stmt(s, indent);
    return out;
}

std::string trip_count(const Printer& p, const Stmt& loop) {
    const std::string s = p.expr(loop.start), b = p.expr(loop.bound);
    const long long step = loop.step;
    if (step > 0)
        return "kf_trips(static_cast<long long>(" + s + "), static_cast<long long>(" + b + "), " + std::to_string(step) + "LL)";
    return "kf_trips(-static_cast<long long>(" + s + "), -static_cast<long long>(" + b + "), " + std::to_string(-step) + "LL)";
}

std::string helpers(Dialect d) {
    const std::string q = d == Dialect::Cuda ? "__host__ __device__ __forceinline__ " : "static inline ";
    return "// std::max and std::min as the reference wrote them (the first when neither is less).\n"
           "template <class A, class B> " + q + "auto kf_max(A a, B b) -> decltype(a + b) { return a < b ? b : a; }\n"
           "template <class A, class B> " + q + "auto kf_min(A a, B b) -> decltype(a + b) { return b < a ? b : a; }\n"
           "// The iterations of a loop from s while below b by step (none when b <= s).\n" +
           q + "long long kf_trips(long long s, long long b, long long step) { return b > s ? (b - s + step - 1) / step : 0; }\n\n";
}

std::string reference_functions(const Program& prog, Dialect d) {
    if (prog.helpers.empty()) return {};
    std::string out = "// The reference's own functions, called by the statements kept as written.\n";
    for (const auto& h : prog.helpers) out += (d == Dialect::Cuda ? "__device__ " : "") + h.text + "\n\n";
    return out;
}

std::string identity_of(const std::string& combine, const std::string& type) {
    const bool integer = type.find("float") == std::string::npos && type.find("double") == std::string::npos;
    if (combine == "sum") return "static_cast<" + type + ">(0)";
    if (combine == "prod") return "static_cast<" + type + ">(1)";
    if (integer)
        return combine == "max" ? "std::numeric_limits<" + type + ">::lowest()" : "std::numeric_limits<" + type + ">::max()";
    return combine == "max" ? "static_cast<" + type + ">(-INFINITY)" : "static_cast<" + type + ">(INFINITY)";
}

std::string combine_into(const std::string& combine, const std::string& a, const std::string& b) {
    if (combine == "sum") return a + " += " + b + ";";
    if (combine == "prod") return a + " *= " + b + ";";
    if (combine == "max") return a + " = " + a + " < " + b + " ? " + b + " : " + a + ";";
    return a + " = " + b + " < " + a + " ? " + b + " : " + a + ";";
}

}  // namespace kf::generic
