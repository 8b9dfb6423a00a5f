// The computation expressions of a task manifest: parsed into a small tree, emitted as C for
// the op-class templates (float or double, host or CUDA math functions).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include "kf/computation.h"
#include "kf/error.h"

namespace kf {

struct ComputeExpr::Node {
    enum Kind { Number, Name, Neg, Not, Binary, Call, Index } kind = Number;
    double value = 0;
    std::string text;  ///< name, function name, operator or (Index) the tensor read
    std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodeP = std::shared_ptr<const ComputeExpr::Node>;
using Node = ComputeExpr::Node;

/** Function name -> arity. */
const std::map<std::string, int>& functions() {
    static const std::map<std::string, int> f = {
        {"exp", 1}, {"log", 1}, {"sqrt", 1}, {"rsqrt", 1}, {"tanh", 1}, {"erf", 1}, {"abs", 1}, {"sin", 1},
        {"cos", 1}, {"sigmoid", 1}, {"relu", 1}, {"pow", 2}, {"min", 2}, {"max", 2}, {"select", 3}, {"at", 3},
        {"row", 0}, {"col", 0}};
    return f;
}

/** The integer value of a constant offset (a number or a negated one), if it is one. */
std::optional<int> integer_constant(const ComputeExpr::Node& n) {
    if (n.kind == ComputeExpr::Node::Neg) {
        auto v = integer_constant(*n.args[0]);
        return v ? std::optional<int>(-*v) : std::nullopt;
    }
    if (n.kind != ComputeExpr::Node::Number || n.value != std::floor(n.value) || std::fabs(n.value) > 1024) return std::nullopt;
    return static_cast<int>(n.value);
}

class Parser {
public:
    explicit Parser(std::string_view t) : t_(t) {}

