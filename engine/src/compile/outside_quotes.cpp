// Compiler messages quote the lines they are about (gcc's "  12 | text" and caret lines,
// nvcc's echoed line and caret) and tokens in quotes. For a file that is neither the
// candidate's folder (the candidate, kf_task.h, the glue) nor a system header, those quotes
// could carry the contents of a file the candidate had no right to read, into a record that
// is stored and shown; they are withheld.
#include <cctype>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kf/compile.h"

namespace kf {

namespace fs = std::filesystem;

namespace {

bool within(const fs::path& p, const fs::path& dir) {
    auto d = dir.begin();
    auto q = p.begin();
    for (; d != dir.end(); ++d, ++q) {
        if (d->empty()) continue;  // a trailing separator
        if (q == p.end() || *d != *q) return false;
    }
    return true;
}

/** Text between quotes ('x', ‘x’, "x") replaced by an ellipsis. */
std::string redact_quoted(const std::string& text) {
    static const std::regex quoted("\xe2\x80\x98[^\xe2]*\xe2\x80\x99|'[^']*'|\"[^\"]*\"");
    return std::regex_replace(text, quoted, "'...'");
}

}  // namespace

std::string withhold_outside_quotes(std::string_view output, const fs::path& scratch,
                                    const std::vector<fs::path>& system_roots) {
    // file:line:col: (gcc, also "file: In function ..."), file(line): (nvcc)
    static const std::regex gcc_header(R"(^([^\s:(][^:]*?):(\d+:(\d+:)?)? (.*)$)");
    static const std::regex nvcc_header(R"(^([^\s(][^(]*)\((\d+)\): (.*)$)");
    static const std::regex quote_line(R"(^\s*\d*\s*\|.*$)");
    const fs::path dir = scratch.lexically_normal();

    auto allowed = [&](const std::string& file) {
        if (file.empty() || file[0] == '<') return true;  // <built-in>, <command-line>
        fs::path p(file);
        if (p.is_relative()) p = dir / p;
        p = p.lexically_normal();
        if (p.parent_path() == dir) return true;  // the candidate, kf_task.h, the glue
        for (const auto& root : system_roots)
            if (within(p, root.lexically_normal())) return true;
        return false;
    };

    std::ostringstream out;
    std::istringstream in{std::string(output)};
    std::string line;
    bool outside = false, noted = false;
    std::smatch m;
    while (std::getline(in, line)) {
        std::string file;
        bool header = false;
        if (std::regex_match(line, m, nvcc_header)) {
            file = m[1];
            header = true;
        } else if (std::regex_match(line, m, gcc_header)) {
            file = m[1];
            header = true;
        }
        if (header && file.rfind("In file included from ", 0) != 0 && !allowed(file)) {
            outside = true;
            noted = false;
            out << file << redact_quoted(line.substr(file.size())) << '\n';
            continue;
        }
        if (outside && !header && (line.empty() || std::isspace(static_cast<unsigned char>(line[0])) ||
                                   std::regex_match(line, quote_line))) {
            if (!noted && !line.empty()) out << "  [the source lines of a file outside the candidate are withheld]\n";
            noted = true;
            continue;
        }
        outside = false;
        out << line << '\n';
    }
    std::string text = out.str();
    if (!output.empty() && output.back() != '\n' && !text.empty()) text.pop_back();
    return text;
}

}  // namespace kf
