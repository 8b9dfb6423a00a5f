// A token-level recogniser of simple reference loops (kf/recognise.h): elementwise loops and
// rows made of reductions, scalar definitions and a per-row or per-element output; and the
// choice between it and the AST recogniser (recognise_clang.cpp).
#include "kf/recognise.h"

#include <cctype>
#include <regex>

#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/paths.h"
#include "libclang.h"
#include "recognise_parts.h"

namespace kf {

namespace {

using nlohmann::json;

/** The reference cut into tokens, comments and preprocessor lines dropped, joined by spaces. */
std::vector<std::string> tokenize(const std::string& src) {
    std::vector<std::string> toks;
    std::size_t i = 0, n = src.size();
    bool line_start = true;
    while (i < n) {
        char ch = src[i];
        if (ch == '\n') {
            line_start = true;
            ++i;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(ch))) {
            ++i;
            continue;
        }
        if (line_start && ch == '#') {  // preprocessor line (with continuations)
            while (i < n && src[i] != '\n') i += (src[i] == '\\' && i + 1 < n) ? 2 : 1;
            continue;
        }
        line_start = false;
        if (src.compare(i, 2, "//") == 0) {
            while (i < n && src[i] != '\n') ++i;
            continue;
        }
        if (src.compare(i, 2, "/*") == 0) {
            std::size_t e = src.find("*/", i + 2);
            i = e == std::string::npos ? n : e + 2;
            continue;
        }
        std::size_t start = i;
        if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
            while (i < n && (std::isalnum(static_cast<unsigned char>(src[i])) || src[i] == '_')) ++i;
        } else if (std::isdigit(static_cast<unsigned char>(ch)) || (ch == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
            while (i < n && (std::isalnum(static_cast<unsigned char>(src[i])) || src[i] == '.' ||
                             ((src[i] == '-' || src[i] == '+') && (src[i - 1] == 'e' || src[i - 1] == 'E'))))
                ++i;
        } else {
            static const char* ops[] = {"::", "++", "--", "+=", "-=", "*=", "/=", "<=", ">=", "==", "!=", "&&", "||", "->"};
            i += 1;
            for (const char* op : ops)
                if (src.compare(start, 2, op) == 0) i = start + 2;
        }
        toks.push_back(src.substr(start, i - start));
    }
    return toks;
}

bool is_type_word(const std::string& t) {
    return t == "long" || t == "int" || t == "unsigned" || t == "size_t" || t == "int64_t" || t == "float" ||
           t == "double" || t == "const" || t == "std" || t == "::";
}

/** Canonical text of tokens: casts and std:: dropped, f-suffixes and float math names plain. */
std::string canonical(const std::vector<std::string>& in) {
    std::vector<std::string> t;
    for (std::size_t k = 0; k < in.size(); ++k) {
        // ( type ) casts
        if (in[k] == "(") {
            std::size_t j = k + 1;
            while (j < in.size() && is_type_word(in[j])) ++j;
            if (j > k + 1 && j < in.size() && in[j] == ")") {
                k = j;
                continue;
            }
        }
        if (in[k] == "static_cast" && k + 1 < in.size() && in[k + 1] == "<") {
            std::size_t j = k + 2;
            while (j < in.size() && in[j] != ">") ++j;
            k = j;
            continue;
        }
        if (in[k] == "std" && k + 1 < in.size() && in[k + 1] == "::") {
            ++k;
            continue;
        }
        std::string s = in[k];
        if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) && (s.back() == 'f' || s.back() == 'F')) s.pop_back();
        static const std::map<std::string, std::string> names = {
            {"expf", "exp"},   {"logf", "log"},   {"sqrtf", "sqrt"}, {"rsqrtf", "rsqrt"}, {"tanhf", "tanh"},
            {"erff", "erf"},   {"fabsf", "abs"},  {"fabs", "abs"},   {"fmaxf", "max"},    {"fmax", "max"},
            {"fminf", "min"},  {"fmin", "min"},   {"powf", "pow"},   {"sinf", "sin"},     {"cosf", "cos"}};
        if (auto it = names.find(s); it != names.end()) s = it->second;
        t.push_back(s);
    }
    // ( name ) -> name, where the parentheses are not a call's (left over from casts).
    std::vector<std::string> u;
    for (std::size_t k = 0; k < t.size(); ++k) {
        bool word = k + 2 < t.size() && t[k] == "(" && t[k + 2] == ")" &&
                    (std::isalnum(static_cast<unsigned char>(t[k + 1][0])) || t[k + 1][0] == '_');
        bool call = !u.empty() && (std::isalpha(static_cast<unsigned char>(u.back()[0])) || u.back()[0] == '_');
        if (word && !call) {
            u.push_back(t[k + 1]);
            k += 2;
            continue;
        }
        u.push_back(t[k]);
    }
    std::string out;
    for (const auto& s : u) out += s + " ";
    return out;
}

