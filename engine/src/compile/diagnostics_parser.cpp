// Turns raw nvcc / g++ / ptxas / nvlink / ld output into Diagnostics. The candidate is
// #included by name into the glue file, so compiler messages already name the candidate's
// own file and lines; only the directories of the build folder have to be stripped.
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kf/compile.h"
#include "kf/text.h"

namespace kf {

namespace {

using util::trim;

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t nl = text.find('\n', start);
        std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.emplace_back(line);
        if (nl == std::string_view::npos) break;
        start = nl + 1;
    }
    return lines;
}

/** A line or column number; 0 for numbers too large to be one (never throws). */
int to_int(const std::ssub_match& digits) {
    try {
        return std::stoi(digits.str());
    } catch (const std::exception&) {
        return 0;
    }
}

Severity severity_of(const std::string& word) {
    if (word == "warning") return Severity::Warning;
    if (word == "note" || word == "remark") return Severity::Note;
    return Severity::Error;  // error, fatal error, catastrophic error, internal error, fatal
}

// nvcc's EDG front end: `dir/candidate.cu(12): error: ...`, optionally with a diagnostic
// number (`warning #177-D:`).
const std::regex& nvcc_header() {
    static const std::regex re(
        R"(^(\S.*?)\((\d+)\): (catastrophic error|internal error|error|warning|remark|note)(?: #\d+(?:-[A-Z])?)?: (.*)$)");
    return re;
}
// gcc / g++ (also the host pass and preprocessor run by nvcc): `path:12:5: error: ...`.
const std::regex& gcc_header() {
    static const std::regex re(R"(^(\S.*?):(\d+):(?:(\d+):)? (fatal error|error|warning|note): (.*)$)");
    return re;
}
// Driver-level messages without a position: `g++: error: ...`, `cc1plus: warning: ...`.
const std::regex& gcc_driver() {
    static const std::regex re(R"(^((?:[\w.-]*-)?(?:g\+\+|gcc|c\+\+|cc1plus|cc1)(?:-\d+)?): (fatal error|error|warning|note): (.*)$)");
    return re;
}
// `ptxas error   : ...`, `ptxas fatal   : ...`, and `ptxas /tmp/x.ptx, line 28; error   : ...`.
const std::regex& tool_line() {
    static const std::regex re(R"(^(ptxas|nvlink|nvcc)(?: \S+, line \d+;)? (error|fatal|warning)\s*: (.*)$)");
    return re;
}
// The GNU linker: `/usr/bin/ld: ...`.
const std::regex& ld_line() {
    static const std::regex re(R"(^(?:\S*/)?(?:[\w.-]*-)?ld(?:\.bfd|\.gold|\.lld)?: (.*)$)");
    return re;
}
// Linker messages about an object or source position: `kf_glue.cpp:(.text+0x25): undefined
// reference to ...` (no -g) or `kf_glue.cpp:2: undefined reference to ...` (with -g).
const std::regex& ld_reference() {
    static const std::regex re(R"(^(\S.*?):(?:(\d+)|\([^)]*\)): ((?:undefined reference to|multiple definition of) .*)$)");
    return re;
}
const std::regex& ld_in_function() {
    static const std::regex re(R"(^(?:.*: )?in function (.*):$)");
    return re;
}

/** Drops the quotes around a name: ASCII `name' or the UTF-8 quotes of a localised ld. */
std::string strip_quotes(std::string s) {
    for (std::string_view q : {"`", "'", "\u2018", "\u2019"}) {
        if (s.size() >= q.size() && s.compare(0, q.size(), q) == 0) s.erase(0, q.size());
        if (s.size() >= q.size() && s.compare(s.size() - q.size(), q.size(), q) == 0) s.erase(s.size() - q.size());
    }
    return s;
}

bool is_caret_line(const std::string& line) {
    std::size_t caret = line.find('^');
    if (caret == std::string::npos) return false;
    for (std::size_t i = 0; i < line.size(); ++i)
        if (i != caret && line[i] != ' ' && line[i] != '\t') return false;
    return true;
}

