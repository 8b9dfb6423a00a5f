// Refuses, before anything is compiled, a candidate that names a file it may not read:
// #include / #include_next / #import / #embed, #pragma GCC dependency, _Pragma and
// __has_include / __has_include_next / __has_embed with an absolute path, a "..", or a name
// computed by a macro; and the assembler's .incbin / .include, which read files too.
// A candidate may include system headers, kf_task.h and the files beside it (docs/compile.md).
// The sandbox the compiler runs in (bwrap) is the barrier; this screen gives a clear message
// and covers the machines where bwrap cannot run.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "kf/compile.h"

namespace kf {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/** The source after line splicing (backslash-newline removed), with each byte's original line. */
struct Spliced {
    std::string text;
    std::vector<int> line;
};

Spliced splice(std::string_view src) {
    Spliced s;
    int line = 1;
    for (std::size_t i = 0; i < src.size(); ++i) {
        if (src[i] == '\\') {
            // gcc also splices a backslash followed by blanks before the newline.
            std::size_t j = i + 1;
            while (j < src.size() && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r')) ++j;
            if (j < src.size() && src[j] == '\n') {
                ++line;
                i = j;
                continue;
            }
        }
        s.text.push_back(src[i]);
        s.line.push_back(line);
        if (src[i] == '\n') ++line;
    }
    return s;
}

/** What a byte of the spliced text is: code, inside a comment, or inside a string/char literal. */
enum class Kind : char { Code, Comment, Literal };

std::vector<Kind> classify(const std::string& t) {
    std::vector<Kind> k(t.size(), Kind::Code);
    std::size_t i = 0;
    auto run_start = [&](std::size_t pos) {
        std::size_t b = pos;
        while (b > 0 && (ident_char(t[b - 1]) || t[b - 1] == '.' || t[b - 1] == '\'')) --b;
        return b;
    };
    while (i < t.size()) {
        char c = t[i];
        if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
            while (i < t.size() && t[i] != '\n') k[i++] = Kind::Comment;
        } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
            std::size_t end = t.find("*/", i + 2);
            end = end == std::string::npos ? t.size() : end + 2;
            for (; i < end; ++i)
                if (t[i] != '\n') k[i] = Kind::Comment;
        } else if (c == '"' || c == '\'') {
            std::size_t b = run_start(i);
            std::string prefix = t.substr(b, i - b);
            // A digit separator (1'000) is part of a number: a run starting with a digit and
            // followed by a digit or letter, as in the pp-number grammar.
            if (c == '\'' && !prefix.empty() && std::isdigit(static_cast<unsigned char>(prefix[0])) &&
                i + 1 < t.size() && ident_char(t[i + 1])) {
                ++i;
                continue;
            }
            bool raw = c == '"' && (prefix == "R" || prefix == "LR" || prefix == "uR" || prefix == "UR" || prefix == "u8R");
            if (raw) {
                std::size_t open = t.find('(', i + 1);
                std::size_t nl = t.find('\n', i + 1);
                if (open != std::string::npos && (nl == std::string::npos || open < nl)) {
                    std::string close = ")" + t.substr(i + 1, open - i - 1) + "\"";
                    std::size_t end = t.find(close, open);
                    end = end == std::string::npos ? t.size() : end + close.size();
                    for (++i; i < end - 1; ++i) k[i] = Kind::Literal;
                    ++i;
                    continue;
                }
            }
            ++i;
            while (i < t.size() && t[i] != c && t[i] != '\n') {
                if (t[i] == '\\' && i + 1 < t.size() && t[i + 1] != '\n') k[i++] = Kind::Literal;
                k[i++] = Kind::Literal;
            }
            if (i < t.size() && t[i] == c) ++i;
        } else {
            ++i;
        }
    }
    return k;
}