const std::string kType = "(?:const )?(?:unsigned )?(?:long long|long|int|size_t|int64_t|auto) ";
const std::string kStmt = "((?:(?!; ).)+)";  // up to the next ';' token

struct RowContext {
    std::string r, c, rows, cols;
    std::map<std::string, std::string> aliases;  // row pointer -> tensor
};

/**
 * Rewrites the tensor reads of an expression: x[r * cols + c] -> x, w[c] -> w, b[r] -> b;
 * with c0, the column is 0 (for an accumulator started at the first element). Empty on failure.
 */
std::string rewrite_reads(const std::string& e, const RowContext& k, bool c0, std::string& why) {
    static const std::regex read("(\\w+) \\[ ((?:(?!\\] ).)*)\\] ");
    std::string out;
    auto begin = std::sregex_iterator(e.begin(), e.end(), read);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        out += e.substr(last, static_cast<std::size_t>(m.position(0)) - last);
        last = static_cast<std::size_t>(m.position(0) + m.length(0));
        std::string name = m[1], idx = m[2];
        std::string col = c0 ? "0 " : k.c + " ";
        std::vector<std::string> full = {k.r + " * " + k.cols + " + " + col, k.c + " + " + k.r + " * " + k.cols + " ",
                                         k.r + " * " + k.cols + " "};
        bool is_full = idx == full[0] || (!c0 && idx == full[1]) || (c0 && idx == full[2]);
        if (auto a = k.aliases.find(name); a != k.aliases.end()) {
            if (idx != col) {
                why = "reads " + name + "[" + idx + "] (a row pointer indexed by something else than the column)";
                return {};
            }
            out += a->second + " ";
        } else if (is_full || idx == col || (!k.r.empty() && idx == k.r + " ")) {
            out += name + " ";
        } else {
            why = "reads " + name + "[" + idx + "], not [r * cols + c], [c] or [r]";
            return {};
        }
    }
    out += e.substr(last);
    return out;
}

std::string identity_of(const std::string& combine, const std::string& init) {
    static const std::regex zero("(0|0\\.0*|0\\.0*e0) ");
    static const std::regex one("(1|1\\.0*) ");
    static const std::regex ninf("- (INFINITY|FLT_MAX|DBL_MAX|HUGE_VALF|HUGE_VAL|numeric_limits < \\w+ > :: (infinity|max) \\( \\)) ");
    static const std::regex pinf("(INFINITY|FLT_MAX|DBL_MAX|HUGE_VALF|HUGE_VAL|numeric_limits < \\w+ > :: (infinity|max) \\( \\)) ");
    if (combine == "sum") return std::regex_match(init, zero) ? "ok" : "";
    if (combine == "prod") return std::regex_match(init, one) ? "ok" : "";
    if (combine == "max") return std::regex_match(init, ninf) ? "ok" : "";
    return std::regex_match(init, pinf) ? "ok" : "";
}

/** Substitutes scalar definitions (let x = e) into an expression, innermost last. */
std::string substitute(std::string e, const std::vector<std::pair<std::string, std::string>>& lets) {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        std::regex word("(^| )" + it->first + " ");
        e = std::regex_replace(e, word, "$1( " + it->second + ") ");
    }
    return e;
}