class Collector {
public:
    explicit Collector(std::string_view source_name) : source_name_(source_name) {}

    /** Keeps the file name only; the build folder's directories mean nothing to the reader. */
    std::string map_file(const std::string& path) const {
        std::size_t slash = path.find_last_of('/');
        std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
        std::size_t src_slash = source_name_.find_last_of('/');
        std::string_view src_base =
            src_slash == std::string_view::npos ? source_name_ : source_name_.substr(src_slash + 1);
        if (!source_name_.empty() && name == src_base) return std::string(source_name_);
        return name;
    }

    void add(std::string file, int line, int column, Severity sev, std::string message, std::string tool) {
        Diagnostic d;
        d.file = std::move(file);
        d.line = line;
        d.column = column;
        d.severity = sev;
        d.message = trim(message);
        d.tool = std::move(tool);
        auto key = std::make_tuple(d.tool, d.file, d.line, d.column, static_cast<int>(d.severity), d.message);
        if (!seen_.insert(key).second) return;
        out_.push_back(std::move(d));
    }

    bool has_tool(std::string_view tool) const {
        for (const auto& d : out_)
            if (d.tool == tool) return true;
        return false;
    }

    std::vector<Diagnostic> take() { return std::move(out_); }

private:
    std::string_view source_name_;
    std::set<std::tuple<std::string, std::string, int, int, int, std::string>> seen_;
    std::vector<Diagnostic> out_;
};

/** Line `number` (1-based) of `text`, tabs shown as spaces as nvcc echoes them; nullopt past the end. */
std::optional<std::string> line_of(const std::string& text, int number) {
    std::size_t start = 0;
    for (int n = 1; n < number; ++n) {
        start = text.find('\n', start);
        if (start == std::string::npos) return std::nullopt;
        ++start;
    }
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (char& ch : line)
        if (ch == '\t') ch = ' ';
    return line;
}

/**
 * The 1-based column in `original` of what nvcc's caret marks at `caret` (0-based) in its
 * echo of the preprocessed line: the longest text from the caret on that occurs in the
 * original line; when it occurs more than once, the last occurrence not right of the caret
 * (macros expand, so the original text sits at or left of the echoed one).
 */
int realign_column(const std::string& echoed, int caret, const std::string& original) {
    std::string rest = trim(std::string_view(echoed).substr(std::min<std::size_t>(caret, echoed.size())));
    if (echoed == original || trim(echoed) == trim(original) || rest.empty()) return caret + 1;
    for (std::size_t len = rest.size(); len > 0; --len) {
        std::string_view probe(rest.data(), len);
        std::vector<std::size_t> hits;
        for (std::size_t p = original.find(probe); p != std::string::npos; p = original.find(probe, p + 1))
            hits.push_back(p);
        if (hits.empty()) continue;
        std::size_t best = hits.front();
        for (std::size_t p : hits)
            if (p <= static_cast<std::size_t>(caret)) best = p;
        return static_cast<int>(best) + 1;
    }
    return caret + 1;
}

bool is_header(const std::string& line) {
    return std::regex_match(line, nvcc_header()) || std::regex_match(line, gcc_header()) ||
           std::regex_match(line, tool_line());
}