/** Why a file name may not be opened, or "" when it may. */
std::string name_problem(const std::string& name) {
    if (name.empty()) return {};
    if (name[0] == '/') {
        for (const char* dir : {"/dev", "/proc", "/sys"})
            if (name.rfind(dir, 0) == 0) return std::string("it names ") + dir;
        return "it is an absolute path";
    }
    if (name[0] == '~') return "it names a home folder";
    if (name.find("..") != std::string::npos) return "it contains '..'";
    return {};
}

class Screen {
public:
    Screen(std::string_view source, std::string_view source_name) : file_(source_name) {
        s_ = splice(source);
        kind_ = classify(s_.text);
        // The code with comments blanked (newlines kept): what the preprocessor sees.
        code_ = s_.text;
        for (std::size_t i = 0; i < code_.size(); ++i)
            if (kind_[i] == Kind::Comment) code_[i] = ' ';
    }

    std::vector<Diagnostic> run() {
        directives(code_, /*raw=*/false);
        // The same on the text as written, comments included: a lexer that disagreed with the
        // compiler about where a comment ends could otherwise hide a directive.
        directives(s_.text, /*raw=*/true);
        operators();
        assembler(s_.text);
        return std::move(found_);
    }

private:
    void refuse(std::size_t pos, const std::string& what) {
        int line = pos < s_.line.size() ? s_.line[pos] : (s_.line.empty() ? 1 : s_.line.back());
        for (const auto& d : found_)
            if (d.line == line) return;  // one message per line
        Diagnostic d;
        d.file = file_;
        d.line = line;
        d.severity = Severity::Error;
        d.message = what;
        d.tool = "kfoundry";
        found_.push_back(std::move(d));
    }

    static std::size_t skip_blanks(const std::string& t, std::size_t i) {
        while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\f' || t[i] == '\v')) ++i;
        return i;
    }

    /** Reads a "name" or <name> at i; returns false when there is none (a computed name). */
    static bool header_name(const std::string& t, std::size_t i, std::string& name, std::string& written) {
        if (i >= t.size() || (t[i] != '"' && t[i] != '<')) return false;
        char close = t[i] == '"' ? '"' : '>';
        std::size_t end = t.find(close, i + 1);
        std::size_t nl = t.find('\n', i + 1);
        if (end == std::string::npos || (nl != std::string::npos && nl < end)) return false;
        name = t.substr(i + 1, end - i - 1);
        written = t.substr(i, end - i + 1);
        return true;
    }

    /** Checks the name at i (after the opening parenthesis or directive) for `what`. */
    void check_name_at(const std::string& t, std::size_t i, std::size_t pos, const std::string& what) {
        std::string name, written;
        i = skip_blanks(t, i);
        if (!header_name(t, i, name, written)) {
            std::size_t end = t.find('\n', i);
            std::string rest = t.substr(i, std::min<std::size_t>(end == std::string::npos ? t.size() - i : end - i, 60));
            refuse(pos, what + " " + rest + " is not allowed: the file name must be written as \"name\" or <name>, "
                                            "not computed by a macro");
            return;
        }
        std::string why = name_problem(name);
        if (written.size() > 200) written = written.substr(0, 200) + "...";
        if (!why.empty())
            refuse(pos, what + " " + written + " is not allowed: " + why +
                            " (a candidate may include only system headers, kf_task.h and files beside it)");
    }

    /** The pragma text starting at i (one line): `GCC dependency "file"` reads a file. */
    void check_pragma(const std::string& t, std::size_t i, std::size_t pos) {
        std::size_t end = t.find('\n', i);
        std::string line = t.substr(i, end == std::string::npos ? std::string::npos : end - i);
        std::size_t dep = line.find("dependency");
        if (dep == std::string::npos) return;
        check_name_at(line, dep + 10, pos, "#pragma GCC dependency");
    }