/** The JSON's strings without the spaces the token texts end with ("x " -> "x"). */
json trimmed(json j) {
    if (j.is_string()) {
        std::string s = j.get<std::string>();
        while (!s.empty() && s.back() == ' ') s.pop_back();
        return s;
    }
    for (auto& v : j) v = trimmed(v);
    return j;
}

Recognition finish(const Task& task, const json& j, const std::string& file, const std::string& shape) {
    return derived(task, trimmed(j), file, "", shape);
}

Recognition recognise_rows(const Task& task, const std::smatch& outer, const std::string& file) {
    RowContext k;
    k.r = outer[1];
    k.rows = outer[2];
    std::string body = outer[3];
    std::vector<std::pair<std::string, std::string>> lets;
    json stats = json::array();
    std::string why;
    const std::string inc = "(?:\\+\\+ (\\w+) |(\\w+) \\+\\+ |(\\w+) \\+= 1 )";
    std::regex alias("(?:const )?(?:float|double) \\* (?:const )?(\\w+) = (\\w+) \\+ " + k.r + " \\* (\\w+) ; ");
    std::regex decl("(?:const )?(float|double) (\\w+) = " + kStmt + "; ");
    std::regex loop("for \\( " + kType + "(\\w+) = (0|1) ; (\\w+) < (\\w+) ; " + inc + "\\) (\\{ )?");
    std::smatch m;
    while (true) {
        if (std::regex_search(body, m, alias, std::regex_constants::match_continuous)) {
            k.aliases[m[1]] = m[2];
            if (k.cols.empty()) k.cols = m[3];
            body = m.suffix();
            continue;
        }
        if (std::regex_search(body, m, decl, std::regex_constants::match_continuous)) {
            std::string var = m[2], init = m[3];
            std::string after = m.suffix();
            std::smatch l;
            if (std::regex_search(after, l, loop, std::regex_constants::match_continuous)) {
                // A reduction: T acc = init; for (c = 0|1; c < cols; ++c) acc op= e;
                k.c = l[1];
                if (k.cols.empty()) k.cols = l[4];
                if (l[3] != k.c || l[4] != k.cols) return cannot_derive(file, "the inner loop is not over the columns 0..cols");
                std::string inner = l.suffix();
                bool braces = l[8].matched;
                std::smatch s;
                std::string combine, e;
                std::regex upd("(" + var + " \\+= |" + var + " \\*= |" + var + " = (max|min) \\( " + var + " , )" + kStmt + "; " +
                               (braces ? "\\} " : ""));
                if (!std::regex_search(inner, s, upd, std::regex_constants::match_continuous)) {
                    // Not a reduction into var: a scalar definition followed by another loop.
                    lets.emplace_back(var, init);
                    body = after;
                    continue;
                }
                std::string op = s[1];
                e = s[3];
                if (op.find("+=") != std::string::npos) combine = "sum";
                else if (op.find("*=") != std::string::npos) combine = "prod";
                else {
                    combine = s[2];
                    e = e.substr(0, e.size() - 2);  // the closing ") "
                }
                std::string map = rewrite_reads(substitute(e, lets), k, false, why);
                if (map.empty()) return cannot_derive(file, why);
                if (l[2] == "0") {
                    if (identity_of(combine, init).empty())
                        return cannot_derive(file, var + " starts at " + init + "which is not the identity of " + combine);
                } else {
                    std::string first = rewrite_reads(substitute(init, lets), k, true, why);
                    if (first.empty() || first != map)
                        return cannot_derive(file, var + " starts at " + init + "and the loop from 1: not the row's first element");
                }
                stats.push_back({{"name", var}, {"combine", combine}, {"map", map}});
                body = s.suffix();
                continue;
            }
            lets.emplace_back(var, init);
            body = after;
            continue;
        }
        break;
    }
    if (stats.empty()) return cannot_derive(file, "no reduction over the row (T acc = ...; for (c ...) acc += ...;)");
    std::string out_name;
    for (const auto& t : task.tensors)
        if (t.role == TensorRole::Output) out_name = t.name;
    // The output: y[r] = e (a row reduction), or for (c ...) y[r * cols + c] = e (a normalisation).
    std::regex per_row("(\\w+) \\[ " + k.r + " \\] = " + kStmt + "; $");
    std::regex per_elem("for \\( " + kType + "(\\w+) = 0 ; (\\w+) < (\\w+) ; " + inc + "\\) (\\{ )?(\\w+) \\[ ((?:(?!\\] ).)*)\\] = " +
                        kStmt + "; (\\} )?$");
    json j;
    std::string shape;
    if (std::regex_match(body, m, per_row)) {
        std::string epi = rewrite_reads(substitute(m[2], lets), k, false, why);
        if (epi.empty()) return cannot_derive(file, why);
        j = {{"op", "row_reduce"}, {"epilogue", epi}, {"output", std::string(m[1])}};
        shape = "a row reduction";
    } else if (std::regex_match(body, m, per_elem)) {
        k.c = m[1];
        if (m[2] != k.c || (m[3] != k.cols && !k.cols.empty())) return cannot_derive(file, "the output loop is not over the columns 0..cols");
        std::string idx = m[9];
        if (idx != k.r + " * " + k.cols + " + " + k.c + " " && !(k.aliases.count(m[8]) && idx == k.c + " "))
            return cannot_derive(file, "the output is written at [" + idx + "], not [r * cols + c]");
        std::string map = rewrite_reads(substitute(m[10], lets), k, false, why);
        if (map.empty()) return cannot_derive(file, why);
        std::string out = k.aliases.count(m[8]) ? k.aliases.at(m[8]) : std::string(m[8]);
        j = {{"op", stats.size() > 1 ? "softmax" : "row_normalize"}, {"map", map}, {"output", out}};
        shape = "reductions over each row, then every element of the row";
    } else {
        return cannot_derive(file, "after the reductions, neither y[r] = ... nor a loop writing y[r * cols + c]");
    }
    if (k.cols.empty()) return cannot_derive(file, "no column count");
    j["layout"] = {{"rows", k.rows}, {"cols", k.cols}};
    j["stats"] = stats;
    return finish(task, j, file, shape);
}

}  // namespace

