#include "template_parts.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>

#include "kf/task.h"

namespace kf::templates {

std::string size_expr(const std::string& text) {
    static const std::regex name("([A-Za-z_][A-Za-z0-9_]*)");
    return "(" + std::regex_replace(text, name, "((long long)$1)") + ")";
}

std::string layout_consts(const Computation& c) {
    std::string s = "    const long long kf_rows = " + size_expr(c.rows) + ";\n" +
                    "    const long long kf_cols = " + size_expr(c.cols) + ";\n";
    if (!c.inner.empty()) s += "    const long long kf_inner = " + size_expr(c.inner) + ";\n";
    return s;
}

std::string entry_params(const Task& task, Backend b) {
    std::string sig = entry_signature(task, b);
    std::size_t open = sig.find('('), close = sig.rfind(')');
    std::string params = sig.substr(open + 1, close - open - 1);
    const std::string stream = ", cudaStream_t stream";
    if (b == Backend::Cuda && params.size() >= stream.size() &&
        params.compare(params.size() - stream.size(), stream.size(), stream) == 0)
        params.resize(params.size() - stream.size());
    return params;
}

std::string entry_args(const Task& task) {
    std::string out;
    auto add = [&](const std::string& n) { out += (out.empty() ? "" : ", ") + n; };
    for (const auto& t : task.tensors) add(t.name);
    for (const auto& s : task.size_names) add(s);
    for (const auto& p : task.params) add(p.name);
    return out;
}

std::string entry_definition(const Task& task, Backend b) {
    std::string sig = entry_signature(task, b);
    if (!sig.empty() && sig.back() == ';') sig.pop_back();
    return sig;
}

bool is_fp32(const Task& task, const Computation& c) {
    for (const auto& t : task.tensors)
        if (t.name == c.output) return t.dtype == DType::F32;
    return true;
}

std::string element_type(const Task& task, const Computation& c) { return is_fp32(task, c) ? "float" : "double"; }

std::string identity(const std::string& combine, bool fp32) {
    std::string f = fp32 ? "f" : "";
    if (combine == "sum") return "0.0" + f;
    if (combine == "prod") return "1.0" + f;
    if (combine == "max") return fp32 ? "(-INFINITY)" : "(-(double)INFINITY)";
    return fp32 ? "INFINITY" : "((double)INFINITY)";
}

std::string combine_expr(const std::string& combine, const std::string& a, const std::string& b) {
    if (combine == "sum") return "(" + a + " + " + b + ")";
    if (combine == "prod") return "(" + a + " * " + b + ")";
    if (combine == "max") return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
}

std::vector<std::string> tensors_in(const ComputeExpr& e, const Computation& c) {
    std::vector<std::string> out;
    for (const auto& n : e.names())
        if (c.inputs.count(n)) out.push_back(n);
    return out;
}

std::vector<std::string> per_row_tensors(const Computation& c) {
    std::vector<std::string> out;
    for (const auto& [n, ix] : c.inputs)
        if (ix == Indexing::PerRow) out.push_back(n);
    return out;
}

std::function<std::string(const std::string&)> resolver(const Task&, const Computation& c, const std::string& type,
                                                         std::function<std::string(const std::string&)> tensor) {
    return [&c, type, tensor](const std::string& n) -> std::string {
        if (c.inputs.count(n)) return tensor(n);
        for (const auto& s : c.stats)
            if (s.name == n) return "kf_s_" + n;
        return "static_cast<" + type + ">(" + n + ")";  // a size or a parameter
    };
}

std::function<std::string(const std::string&)> element_resolver(const Task& task, const Computation& c, const std::string& type,
                                                                 const std::string& full, const std::string& col,
                                                                 const std::string& row) {
    auto base = resolver(task, c, type, [&c, full, col, row](const std::string& n) -> std::string {
        switch (c.inputs.at(n)) {
            case Indexing::PerColumn: return n + "[" + col + "]";
            case Indexing::PerRow: return row.empty() ? "kf_row_" + n : n + "[" + row + "]";
            default: return n + "[" + full + "]";
        }
    });
    // A stencil's position and its reads at an index (ComputeExpr::to_c): "row()", "col()", "w[<index>]".
    return [base, type, col, row](const std::string& n) -> std::string {
        if (n == "row()") return row;
        if (n == "col()") return col;
        if (n.find('[') != std::string::npos) return "static_cast<" + type + ">(" + n + ")";
        return base(n);
    };
}

std::function<std::string(const std::string&)> neighbour_resolver(const std::string& type,
                                                                   std::function<std::string(const std::string&)> cell,
                                                                   const std::string& full, const std::string& pad) {
    return [type, cell, full, pad](const std::string& n) -> std::string {
        const auto sep = n.find('@');
        if (sep == std::string::npos) return cell(n);
        const std::string x = n.substr(0, sep), di = n.substr(sep + 1, n.find(',') - sep - 1), dj = n.substr(n.find(',') + 1);
        const std::string load = "static_cast<" + type + ">(" + x + "[" + full + " + (" + di + ") * kf_cols + (" + dj + ")])";
        if (pad.empty()) return load;
        const std::string r = "kf_r + (" + di + ")", c = "kf_c + (" + dj + ")";
        if (pad == "clamp")
            return "static_cast<" + type + ">(" + x + "[kf_clamp(" + r + ", kf_rows) * kf_cols + kf_clamp(" + c + ", kf_cols)])";
        std::vector<std::string> inside;  // only the dimensions this neighbour leaves
        if (di != "0") inside.push_back(r + " >= 0 && " + r + " < kf_rows");
        if (dj != "0") inside.push_back(c + " >= 0 && " + c + " < kf_cols");
        if (inside.empty()) return load;
        std::string cond = inside[0];
        for (std::size_t i = 1; i < inside.size(); ++i) cond += " && " + inside[i];
        return "(" + cond + " ? " + load + " : static_cast<" + type + ">(0))";
    };
}

std::string stencil_edge(const Computation& c, const std::function<std::string(const std::string&)>& cell, const std::string& type,
                         const std::string& full, bool fp32, bool cuda) {
    return c.pad.empty() ? c.border.to_c(cell, fp32, cuda) : c.map.to_c(neighbour_resolver(type, cell, full, c.pad), fp32, cuda);
}

std::string stencil_helpers(const Computation& c, bool cuda) {
    std::string out;
    if (c.pad == "clamp")
        out += std::string(cuda ? "__device__ __forceinline__" : "static inline") +
               " long long kf_clamp(long long v, long long n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }\n\n";
    if (cuda && (!c.map.indexed().empty() || !c.border.indexed().empty())) out += std::string(ComputeExpr::cuda_index_helpers()) + "\n";
    return out;
}

std::string header_comment(const std::string& title, const Computation& c) {
    std::string s = "// " + title + "\n// Instantiated by Kernel Foundry's op-class templates from the task's computation (" +
                    c.origin + "):\n//   " + c.summary() + "\n";
    return s;
}

bool is_centred_moment(const Computation& c) {
    if (c.op != "col_reduce" || c.stats.size() != 2 || c.stats[0].combine != "sum" || c.stats[1].combine != "sum")
        return false;
    auto squeeze = [](std::string t) {
        t.erase(std::remove_if(t.begin(), t.end(), [](unsigned char ch) { return std::isspace(ch); }), t.end());
        return t;
    };
    const std::string e = squeeze(c.stats[0].map.text()), mean = c.stats[0].name + "/" + squeeze(c.rows);
    const std::string q = squeeze(c.stats[1].map.text());
    const std::string d = "(" + e + "-" + mean + ")";
    if (q == d + "*" + d) return true;
    const std::string r = "(" + mean + "-" + e + ")";
    return c.stats[0].map.is_name() && q == r + "*" + r;
}

namespace {

/** The arguments of `name(a, b, ...)` when the whole text is that call (split at its top-level commas). */
std::optional<std::vector<std::string>> call_args(const std::string& text, const std::string& name) {
    std::size_t b = text.find_first_not_of(" \t");
    std::size_t e = text.find_last_not_of(" \t");
    if (b == std::string::npos || text.compare(b, name.size(), name) != 0) return std::nullopt;
    std::size_t open = text.find_first_not_of(" \t", b + name.size());
    if (open == std::string::npos || text[open] != '(' || text[e] != ')') return std::nullopt;
    std::vector<std::string> args;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i < e; ++i) {
        const char ch = text[i];
        if (ch == '(' || ch == '[') ++depth;
        else if (ch == ')' || ch == ']') {
            if (--depth < 0) return std::nullopt;  // the call closes before the end: `f(a) + g(b)`
        } else if (ch == ',' && depth == 0) {
            args.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    if (depth != 0) return std::nullopt;
    args.push_back(text.substr(start, e - start));
    return args;
}

/** The expression's form (ComputeExpr::form): equal for expressions that parse alike; empty where it does not parse. */
std::string canonical(const std::string& text) {
    try {
        return ComputeExpr::parse(text).form();
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace

bool is_online_max_sum(const Computation& c) {
    if (c.stats.size() < 2 || c.stats[0].combine != "max" || c.stats[1].combine != "sum") return false;
    const std::string& m = c.stats[0].name;
    std::string keep, e = c.stats[0].map.text();
    if (auto args = call_args(e, "select"); args && args->size() == 3 && canonical((*args)[2]) == canonical("-inf")) {
        keep = (*args)[0];
        e = (*args)[1];
    }
    const std::string term = "exp((" + e + ") - " + m + ")";
    const std::string expected = canonical(keep.empty() ? term : "select(" + keep + ", " + term + ", 0)");
    return !expected.empty() && expected == c.stats[1].map.form();
}

}  // namespace kf::templates