    void directives(const std::string& t, bool raw) {
        std::size_t i = 0;
        while (i < t.size()) {
            std::size_t eol = t.find('\n', i);
            if (eol == std::string::npos) eol = t.size();
            std::string line = t.substr(i, eol - i);
            if (raw) {  // drop /* */ within the line, as the preprocessor would
                for (std::size_t a = line.find("/*"); a != std::string::npos; a = line.find("/*", a)) {
                    std::size_t b = line.find("*/", a + 2);
                    line.replace(a, b == std::string::npos ? std::string::npos : b + 2 - a, " ");
                }
            }
            std::size_t j = skip_blanks(line, 0);
            bool hash = j < line.size() && line[j] == '#';
            bool digraph = j + 1 < line.size() && line[j] == '%' && line[j + 1] == ':';
            if (hash || digraph) {
                j = skip_blanks(line, j + (hash ? 1 : 2));
                std::size_t e = j;
                while (e < line.size() && ident_char(line[e])) ++e;
                std::string name = line.substr(j, e - j);
                if (name == "include" || name == "include_next" || name == "import" || name == "embed")
                    check_name_at(line, e, i, "#" + name);
                else if (name == "pragma")
                    check_pragma(line, e, i);
            }
            i = eol + 1;
        }
    }

    /** __has_include(...), __has_include_next(...), __has_embed(...) and _Pragma("...") anywhere in the code. */
    void operators() {
        const std::string& t = code_;
        bool any_computed_pragma = false;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (kind_[i] != Kind::Code || !(t[i] == '_') || (i > 0 && ident_char(t[i - 1]))) continue;
            std::size_t e = i;
            while (e < t.size() && ident_char(t[e])) ++e;
            std::string word = t.substr(i, e - i);
            if (word == "__has_include" || word == "__has_include_next" || word == "__has_embed") {
                std::size_t p = skip_blanks(t, e);
                if (p < t.size() && t[p] == '(')
                    check_name_at(t, p + 1, i, word);
                else
                    refuse(i, word + " is not allowed here: the file name must follow it as (\"name\") or (<name>)");
            } else if (word == "_Pragma") {
                std::size_t p = skip_blanks(t, e);
                std::size_t q = p < t.size() && t[p] == '(' ? skip_blanks(t, p + 1) : p;
                std::size_t lit = q;
                while (lit < t.size() && ident_char(t[lit])) ++lit;  // L"..", u8"..": encoding prefixes
                if (lit < t.size() && t[lit] == '"') {
                    std::string body;
                    for (std::size_t k = lit + 1; k < t.size() && t[k] != '"' && t[k] != '\n'; ++k) {
                        if (t[k] == '\\' && k + 1 < t.size()) ++k;
                        body.push_back(t[k]);
                    }
                    check_pragma(body, 0, i);
                } else {
                    any_computed_pragma = true;
                }
            }
            i = e - 1;
        }
        // A pragma built by a macro (_Pragma(#x)) cannot be read here; refuse one that could
        // be GCC dependency.
        if (any_computed_pragma) {
            std::size_t dep = s_.text.find("dependency");
            if (dep != std::string::npos)
                refuse(dep, "#pragma GCC dependency built by a macro (_Pragma with a computed argument) is not allowed");
        }
    }

    /** The assembler's .incbin and .include read files (inline asm). */
    void assembler(const std::string& t) {
        std::string lower = t;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        for (const char* what : {"incbin", ".include"}) {
            std::size_t p = lower.find(what);
            if (p != std::string::npos)
                refuse(p, std::string("the assembler directive ") + (what[0] == '.' ? "" : ".") + what +
                              " is not allowed: it reads a file into the library");
        }
    }

    std::string file_;
    Spliced s_;
    std::vector<Kind> kind_;
    std::string code_;
    std::vector<Diagnostic> found_;
};

}  // namespace

std::vector<Diagnostic> screen_includes(std::string_view source, std::string_view source_name) {
    std::vector<Diagnostic> found = Screen(source, source_name).run();
    std::sort(found.begin(), found.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
    return found;
}

}  // namespace kf
