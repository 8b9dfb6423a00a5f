#pragma once
/**
 * A small expression language shared by task manifests (shapes, work formulas) and tunable
 * constraints. Numbers, names, + - * / % (integer remainder), ** (power), comparisons
 * (== != < <= > >=), && || !, parentheses, and the functions min(a,b), max(a,b),
 * ceil_div(a,b), floor(a), ceil(a). Values are doubles; comparisons and logic give 0 or 1.
 */
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

namespace kf {

class Expr {
public:
    Expr() = default;
    /** Parses text; throws ExprError naming the column and what was expected. */
    static Expr parse(std::string_view text);

    /** Evaluates with the given variables; throws ExprError for an unknown name. */
    double eval(const std::map<std::string, double>& vars) const;
    /** The names the expression refers to (function names excluded). */
    std::set<std::string> names() const;
    const std::string& text() const { return text_; }
    bool empty() const { return !root_; }

    struct Node;

private:
    std::string text_;
    std::shared_ptr<const Node> root_;
};

}  // namespace kf
