// A model's answer to a candidate: fenced code or SEARCH/REPLACE edits, then a static screen.
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "kf/error.h"
#include "kf/llm/answer.h"

namespace kf::llm {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

std::string rstrip(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

std::string lstrip(std::string s) {
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

/** "<<<<<<< SEARCH" with 5 to 9 angle brackets. */
bool marker(const std::string& raw, char c, const char* word) {
    std::string s = rstrip(lstrip(raw));
    std::size_t n = 0;
    while (n < s.size() && s[n] == c) ++n;
    if (n < 5 || n > 9) return false;
    std::string rest = lstrip(s.substr(n));
    return word ? rest == word : rest.empty();
}

bool code_language(const std::string& lang) {
    static const char* known[] = {"", "cuda", "cu", "cpp", "c++", "cxx", "cc", "c", "h", "hpp", "cuh"};
    std::string l = lang;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return std::any_of(std::begin(known), std::end(known), [&](const char* k) { return l == k; });
}

struct Fence {
    bool open = false;
    bool code = false;
};

std::string join(const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to; ++i) out += lines[i] + (i + 1 < to ? "\n" : "");
    return out;
}

}  // namespace

std::vector<std::string> code_blocks(const std::string& text) {
    std::vector<std::string> out;
    auto lines = split_lines(text);
    bool open = false, code = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string s = rstrip(lstrip(lines[i]));
        if (!starts_with(s, "```")) continue;
        if (!open) {
            open = true;
            code = code_language(s.substr(3));
            start = i + 1;
        } else if (s == "```") {
            if (code) out.push_back(join(lines, start, i));
            open = false;
        }
    }
    return out;
}

std::vector<EditBlock> edit_blocks(const std::string& text) {
    std::vector<EditBlock> out;
    auto lines = split_lines(text);
    enum { Outside, Search, Replace } state = Outside;
    std::size_t start = 0;
    EditBlock cur;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (state == Outside && marker(l, '<', "SEARCH")) {
            state = Search;
            start = i + 1;
        } else if (state == Search && marker(l, '=', nullptr)) {
            cur.search = join(lines, start, i);
            state = Replace;
            start = i + 1;
        } else if (state == Replace && marker(l, '>', "REPLACE")) {
            cur.replace = join(lines, start, i);
            out.push_back(cur);
            cur = {};
            state = Outside;
        }
    }
    if (state != Outside)
        throw Error("SEARCH/REPLACE block " + std::to_string(out.size() + 1) + " is not terminated (the answer looks cut off)");
    return out;
}

std::string apply_edits(const std::string& source, const std::vector<EditBlock>& edits) {
    std::string src = source;
    for (std::size_t k = 0; k < edits.size(); ++k) {
        const EditBlock& e = edits[k];
        std::string label = "SEARCH block " + std::to_string(k + 1);
        if (rstrip(e.search).empty()) throw Error(label + " is empty");
        if (auto at = src.find(e.search); at != std::string::npos) {
            src.replace(at, e.search.size(), e.replace);
            continue;
        }
        // Line by line, ignoring trailing white space (models often drop or add some).
        auto have = split_lines(src);
        auto want = split_lines(e.search);
        while (!want.empty() && rstrip(want.back()).empty()) want.pop_back();
        bool found = false;
        for (std::size_t i = 0; !found && i + want.size() <= have.size(); ++i) {
            bool match = true;
            for (std::size_t j = 0; match && j < want.size(); ++j) match = rstrip(have[i + j]) == rstrip(want[j]);
            if (!match) continue;
            std::string rebuilt = join(have, 0, i);
            if (i > 0) rebuilt += "\n";
            rebuilt += e.replace;
            if (i + want.size() < have.size()) rebuilt += "\n" + join(have, i + want.size(), have.size());
            if (!src.empty() && src.back() == '\n') rebuilt += "\n";
            src = rebuilt;
            found = true;
        }
        if (!found) {
            std::string first = want.empty() ? "" : rstrip(lstrip(want.front()));
            if (first.size() > 80) first = first.substr(0, 80) + "...";
            throw Error(label + " does not match the parent's source (it begins \"" + first + "\")");
        }
    }
    return src;
}

