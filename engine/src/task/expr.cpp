#include "kf/expr.h"

#include <cctype>
#include <cmath>
#include <vector>

#include "kf/error.h"

namespace kf {

struct Expr::Node {
    enum Kind { Number, Name, Unary, Binary, Call } kind = Number;
    double number = 0;
    std::string name;  // variable, operator or function name
    std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    NodePtr parse() {
        auto n = parse_or();
        skip_space();
        if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
        return n;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw ExprError("in expression '" + std::string(s_) + "' at column " + std::to_string(pos_ + 1) +
                        ": " + what);
    }
    void skip_space() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool accept(std::string_view op) {
        skip_space();
        if (s_.substr(pos_, op.size()) == op) {
            pos_ += op.size();
            return true;
        }
        return false;
    }
    static NodePtr binary(std::string op, NodePtr a, NodePtr b) {
        auto n = std::make_shared<Expr::Node>();
        n->kind = Expr::Node::Binary;
        n->name = std::move(op);
        n->args = {std::move(a), std::move(b)};
        return n;
    }
    NodePtr parse_or() {
        auto l = parse_and();
        while (accept("||")) l = binary("||", l, parse_and());
        return l;
    }
    NodePtr parse_and() {
        auto l = parse_cmp();
        while (accept("&&")) l = binary("&&", l, parse_cmp());
        return l;
    }
    NodePtr parse_cmp() {
        auto l = parse_add();
        for (;;) {
            std::string op;
            for (std::string_view c : {"==", "!=", "<=", ">=", "<", ">"})
                if (accept(c)) {
                    op = c;
                    break;
                }
            if (op.empty()) return l;
            l = binary(op, l, parse_add());
        }
    }
    NodePtr parse_add() {
        auto l = parse_mul();
        for (;;) {
            if (accept("+")) l = binary("+", l, parse_mul());
            else if (accept("-")) l = binary("-", l, parse_mul());
            else return l;
        }
    }
    NodePtr parse_mul() {
        auto l = parse_unary();
        for (;;) {
            skip_space();
            if (s_.substr(pos_, 2) == "**") return l;  // handled in parse_pow
            if (accept("*")) l = binary("*", l, parse_unary());
            else if (accept("/")) l = binary("/", l, parse_unary());
            else if (accept("%")) l = binary("%", l, parse_unary());
            else return l;
        }
    }
    NodePtr parse_unary() {
        if (accept("-") || accept("!")) {
            auto n = std::make_shared<Expr::Node>();
            n->kind = Expr::Node::Unary;
            n->name = std::string(1, s_[pos_ - 1]);
            n->args = {parse_unary()};
            return n;
        }
        if (accept("+")) return parse_unary();
        return parse_pow();
    }
    NodePtr parse_pow() {
        auto base = parse_primary();
        if (accept("**")) return binary("**", base, parse_unary());
        return base;
    }
    NodePtr parse_primary() {
        skip_space();
        if (pos_ >= s_.size()) fail("expected a number, a name or '('");
        char c = s_[pos_];
        if (c == '(') {
            ++pos_;
            auto n = parse_or();
            if (!accept(")")) fail("expected ')'");
            return n;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            std::size_t start = pos_;
            while (pos_ < s_.size() &&
                   (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                    ((s_[pos_] == '+' || s_[pos_] == '-') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
                ++pos_;
            std::string tok(s_.substr(start, pos_ - start));
            char* end = nullptr;
            double v = std::strtod(tok.c_str(), &end);
            if (end != tok.c_str() + tok.size()) {
                pos_ = start;
                fail("malformed number '" + tok + "'");
            }
            auto n = std::make_shared<Expr::Node>();
            n->number = v;
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t start = pos_;
            while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
                ++pos_;
            auto n = std::make_shared<Expr::Node>();
            n->name = std::string(s_.substr(start, pos_ - start));
            if (accept("(")) {
                n->kind = Expr::Node::Call;
                if (!accept(")")) {
                    do n->args.push_back(parse_or());
                    while (accept(","));
                    if (!accept(")")) fail("expected ')' after the arguments of " + n->name);
                }
                static const std::map<std::string, std::size_t> arity = {
                    {"min", 2}, {"max", 2}, {"ceil_div", 2}, {"floor", 1}, {"ceil", 1}};
                auto it = arity.find(n->name);
                if (it == arity.end()) fail("unknown function '" + n->name + "'");
                if (it->second != n->args.size())
                    fail(n->name + " takes " + std::to_string(it->second) + " argument(s)");
            } else {
                n->kind = Expr::Node::Name;
            }
            return n;
        }
        fail("unexpected '" + std::string(1, c) + "'");
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

double eval_node(const Expr::Node& n, const std::map<std::string, double>& vars, const std::string& text) {
    switch (n.kind) {
    case Expr::Node::Number: return n.number;
    case Expr::Node::Name: {
        auto it = vars.find(n.name);
        if (it == vars.end()) throw ExprError("in expression '" + text + "': unknown name '" + n.name + "'");
        return it->second;
    }
    case Expr::Node::Unary: {
        double a = eval_node(*n.args[0], vars, text);
        return n.name == "-" ? -a : (a == 0 ? 1 : 0);
    }
    case Expr::Node::Call: {
        double a = eval_node(*n.args[0], vars, text);
        if (n.name == "floor") return std::floor(a);
        if (n.name == "ceil") return std::ceil(a);
        double b = eval_node(*n.args[1], vars, text);
        if (n.name == "min") return std::min(a, b);
        if (n.name == "max") return std::max(a, b);
        if (b == 0) throw ExprError("in expression '" + text + "': division by zero in ceil_div");
        return std::ceil(a / b);
    }
    case Expr::Node::Binary: break;
    }
    const std::string& op = n.name;
    double a = eval_node(*n.args[0], vars, text);
    if (op == "&&") return (a != 0 && eval_node(*n.args[1], vars, text) != 0) ? 1 : 0;
    if (op == "||") return (a != 0 || eval_node(*n.args[1], vars, text) != 0) ? 1 : 0;
    double b = eval_node(*n.args[1], vars, text);
    if (op == "+") return a + b;
    if (op == "-") return a - b;
    if (op == "*") return a * b;
    if (op == "/" || op == "%") {
        if (b == 0) throw ExprError("in expression '" + text + "': division by zero");
        return op == "/" ? a / b : std::fmod(a, b);
    }
    if (op == "**") return std::pow(a, b);
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    return a >= b;
}

void collect(const Expr::Node& n, std::set<std::string>& out) {
    if (n.kind == Expr::Node::Name) out.insert(n.name);
    for (const auto& a : n.args) collect(*a, out);
}

}  // namespace

Expr Expr::parse(std::string_view text) {
    Expr e;
    e.text_ = std::string(text);
    e.root_ = Parser(e.text_).parse();
    return e;
}

double Expr::eval(const std::map<std::string, double>& vars) const {
    if (!root_) throw ExprError("empty expression");
    return eval_node(*root_, vars, text_);
}

std::set<std::string> Expr::names() const {
    std::set<std::string> out;
    if (root_) collect(*root_, out);
    return out;
}

}  // namespace kf