std::vector<Diagnostic> parse(std::string_view output, std::string_view source_name,
                              const std::map<std::string, std::string>* files) {
    Collector c(source_name);
    std::vector<std::string> lines = split_lines(output);
    std::string ld_function;  // context from the last `ld: x.o: in function 'f':`
    std::smatch m;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;  // source echo, context

        if (line.find("): ") != std::string::npos && std::regex_match(line, m, nvcc_header())) {
            std::string message = m[4];
            int column = 0;
            // The block up to the next blank line or message: continuation lines (e.g.
            // "argument types are: ..."), the source line, and a caret under the column.
            std::size_t j = i + 1;
            std::vector<std::string> block;
            while (j < lines.size() && !trim(lines[j]).empty() && !is_header(lines[j])) block.push_back(lines[j++]);
            for (std::size_t k = 1; k < block.size(); ++k) {
                if (!is_caret_line(block[k])) continue;
                // nvcc echoes the source line indented by two spaces, tabs as one space.
                int caret = std::max(0, static_cast<int>(block[k].find('^')) - 2);
                column = caret + 1;
                std::string file = c.map_file(m[1]);
                auto f = files ? files->find(file) : std::map<std::string, std::string>::const_iterator{};
                if (files && f != files->end()) {
                    std::string echoed = block[k - 1].size() >= 2 ? block[k - 1].substr(2) : std::string();
                    if (auto original = line_of(f->second, to_int(m[2])))
                        column = realign_column(echoed, caret, *original);
                }
                for (std::size_t n = 0; n + 1 < k; ++n) message += "; " + trim(block[n]);
                break;
            }
            c.add(c.map_file(m[1]), to_int(m[2]), column, severity_of(m[3]), message, "nvcc");
            i = j - 1;
            continue;
        }
        if (std::regex_match(line, m, gcc_header())) {
            int column = m[3].matched ? to_int(m[3]) : 0;
            c.add(c.map_file(m[1]), to_int(m[2]), column, severity_of(m[4]), m[5], "g++");
            continue;
        }
        if (std::regex_match(line, m, tool_line())) {
            c.add("", 0, 0, severity_of(m[2]), m[3], m[1]);
            continue;
        }
        if (line.rfind("collect2:", 0) == 0) {
            // "ld returned 1 exit status" only adds something when ld itself said nothing.
            std::string what = trim(line.substr(line.find(':') + 1));
            if (what.rfind("error: ", 0) == 0) what.erase(0, 7);
            if (!c.has_tool("ld")) c.add("", 0, 0, Severity::Error, what, "ld");
            continue;
        }
        if (std::regex_match(line, m, gcc_driver())) {
            c.add("", 0, 0, severity_of(m[2]), m[3], "g++");
            continue;
        }
        if (std::regex_match(line, m, ld_line())) {
            std::string rest = m[1];
            std::smatch f;
            if (std::regex_match(rest, f, ld_in_function())) {
                ld_function = strip_quotes(f[1]);
                continue;
            }
            if (std::regex_match(rest, f, ld_reference())) {
                std::string msg = std::string(f[3]) + (ld_function.empty() ? "" : " (in function `" + ld_function + "')");
                c.add(c.map_file(f[1]), f[2].matched ? to_int(f[2]) : 0, 0, Severity::Error, msg, "ld");
                continue;
            }
            bool warning = rest.rfind("warning: ", 0) == 0;
            c.add("", 0, 0, warning ? Severity::Warning : Severity::Error,
                  warning ? rest.substr(9) : rest.rfind("error: ", 0) == 0 ? rest.substr(7) : rest, "ld");
            continue;
        }
        if (line.find("undefined reference to") != std::string::npos ||
            line.find("multiple definition of") != std::string::npos) {
            if (std::regex_match(line, m, ld_reference())) {
                std::string msg = std::string(m[3]) + (ld_function.empty() ? "" : " (in function `" + ld_function + "')");
                c.add(c.map_file(m[1]), m[2].matched ? to_int(m[2]) : 0, 0, Severity::Error, msg, "ld");
                continue;
            }
        }
        // Anything else ("In function ...", "N errors detected", "compilation terminated.")
        // only repeats or frames what the messages above already say.
    }
    return c.take();
}

}  // namespace

std::vector<Diagnostic> parse_compiler_output(std::string_view output, std::string_view source_name) {
    return parse(output, source_name, nullptr);
}

std::vector<Diagnostic> parse_compiler_output(std::string_view output, std::string_view source_name,
                                              const std::map<std::string, std::string>& files) {
    return parse(output, source_name, &files);
}

}  // namespace kf