std::string rationale_of(const std::string& text, std::size_t max_chars) {
    auto lines = split_lines(text);
    std::string prose;
    bool fence = false, edit = false;
    for (const auto& l : lines) {
        std::string s = rstrip(lstrip(l));
        if (starts_with(s, "```")) {
            fence = !fence;
            continue;
        }
        if (marker(l, '<', "SEARCH")) edit = true;
        if (fence || edit) {
            if (edit && marker(l, '>', "REPLACE")) edit = false;
            continue;
        }
        if (!s.empty()) prose += (prose.empty() ? "" : " ") + s;
    }
    std::string out;
    for (char c : prose)
        if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
    if (out.size() > max_chars) {
        out.resize(max_chars);
        while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();  // whole UTF-8 characters
        if (!out.empty()) out.pop_back();
        out += "...";
    }
    return out;
}

ParsedAnswer parse_answer(const std::string& text, const std::string& parent_source) {
    ParsedAnswer a;
    if (rstrip(text).empty()) {
        a.error = "empty answer";
        return a;
    }
    a.rationale = rationale_of(text);
    if (text.find("<<<<<<< SEARCH") != std::string::npos || text.find("<<<<<<<SEARCH") != std::string::npos) {
        try {
            auto edits = edit_blocks(text);
            if (parent_source.empty()) throw Error("edits but no parent source to apply them to");
            a.source = apply_edits(parent_source, edits);
            a.form = "diff";
        } catch (const Error& e) {
            a.error = e.what();
            return a;
        }
    } else {
        auto blocks = code_blocks(text);
        const std::string* pick = nullptr;
        for (const auto& b : blocks)
            if (b.find("kf_solve") != std::string::npos && (!pick || b.size() > pick->size())) pick = &b;
        if (pick) {
            a.source = *pick;
        } else if (!blocks.empty()) {
            a.error = "the code in the answer does not define kf_solve";
            return a;
        } else if (text.find("```") != std::string::npos) {
            a.error = "unterminated code block (the answer looks cut off)";
            return a;
        } else if (text.find("kf_solve") != std::string::npos &&
                   (text.find("#include") != std::string::npos || text.find("extern \"C\"") != std::string::npos)) {
            a.source = text;  // bare code without a fence
        } else {
            std::string head = rationale_of(text, 120);
            a.error = "no code in the answer" + (head.empty() ? std::string() : ": \"" + head + "\"");
            return a;
        }
        a.form = "full";
    }
    if (a.source.find("kf_solve") == std::string::npos) {
        a.error = "the child does not define kf_solve";
        return a;
    }
    if (a.source.empty() || a.source.back() != '\n') a.source += '\n';
    a.ok = true;
    return a;
}

namespace {

/** The source with comments blanked out (string literals kept). */
std::string without_comments(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    enum { Code, Line, Block, Str, Chr } st = Code;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
        switch (st) {
            case Code:
                if (c == '/' && n == '/') st = Line, ++i, out += "  ";
                else if (c == '/' && n == '*') st = Block, ++i, out += "  ";
                else {
                    if (c == '"') st = Str;
                    else if (c == '\'') st = Chr;
                    out += c;
                }
                break;
            case Line:
                if (c == '\n') st = Code, out += c;
                else out += ' ';
                break;
            case Block:
                if (c == '*' && n == '/') st = Code, ++i, out += "  ";
                else out += c == '\n' ? '\n' : ' ';
                break;
            case Str:
            case Chr:
                out += c;
                if (c == '\\' && i + 1 < s.size()) out += s[++i];
                else if ((st == Str && c == '"') || (st == Chr && c == '\'') || c == '\n') st = Code;
                break;
        }
    }
    return out;
}

struct ScreenRule {
    const char* pattern;
    const char* library;  ///< name in rules.allowed_libraries that permits it, or null
    const char* why;
};