    NodeP parse() {
        NodeP n = logic_or();
        skip();
        if (pos_ != t_.size()) fail("unexpected '" + std::string(1, t_[pos_]) + "'");
        return n;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw ExprError("column " + std::to_string(pos_ + 1) + ": " + what);
    }
    void skip() {
        while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
    }
    bool eat(char c) {
        skip();
        if (pos_ < t_.size() && t_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    bool eat(std::string_view token) {
        skip();
        if (t_.substr(pos_, token.size()) != token) return false;
        pos_ += token.size();
        return true;
    }
    static NodeP binary(std::string op, NodeP a, NodeP b) {
        auto n = std::make_shared<Node>();
        n->kind = Node::Binary;
        n->text = std::move(op);
        n->args = {std::move(a), std::move(b)};
        return n;
    }
    NodeP logic_or() {
        NodeP n = logic_and();
        while (eat(std::string_view("||"))) n = binary("||", n, logic_and());
        return n;
    }
    NodeP logic_and() {
        NodeP n = comparison();
        while (eat(std::string_view("&&"))) n = binary("&&", n, comparison());
        return n;
    }
    /** One comparison at most: a < b < c is refused rather than read as C would. */
    NodeP comparison() {
        NodeP n = sum();
        for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"})
            if (eat(op)) {
                n = binary(std::string(op), n, sum());
                skip();
                for (std::string_view next : {"<", ">", "==", "!="})
                    if (t_.substr(pos_, next.size()) == next) fail("chained comparison: use && (a < b && b < c)");
                return n;
            }
        return n;
    }
    NodeP sum() {
        NodeP n = product();
        while (true) {
            if (eat('+')) n = binary("+", n, product());
            else if (eat('-')) n = binary("-", n, product());
            else return n;
        }
    }
    NodeP product() {
        NodeP n = unary();
        while (true) {
            if (eat('*')) n = binary("*", n, unary());
            else if (eat('/')) n = binary("/", n, unary());
            else if (eat('%')) n = binary("%", n, unary());
            else return n;
        }
    }
    NodeP unary() {
        if (eat('-')) {
            auto n = std::make_shared<Node>();
            n->kind = Node::Neg;
            n->args = {unary()};
            return n;
        }
        skip();
        if (t_.substr(pos_, 2) != "!=" && eat('!')) {
            auto n = std::make_shared<Node>();
            n->kind = Node::Not;
            n->args = {unary()};
            return n;
        }
        if (eat('+')) return unary();
        return primary();
    }
    NodeP primary() {
        skip();
        if (pos_ >= t_.size()) fail("expected a number, a name or '('");
        char c = t_[pos_];
        if (eat('(')) {
            NodeP n = logic_or();
            if (!eat(')')) fail("expected ')'");
            return n;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            std::string s(t_.substr(pos_));
            char* end = nullptr;
            double v = std::strtod(s.c_str(), &end);
            if (end == s.c_str()) fail("malformed number");
            pos_ += static_cast<std::size_t>(end - s.c_str());
            auto n = std::make_shared<Node>();
            n->kind = Node::Number;
            n->value = v;
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t start = pos_;
            while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_')) ++pos_;
            std::string name(t_.substr(start, pos_ - start));
            auto n = std::make_shared<Node>();
            n->text = name;
            if (eat('(')) {
                auto f = functions().find(name);
                if (f == functions().end()) {
                    pos_ = start;
                    fail("unknown function '" + name +
                         "' (exp, log, sqrt, rsqrt, tanh, erf, abs, sin, cos, sigmoid, relu, pow, min, max, select, at, row, "
                         "col)");
                }
                n->kind = Node::Call;
                if (!eat(')')) {
                    do n->args.push_back(logic_or());
                    while (eat(','));
                    if (!eat(')')) fail("expected ')' or ','");
                }
                if (static_cast<int>(n->args.size()) != f->second)
                    fail(name + "() takes " + std::to_string(f->second) + " argument(s)");
                if (name == "at") {
                    if (n->args[0]->kind != Node::Name) fail("at(x, di, dj): the first argument is a tensor's name");
                    if (!integer_constant(*n->args[1]) || !integer_constant(*n->args[2]))
                        fail("at(x, di, dj): the offsets are integer constants (e.g. at(x, -1, 0))");
                }
                return n;
            }
            if (eat('[')) {  // an index read w[i]
                n->kind = Node::Index;
                n->args = {sum()};
                if (!eat(']')) fail("expected ']'");
                return n;
            }
            if (name == "inf") {
                n->kind = Node::Number;
                n->value = INFINITY;
                return n;
            }
            n->kind = Node::Name;
            return n;
        }
        fail("unexpected '" + std::string(1, c) + "'");
    }

    std::string_view t_;
    std::size_t pos_ = 0;
};

void collect(const Node& n, std::set<std::string>& out) {
    if (n.kind == Node::Name) out.insert(n.text);
    for (const auto& a : n.args) collect(*a, out);
}

void collect_indexed(const Node& n, std::set<std::string>& out) {
    if (n.kind == Node::Index) out.insert(n.text);
    for (const auto& a : n.args) collect_indexed(*a, out);
}

void collect_index_names(const Node& n, bool inside, std::set<std::string>& out) {
    if (inside && n.kind == Node::Name) out.insert(n.text);
    for (const auto& a : n.args) collect_index_names(*a, inside || n.kind == Node::Index, out);
}

bool is_position(const Node& n) { return n.kind == Node::Call && (n.text == "row" || n.text == "col"); }

bool any_position(const Node& n) {
    if (is_position(n)) return true;
    for (const auto& a : n.args)
        if (any_position(*a)) return true;
    return false;
}

/** What is wrong with an index's expression (empty when nothing is). */
std::string index_problem(const Node& n) {
    switch (n.kind) {
        case Node::Number:
            if (std::isinf(n.value) || n.value != std::floor(n.value)) return "an index uses integer constants only";
            return {};
        case Node::Name: return {};
        case Node::Neg: return index_problem(*n.args[0]);
        case Node::Not: return "an index is an integer expression: no '!'";
        case Node::Index: return "an index may not read another tensor (" + n.text + "[...])";
        case Node::Binary:
            if (n.text != "+" && n.text != "-" && n.text != "*" && n.text != "/" && n.text != "%")
                return "an index uses + - * / % only, not '" + n.text + "'";
            for (const auto& a : n.args)
                if (auto p = index_problem(*a); !p.empty()) return p;
            return {};
        case Node::Call:
            if (is_position(n)) return {};
            return "an index uses sizes, integers and row(), col(), not " + n.text + "()";
    }
    return {};
}

/** Misuse outside an index: row(), col() and % belong in one; each index checked. */
std::string value_problem(const Node& n) {
    if (n.kind == Node::Index) {
        auto p = index_problem(*n.args[0]);
        return p.empty() ? p : n.text + "[...]: " + p;
    }
    if (is_position(n)) return n.text + "() is the cell's position, read in an index (e.g. w[row() % C])";
    if (n.kind == Node::Binary && n.text == "%") return "'%' is an integer remainder, used in an index only";
    for (const auto& a : n.args)
        if (auto p = value_problem(*a); !p.empty()) return p;
    return {};
}

double eval_index(const Node& n, const std::map<std::string, double>& vars, long long r, long long c) {
    auto arg = [&](std::size_t k) { return static_cast<long long>(eval_index(*n.args[k], vars, r, c)); };
    switch (n.kind) {
        case Node::Number: return n.value;
        case Node::Name: {
            auto it = vars.find(n.text);
            return it == vars.end() ? 0.0 : it->second;
        }
        case Node::Neg: return -eval_index(*n.args[0], vars, r, c);
        case Node::Binary: {
            const long long a = arg(0), b = arg(1);
            if (n.text == "+") return static_cast<double>(a + b);
            if (n.text == "-") return static_cast<double>(a - b);
            if (n.text == "*") return static_cast<double>(a * b);
            if (b == 0) return 0.0;  // the checks refuse it as out of range: 0 is a guess, not a value
            return static_cast<double>(n.text == "/" ? a / b : a % b);
        }
        case Node::Call: return static_cast<double>(n.text == "row" ? r : c);
        default: return 0.0;
    }
}

void collect_index_values(const Node& n, const std::map<std::string, double>& vars, long long r, long long c,
                          std::vector<std::pair<std::string, long long>>& out) {
    if (n.kind == Node::Index) out.emplace_back(n.text, static_cast<long long>(eval_index(*n.args[0], vars, r, c)));
    for (const auto& a : n.args) collect_index_values(*a, vars, r, c, out);
}

/**
 * An index as a long long C expression: names as they are, row() and col() through
 * `resolve`. On CUDA, / and % go through kf_idiv and kf_imod (ComputeExpr::cuda_index_helpers):
 * 64-bit division is a long software routine there, 32-bit far shorter.
 */
std::string emit_index(const Node& n, const std::function<std::string(const std::string&)>& resolve, bool cuda) {
    switch (n.kind) {
        case Node::Number: return std::to_string(static_cast<long long>(n.value)) + "LL";
        case Node::Name: return "((long long)" + n.text + ")";
        case Node::Neg: return "(-" + emit_index(*n.args[0], resolve, cuda) + ")";
        case Node::Binary: {
            const std::string a = emit_index(*n.args[0], resolve, cuda), b = emit_index(*n.args[1], resolve, cuda);
            if (cuda && (n.text == "/" || n.text == "%")) return std::string(n.text == "/" ? "kf_idiv(" : "kf_imod(") + a + ", " + b + ")";
            return "(" + a + " " + n.text + " " + b + ")";
        }
        case Node::Call: return "(" + resolve(n.text + "()") + ")";
        default: return "0";
    }
}

void collect_neighbours(const Node& n, std::set<ComputeExpr::Neighbour>& out) {
    if (n.kind == Node::Call && n.text == "at") {
        out.insert({n.args[0]->text, *integer_constant(*n.args[1]), *integer_constant(*n.args[2])});
        return;
    }
    for (const auto& a : n.args) collect_neighbours(*a, out);
}

std::string literal(double v, bool fp32) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return fp32 ? s + "f" : s;
}

std::string emit(const Node& n, const std::function<std::string(const std::string&)>& resolve, bool fp32, bool cuda) {
    auto arg = [&](std::size_t k) { return emit(*n.args[k], resolve, fp32, cuda); };
    const std::string f = fp32 ? "f" : "";
    switch (n.kind) {
        case Node::Number:
            if (std::isinf(n.value)) return fp32 ? "INFINITY" : "((double)INFINITY)";
            return literal(n.value, fp32);
        case Node::Name: return "(" + resolve(n.text) + ")";
        case Node::Index: return "(" + resolve(n.text + "[" + emit_index(*n.args[0], resolve, cuda) + "]") + ")";
        case Node::Neg: return "(-" + arg(0) + ")";
        case Node::Not: return "(!" + arg(0) + ")";
        case Node::Binary: return "(" + arg(0) + " " + n.text + " " + arg(1) + ")";
        case Node::Call: {
            const std::string& fn = n.text;
            const std::string one = literal(1, fp32), zero = literal(0, fp32);
            if (fn == "row" || fn == "col") return "(" + resolve(fn + "()") + ")";
            if (fn == "select") return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
            if (fn == "at")
                return "(" + resolve(n.args[0]->text + "@" + std::to_string(*integer_constant(*n.args[1])) + "," +
                                 std::to_string(*integer_constant(*n.args[2]))) + ")";
            if (fn == "sigmoid") return "(" + one + " / (" + one + " + exp" + f + "(-" + arg(0) + ")))";
            if (fn == "relu") return "fmax" + f + "(" + arg(0) + ", " + zero + ")";
            if (fn == "rsqrt") return cuda ? "rsqrt" + f + "(" + arg(0) + ")" : "(" + one + " / sqrt" + f + "(" + arg(0) + "))";
            if (fn == "abs") return "fabs" + f + "(" + arg(0) + ")";
            if (fn == "min") return "fmin" + f + "(" + arg(0) + ", " + arg(1) + ")";
            if (fn == "max") return "fmax" + f + "(" + arg(0) + ", " + arg(1) + ")";
            if (fn == "pow") return "pow" + f + "(" + arg(0) + ", " + arg(1) + ")";
            return fn + f + "(" + arg(0) + ")";
        }
    }
    return {};
}

using Rewrite = std::function<std::optional<std::string>(const Node&, const std::vector<std::string>&)>;

/**
 * The node in the language, fully parenthesised, its operands written first; `rewrite` (if
 * any) may replace a node's form, given its operands' forms.
 */
std::string rewritten(const Node& n, const Rewrite& rewrite) {
    std::vector<std::string> args;
    for (const auto& a : n.args) args.push_back(rewritten(*a, rewrite));
    if (rewrite)
        if (auto r = rewrite(n, args)) return *r;
    switch (n.kind) {
        case Node::Number: {
            if (std::isinf(n.value)) return "inf";
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.17g", n.value);
            return buf;
        }
        case Node::Name: return n.text;
        case Node::Index: return n.text + "[" + args[0] + "]";
        case Node::Neg: return "(-" + args[0] + ")";
        case Node::Not: return "(!" + args[0] + ")";
        case Node::Binary: return "(" + args[0] + " " + n.text + " " + args[1] + ")";
        case Node::Call: {
            std::string s = n.text + "(";
            for (std::size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
            return s + ")";
        }
    }
    return {};
}

/** The node's form (ComputeExpr::form). */
std::string form_of(const Node& n) { return rewritten(n, {}); }

/** Every node's form, each once. */
void collect_forms(const Node& n, std::set<std::string>& out) {
    out.insert(form_of(n));
    for (const auto& a : n.args) collect_forms(*a, out);
}

}  // namespace

std::string ComputeExpr::form() const { return root_ ? form_of(*root_) : std::string(); }

std::vector<ComputeExpr> ComputeExpr::subexpressions() const {
    std::set<std::string> forms;
    if (root_) collect_forms(*root_, forms);
    std::vector<ComputeExpr> out;
    for (const auto& f : forms) out.push_back(parse(f));
    std::stable_sort(out.begin(), out.end(), [](const ComputeExpr& a, const ComputeExpr& b) { return a.text_.size() > b.text_.size(); });
    return out;
}

bool ComputeExpr::contains(const ComputeExpr& sub) const {
    if (!root_ || !sub.root_) return false;
    std::set<std::string> forms;
    collect_forms(*root_, forms);
    return forms.count(sub.form()) > 0;
}

ComputeExpr ComputeExpr::replaced(const ComputeExpr& sub, const std::string& name) const {
    if (!root_ || !sub.root_) return *this;
    const std::string target = sub.form();
    return parse(rewritten(*root_, [&](const Node& n, const std::vector<std::string>&) -> std::optional<std::string> {
        if (form_of(n) == target) return name;
        return std::nullopt;
    }));
}

ComputeExpr ComputeExpr::with_reciprocals(const std::set<std::string>& names, const std::string& prefix) const {
    if (!root_) return *this;
    return parse(rewritten(*root_, [&](const Node& n, const std::vector<std::string>& args) -> std::optional<std::string> {
        if (n.kind == Node::Binary && n.text == "/" && n.args[1]->kind == Node::Name && names.count(n.args[1]->text))
            return "(" + args[0] + " * " + prefix + n.args[1]->text + ")";
        return std::nullopt;
    }));
}

ComputeExpr ComputeExpr::parse(std::string_view text) {
    ComputeExpr e;
    e.text_ = std::string(text);
    e.root_ = Parser(text).parse();
    return e;
}

std::set<std::string> ComputeExpr::names() const {
    std::set<std::string> out;
    if (root_) collect(*root_, out);
    return out;
}

std::set<ComputeExpr::Neighbour> ComputeExpr::neighbours() const {
    std::set<Neighbour> out;
    if (root_) collect_neighbours(*root_, out);
    return out;
}

std::set<std::string> ComputeExpr::indexed() const {
    std::set<std::string> out;
    if (root_) collect_indexed(*root_, out);
    return out;
}

std::set<std::string> ComputeExpr::index_names() const {
    std::set<std::string> out;
    if (root_) collect_index_names(*root_, false, out);
    return out;
}

bool ComputeExpr::uses_position() const { return root_ && any_position(*root_); }

std::string ComputeExpr::index_misuse() const { return root_ ? value_problem(*root_) : std::string(); }

std::vector<std::pair<std::string, long long>> ComputeExpr::index_values(const std::map<std::string, double>& vars, long long r,
                                                                        long long c) const {
    std::vector<std::pair<std::string, long long>> out;
    if (root_) collect_index_values(*root_, vars, r, c, out);
    return out;
}

const char* ComputeExpr::cuda_index_helpers() {
    return "// Index division: 32-bit where both operands are non-negative and below 2^32 (as C's otherwise).\n"
           "__device__ __forceinline__ long long kf_idiv(long long a, long long b) {\n"
           "    return ((a | b) >> 32) == 0 ? static_cast<long long>(static_cast<unsigned>(a) / static_cast<unsigned>(b)) : a / b;\n"
           "}\n"
           "__device__ __forceinline__ long long kf_imod(long long a, long long b) {\n"
           "    return ((a | b) >> 32) == 0 ? static_cast<long long>(static_cast<unsigned>(a) % static_cast<unsigned>(b)) : a % b;\n"
           "}\n";
}

bool ComputeExpr::is_name() const { return root_ && root_->kind == Node::Name; }

std::string ComputeExpr::to_c(const std::function<std::string(const std::string&)>& resolve, bool fp32, bool cuda) const {
    return root_ ? kf::emit(*root_, resolve, fp32, cuda) : std::string();
}

const std::vector<std::string>& computation_ops() {
    static const std::vector<std::string> ops = {"elementwise", "row_reduce", "row_normalize", "softmax", "matvec", "transpose", "gemm",
                                                "row_scan", "stencil", "histogram", "col_reduce", "col_scan"};
    return ops;
}

const std::vector<std::string>& computation_combines() {
    static const std::vector<std::string> c = {"sum", "max", "min", "prod"};
    return c;
}

std::string Computation::summary() const {
    if (op == "transpose") return "transpose of " + rows + " x " + cols + ": " + output + "[c, r] = " + map.text();
    if (op == "row_scan" && !stats.empty())
        return "row_scan over " + rows + " x " + cols + ": " + stats[0].name + " = inclusive " + stats[0].combine + " of (" +
               stats[0].map.text() + ") along the row; " + output + " = " + map.text();
    if (op == "col_scan" && !stats.empty())
        return "col_scan over " + rows + " x " + cols + ": " + stats[0].name + " = inclusive " + stats[0].combine + " of (" +
               stats[0].map.text() + ") down the column; " + output + " = " + map.text();
    if (op == "stencil") {
        std::string s = "stencil over " + rows + " x " + cols + " (radius " + std::to_string(radius()) + "): " + output + " = " + map.text();
        if (pad == "zero") return s + "; neighbours outside read as 0";
        if (pad == "clamp") return s + "; neighbours outside read at the nearest cell inside";
        return s + "; within " + std::to_string(radius()) + " of an edge " + output + " = " + border.text();
    }
    if (op == "histogram") return "histogram of " + bins + " bins: " + output + "[" + map.text() + "] += 1";
    if (op == "gemm" && !stats.empty())
        return "gemm " + rows + " x " + cols + " over " + inner + ": " + stats[0].name + " = sum(" + stats[0].map.text() + "); " +
               output + " = " + map.text();
    std::string s = op + (rows.empty() ? std::string(" over the output's elements") : " over " + rows + " x " + cols) + ":";
    for (const auto& st : stats) s += " " + st.name + " = " + st.combine + "(" + st.map.text() + ");";
    s += " " + output + " = " + (per_row_output() || per_col_output() ? epilogue.text() : map.text());
    return s;
}

}  // namespace kf