Recognition cannot_derive(const std::string& file, const std::string& why) {
    return {std::nullopt, "cannot derive the computation from " + file + ": " + why};
}

Recognition derived(const Task& task, const json& j, const std::string& file, const std::string& how, const std::string& shape) {
    try {
        Computation c = computation_from_json(j, task);
        c.origin = "derived from " + file + how + ": " + shape;
        return {c, {}};
    } catch (const TaskError& e) {
        // The task's file names where a computation written in it is wrong; this one was
        // derived from the reference, so the field and the reason are what the user needs.
        return cannot_derive(file, "the loops read as " + j.dump() + " but the derived " +
                                       (e.field().empty() ? std::string() : e.field() + ": ") + e.reason());
    } catch (const Error& e) {
        return cannot_derive(file, "the loops read as " + j.dump() + " but " + e.what());
    }
}

Recognition recognise_tokens(const Task& task, const std::string& source, const std::string& file) {
    std::vector<std::string> toks = tokenize(source);
    // The body of kf_solve.
    std::size_t at = 0;
    while (at < toks.size() && toks[at] != "kf_solve") ++at;
    std::size_t open = at;
    while (open < toks.size() && toks[open] != "{" && toks[open] != ";") ++open;
    while (open < toks.size() && toks[open] == ";") {  // a declaration first: find the definition
        at = open;
        while (at < toks.size() && toks[at] != "kf_solve") ++at;
        open = at;
        while (open < toks.size() && toks[open] != "{" && toks[open] != ";") ++open;
    }
    if (open >= toks.size()) return cannot_derive(file, "no definition of kf_solve");
    int depth = 0;
    std::size_t close = open;
    for (; close < toks.size(); ++close) {
        if (toks[close] == "{") ++depth;
        if (toks[close] == "}" && --depth == 0) break;
    }
    std::vector<std::string> body_toks(toks.begin() + static_cast<long>(open) + 1, toks.begin() + static_cast<long>(close));
    std::string body = canonical(body_toks);
    // An early return for empty sizes is allowed.
    static const std::regex early("^if \\( [^;{}]*\\) return ; ");
    body = std::regex_replace(body, early, "", std::regex_constants::format_first_only);

    const std::string inc = "(?:\\+\\+ \\1 |\\1 \\+\\+ |\\1 \\+= 1 )";
    static const std::regex flat("^for \\( " + kType + "(\\w+) = 0 ; \\1 < (\\w+) ; " + inc + "\\) (?:\\{ )?(\\w+) \\[ \\1 \\] = " + kStmt +
                                 "; (?:\\} )?$");
    static const std::regex rows("^for \\( " + kType + "(\\w+) = 0 ; \\1 < (\\w+) ; " + inc + "\\) \\{ (.*)\\} $");
    std::smatch m;
    // Scalar definitions before the loop (constants), substituted into what follows.
    std::vector<std::pair<std::string, std::string>> lets;
    static const std::regex let("(?:const )?(?:float|double|auto) (\\w+) = " + kStmt + "; ");
    while (std::regex_search(body, m, let, std::regex_constants::match_continuous)) {
        lets.emplace_back(m[1], m[2]);
        body = m.suffix();
    }
    // An elementwise loop whose body defines scalars before writing y[i].
    static const std::regex flat_block("^for \\( " + kType + "(\\w+) = 0 ; \\1 < (\\w+) ; " + inc + "\\) \\{ (.*)\\} $");
    if (!std::regex_match(body, m, flat) && std::regex_match(body, m, flat_block)) {
        std::string i = m[1], inner = m[3];
        std::smatch d;
        while (std::regex_search(inner, d, let, std::regex_constants::match_continuous)) {
            lets.emplace_back(d[1], d[2]);
            inner = d.suffix();
        }
        std::string rebuilt = "for ( int " + i + " = 0 ; " + i + " < " + std::string(m[2]) + " ; ++ " + i + " ) " + inner;
        std::smatch f;
        if (std::regex_match(rebuilt, f, flat)) body = rebuilt;  // else: a loop over rows, read below
    }
    if (std::regex_match(body, m, flat)) {
        std::string i = m[1];
        std::string e = substitute(m[4], lets);
        static const std::regex any_read("\\[");
        std::regex read("(\\w+) \\[ " + i + " \\] ");
        e = std::regex_replace(e, read, "$1 ");
        if (std::regex_search(e, any_read)) return cannot_derive(file, "the elementwise loop reads something else than x[" + i + "]");
        json j = {{"op", "elementwise"}, {"map", e}, {"output", std::string(m[3])}};
        return finish(task, j, file, "an elementwise loop");
    }
    if (std::regex_match(body, m, rows)) return recognise_rows(task, m, file);
    return cannot_derive(file, "kf_solve's body is neither one elementwise loop nor a loop over rows (the shapes the recogniser knows)");
}

bool libclang_available(std::string* why) { return load_libclang(why) != nullptr; }

Recognition recognise_source(const Task& task, const std::string& source, const std::string& file, Recogniser which) {
    if (which == Recogniser::Tokens) return recognise_tokens(task, source, file);
    bool loaded = false;
    Recognition ast = recognise_clang(task, source, file, loaded);
    if (ast.computation || which == Recogniser::Libclang) return ast;
    Recognition tokens = recognise_tokens(task, source, file);
    if (!loaded) {
        // libclang absent: the token recogniser's answer, saying why it was the only one.
        if (tokens.computation) tokens.computation->origin += " (" + ast.reason + ")";
        else tokens.reason += " (" + ast.reason + ")";
        return tokens;
    }
    // libclang read the reference and refused: its reason is the more precise one.
    return tokens.computation ? tokens : ast;
}

Recognition recognise_reference(const Task& task, Backend, Recogniser which) {
    auto it = task.references.find(Backend::Host);
    if (it == task.references.end())
        return {std::nullopt, "cannot derive the computation: the recogniser reads host C++ references and this task has none"};
    return recognise_source(task, read_text_file(it->second), it->second.filename().string(), which);
}

}  // namespace kf