const std::vector<ScreenRule>& screen_rules() {
    static const std::vector<ScreenRule> rules = {
        {R"(\bcublasLt\w*)", "cublasLt", "cuBLASLt is not allowed by the task"},
        {R"(\bcublas(?!Lt)\w*)", "cublas", "cuBLAS is not allowed by the task"},
        {R"(\bcudnn\w*)", "cudnn", "cuDNN is not allowed by the task"},
        {R"(\bcufft\w*)", "cufft", "cuFFT is not allowed by the task"},
        {R"(\bcurand\w*)", "curand", "cuRAND is not allowed by the task"},
        {R"(\bcusparse\w*)", "cusparse", "cuSPARSE is not allowed by the task"},
        {R"(\bcusolver\w*)", nullptr, "cuSOLVER is not allowed"},
        {R"(\bnccl\w*)", nullptr, "NCCL is not allowed"},
        {R"(\b(?:cblas_|mkl_)\w*|\b[sd]gemm_\s*\()", nullptr, "a BLAS library is not allowed"},
        {R"(\b(?:cutlass|cute)::\w*)", "cutlass", "CUTLASS is not allowed by the task"},
        {R"(\bthrust::\w*)", nullptr, "Thrust runs its own kernels and allocations outside the candidate's control"},
        {R"(\b(?:at|torch|c10)::\w*)", nullptr, "calls into PyTorch are not allowed"},
        {R"(\b(?:dlopen|dlmopen|dlsym|dlvsym|cuModuleLoad\w*|cuLibraryLoad\w*|nvrtc\w+)\b)", nullptr, "loads code at run time"},
        {R"(\b(?:system|popen|fork|vfork|clone|execl|execlp|execle|execv|execvp|execvpe|execve|posix_spawnp?)\s*\()", nullptr,
         "starts a process"},
        {R"(\bstd::(?:thread|jthread|async)\b|\bpthread_create\b|\bthrd_create\b)", nullptr,
         "starts a thread (work the timer does not see)"},
        {R"(\b(?:cudaStreamCreate\w*|cuStreamCreate\w*)\b)", nullptr,
         "creates a stream (work on another stream escapes the timer; use the stream given)"},
        {R"(\bcudaStreamPerThread\b|\bcudaStreamLegacy\b)", nullptr, "uses a stream other than the one given"},
        {R"(\bstatic\s+(?:thread_local\s+)?(?:std::)?(?:unordered_map|map|unordered_set|set|vector)\s*<[^;{]*(?:\*|uintptr_t|intptr_t))",
         nullptr, "a static container keyed by pointer caches results across calls"},
        {R"(\bstatic\s+(?:const\s+)?[A-Za-z_][\w:]*\s*(?:const\s*)?\*\s*(?:const\s+)?\w*(?:last|prev|cache|saved|seen|memo)\w*)", nullptr,
         "a static pointer remembering earlier inputs caches results across calls"},
        {R"(\bstatic\s+(?:std::)?u?intptr_t\s+\w+)", nullptr, "a static pointer value remembers earlier inputs across calls"},
    };
    return rules;
}

}  // namespace

std::vector<std::string> screen_source(const std::string& source, const Rules& rules) {
    std::vector<std::string> out;
    const std::string code = without_comments(source);
    for (const auto& r : screen_rules()) {
        if (r.library && std::find(rules.allowed_libraries.begin(), rules.allowed_libraries.end(), r.library) !=
                             rules.allowed_libraries.end())
            continue;
        static thread_local std::map<const char*, std::regex> compiled;
        auto it = compiled.find(r.pattern);
        if (it == compiled.end()) it = compiled.emplace(r.pattern, std::regex(r.pattern, std::regex::ECMAScript)).first;
        std::smatch m;
        if (std::regex_search(code, m, it->second)) {
            std::string what = m.str(0);
            while (!what.empty() && (what.back() == '(' || std::isspace(static_cast<unsigned char>(what.back())))) what.pop_back();
            if (what.size() > 60) what = what.substr(0, 60) + "...";
            out.push_back(what + " (" + r.why + ")");
        }
    }
    return out;
}

}  // namespace kf::llm
