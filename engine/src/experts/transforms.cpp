// Named rewrites of CUDA sources (kf/transforms.h), each refusing cleanly where it does not apply.
#include "kf/transforms.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <set>
#include <vector>

#include "kf/tunables.h"
#include "transform_parts.h"
#include "kf/text.h"

namespace kf {

namespace {

using rewrites::after_includes;
using rewrites::closing;
using rewrites::refuse;
using rewrites::statement_end;

bool has_tunable(const std::string& src, const std::string& name) {
    try {
        TunableSpace s = parse_tunables(src);
        for (const auto& t : s.params)
            if (t.name == name) return true;
    } catch (const Error&) {
    }
    return false;
}

TransformResult block_size_tunable(const std::string& src) {
    if (has_tunable(src, "KF_BLOCK")) return refuse("the block size is already the tunable KF_BLOCK");
    static const std::regex launch("<<<\\s*([^,>]+?)\\s*,\\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+)\\s*([,>])");
    std::set<std::string> blocks;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), launch); it != std::sregex_iterator(); ++it)
        blocks.insert((*it)[2]);
    if (blocks.empty()) return refuse("no kernel launch (<<<grid, block>>>) in the source");
    if (blocks.size() > 1) return refuse("the launches use different block sizes");
    std::string block = *blocks.begin();
    std::string value = block;
    std::string out = src;
    if (!std::isdigit(static_cast<unsigned char>(block[0]))) {
        // A named constant: `const int block = 256;` (or constexpr), replaced by the macro.
        std::regex decl("(?:static\\s+)?(?:constexpr|const)\\s+(?:int|unsigned)\\s+" + block + "\\s*=\\s*([0-9]+)\\s*;");
        std::smatch m;
        if (!std::regex_search(out, m, decl)) return refuse("the block size '" + block + "' is not a literal or an integer constant");
        value = m[1];
        out = std::regex_replace(out, decl, "const int " + block + " = KF_BLOCK;", std::regex_constants::format_first_only);
    } else {
        // The grid must follow the block size: its literal (and literal - 1) become KF_BLOCK.
        std::string rewritten;
        std::size_t last = 0;
        const std::regex lit("\\b" + block + "\\b"), lit_minus("\\b" + std::to_string(std::stoi(block) - 1) + "\\b");
        for (auto it = std::sregex_iterator(out.begin(), out.end(), launch); it != std::sregex_iterator(); ++it) {
            std::string grid_expr = (*it)[1];
            if (!std::regex_search(grid_expr, lit)) return refuse("the grid (" + grid_expr + ") does not follow the block size " + block);
            grid_expr = std::regex_replace(std::regex_replace(grid_expr, lit_minus, "(KF_BLOCK - 1)"), lit, "KF_BLOCK");
            rewritten += out.substr(last, static_cast<std::size_t>(it->position(0)) - last) + "<<<" + grid_expr + ", KF_BLOCK" +
                         (*it)[3].str();
            last = static_cast<std::size_t>(it->position(0) + it->length(0));
        }
        out = rewritten + out.substr(last);
    }
    std::set<int> values = {64, 128, 256, 512, 1024, std::stoi(value)};
    std::string list;
    for (int v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
    std::string def = "#define KF_BLOCK " + value + "  // @kf tunable values(" + list + ")\n";
    // After the includes, so that the macro precedes every use.
    const std::size_t at = after_includes(out);
    out.insert(at, (at ? "\n" : "") + def);
    return {out, {}};
}

TransformResult launch_bounds(const std::string& src) {
    std::string block = has_tunable(src, "KF_BLOCK") ? "KF_BLOCK" : has_tunable(src, "BLOCK") ? "BLOCK" : "";
    if (block.empty()) return refuse("no tunable block size (KF_BLOCK or BLOCK) to bound the kernels by");
    if (src.find("__launch_bounds__") != std::string::npos) return refuse("the kernels already declare launch bounds");
    static const std::regex kernel("__global__\\s+void\\s+");
    if (!std::regex_search(src, kernel)) return refuse("no __global__ kernel");
    std::string out = std::regex_replace(src, kernel, "__global__ void __launch_bounds__(" + block + ") ");
    return {out, {}};
}

/** A launch `<<<(count + block - 1) / block, block` in a source: where it is, the count and the block size. */
struct CeilLaunch {
    std::size_t pos = 0, len = 0;
    std::string block;
};

/**
 * The first launch in `text` whose grid is ceil(count / block): a named block size `(count +
 * (block - 1)) / block, block` or a literal one `(count + 127) / 128, 128`. `anchored`: only at
 * the start of `text`.
 */
std::optional<CeilLaunch> ceil_launch(const std::string& text, const std::string& count, bool anchored) {
    static const std::regex named("<<<\\s*\\(\\s*(\\w+)\\s*\\+\\s*\\(?\\s*(\\w+)\\s*-\\s*1\\s*\\)?\\s*\\)\\s*/\\s*\\2\\s*,\\s*\\2");
    static const std::regex literal("<<<\\s*\\(\\s*(\\w+)\\s*\\+\\s*([0-9]+)\\s*\\)\\s*/\\s*([0-9]+)\\s*,\\s*\\3");
    const auto flags = anchored ? std::regex_constants::match_continuous : std::regex_constants::match_default;
    std::smatch g;
    if (std::regex_search(text, g, named, flags) && g[1] == count)
        return CeilLaunch{static_cast<std::size_t>(g.position(0)), static_cast<std::size_t>(g.length(0)), g[2]};
    if (std::regex_search(text, g, literal, flags) && g[1] == count && std::stoll(g[2]) + 1 == std::stoll(g[3]))
        return CeilLaunch{static_cast<std::size_t>(g.position(0)), static_cast<std::size_t>(g.length(0)), g[3]};
    return std::nullopt;
}

TransformResult grid_stride(const std::string& src) {
    if (has_tunable(src, "KF_ITEMS")) return refuse("already grid-stride with KF_ITEMS items per thread");
    static const std::regex index(
        "(?:const\\s+)?(int|long long|size_t|int64_t)\\s+(\\w+)\\s*=\\s*(?:\\(\\s*(?:long long|size_t)\\s*\\)\\s*)?blockIdx\\.x\\s*\\*\\s*"
        "blockDim\\.x\\s*\\+\\s*threadIdx\\.x\\s*;\\s*if\\s*\\(\\s*\\2\\s*<\\s*(\\w+)\\s*\\)");
    std::smatch m;
    if (!std::regex_search(src, m, index)) return refuse("no one-element-per-thread kernel (i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ...)");
    std::string i = m[2], n = m[3];
    std::string loop = "for (long long " + i + " = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; " + i + " < " + n +
                       "; " + i + " += static_cast<long long>(gridDim.x) * blockDim.x)";
    std::string out = m.prefix().str() + loop + m.suffix().str();
    // The launch: ceil(n / block) blocks become ceil(n / (block * KF_ITEMS)).
    auto g = ceil_launch(out, n, false);
    if (!g) return refuse("the launch is not <<<(" + n + " + block - 1) / block, block>>>, so its grid cannot be shrunk");
    const std::string& b = g->block;
    out.replace(g->pos, g->len, "<<<(" + n + " + " + b + " * KF_ITEMS - 1) / (" + b + " * KF_ITEMS), " + b);
    const std::size_t at = after_includes(out);
    out.insert(at, std::string(at ? "\n" : "") + "#define KF_ITEMS 4  // @kf tunable values(1, 2, 4, 8, 16)\n");
    return {out, {}};
}

/** `text` cut at the semicolons outside parentheses and brackets (the last piece may be empty). */
std::vector<std::string> statements(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (char ch : text) {
        if (ch == '(' || ch == '[') ++depth;
        if (ch == ')' || ch == ']') --depth;
        if (ch == ';' && depth == 0) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    if (cur.find_first_not_of(" \t\r\n") != std::string::npos) out.push_back(cur);
    return out;
}

using util::trim;

/** A replacement of src's [pos, pos + len) by text; applied from the last to the first. */
struct Edit {
    std::size_t pos, len;
    std::string text;
};

/** A loop's body (inside its braces, or its one statement with the semicolon) from `b`, and where the loop ends. */
std::string loop_body(const std::string& src, std::size_t b, std::size_t end, std::size_t& body_end) {
    if (src[b] == '{') {
        const std::size_t cl = closing(src, b);
        body_end = cl + 1;
        return src.substr(b + 1, cl - b - 1);
    }
    std::size_t semi = b;
    int depth = 0;
    for (; semi < end; ++semi) {
        if (src[semi] == '(' || src[semi] == '[') ++depth;
        if (src[semi] == ')' || src[semi] == ']') --depth;
        if (src[semi] == ';' && depth == 0) break;
    }
    body_end = semi + 1;
    return src.substr(b, semi - b + 1);
}

/** A reduction's last statement read: its accumulator, combine (sum, max, min) and value; a store leaves acc empty. */
struct RowReduction {
    std::string acc, combine, value;
};

/** The loop's statements: const definitions, then one reduction or store; a refusal when not. */
std::optional<std::string> read_row_statement(const std::string& body, RowReduction& red) {
    static const std::regex decl("\\s*const\\s+[A-Za-z_][\\w\\s]*\\s+\\w+\\s*=[\\s\\S]*");
    static const std::regex add("\\s*(\\w+)\\s*\\+=([\\s\\S]+)");
    static const std::regex minmax("\\s*(\\w+)\\s*=\\s*(fmaxf|fmax|max|fminf|fmin|min)\\s*\\(\\s*(\\w+)\\s*,([\\s\\S]+)\\)\\s*");
    static const std::regex store("\\s*\\w+\\s*\\[[\\s\\S]+\\]\\s*=[^=][\\s\\S]*");
    std::vector<std::string> st = statements(body);
    if (st.empty()) return "an empty loop";
    for (std::size_t k = 0; k + 1 < st.size(); ++k)
        if (!std::regex_match(st[k], decl)) return "a loop body other than const definitions and one reduction or store";
    const std::string& last = st.back();
    std::smatch sm;
    if (std::regex_match(last, sm, add)) {
        red.acc = sm[1], red.combine = "sum", red.value = sm[2];
    } else if (std::regex_match(last, sm, minmax) && sm[1] == sm[3]) {
        red.acc = sm[1], red.value = sm[4];
        red.combine = sm[2].str().find("max") != std::string::npos ? "max" : "min";
    } else if (!std::regex_match(last, store)) {
        return "the loop's statement is neither a reduction (acc += e, acc = fmaxf(acc, e)) nor a store";
    }
    return std::nullopt;
}

/**
 * One loop over the row at `pos`: its head made to step by lanes, and after a reduction the
 * warp's combine of the accumulator; a refusal when the loop is not one warp_rows knows.
 */
std::optional<std::string> warp_row_loop(const std::string& src, std::size_t pos, std::size_t body_from, std::size_t end,
                                         std::vector<Edit>& edits) {
    static const std::regex loop_head("for\\s*\\(\\s*(int|long long)\\s+(\\w+)\\s*=\\s*([^;]+);\\s*\\2\\s*<\\s*([^;]+);\\s*"
                                      "(?:\\+\\+\\s*\\2|\\2\\s*\\+\\+|\\2\\s*\\+=\\s*1)\\s*\\)");
    static const std::regex for_word("\\bfor\\b");
    std::smatch lh;
    const std::string rest = src.substr(pos, end - pos);
    if (!std::regex_search(rest, lh, loop_head, std::regex_constants::match_continuous))
        return "a loop that is not for (int c = start; c < end; ++c) over the row";
    const std::string c = lh[2];
    std::size_t b = pos + static_cast<std::size_t>(lh.length(0));
    while (b < end && std::isspace(static_cast<unsigned char>(src[b]))) ++b;
    std::size_t body_end;  // just past the loop
    const std::string body = loop_body(src, b, end, body_end);
    if (std::regex_search(body, for_word) || body.find("while") != std::string::npos) return "a nested loop over the row";
    RowReduction red;
    if (auto why = read_row_statement(body, red)) return why;
    std::string after;
    if (!red.acc.empty()) {
        const std::string& acc = red.acc;
        if (std::regex_search(red.value, std::regex("\\b" + acc + "\\b"))) return "the reduction into '" + acc + "' reads it";
        std::smatch dm;
        const std::string before = src.substr(body_from, pos - body_from);
        const std::regex acc_decl("(float|double|int|long long)\\s+" + acc + "\\s*=\\s*([^;]+);");
        if (!std::regex_search(before, dm, acc_decl)) return "the accumulator '" + acc + "' is not declared in the kernel";
        static const std::regex zero("\\s*0(\\.0*)?[fF]?\\s*|\\s*0?\\.0+[fF]?\\s*");
        if (red.combine == "sum" && !std::regex_match(dm[2].str(), zero))
            return "the sum into '" + acc + "' does not start at 0: every lane would add its start";
        const std::size_t line = src.rfind('\n', pos) + 1;  // the loop's own indentation
        after = "\n" + src.substr(line, pos - line) + acc + " = kf_warp_" + red.combine + "(" + acc + ");";
    }
    edits.push_back({pos, static_cast<std::size_t>(lh.length(0)),
                     "for (" + lh[1].str() + " " + c + " = (" + trim(lh[3].str()) + ") + kf_lane; " + c + " < " + trim(lh[4].str()) + "; " + c +
                         " += 32)"});
    if (!after.empty()) edits.push_back({body_end, 0, after});
    return std::nullopt;
}

/** The kernel's launch given 32 threads per row; a refusal when its grid or block size does not allow it. */
std::optional<std::string> warp_row_launch(const std::string& src, const std::string& kernel, const std::string& rows,
                                           std::vector<Edit>& edits) {
    const std::regex launch("\\b" + kernel + "\\s*<<<");
    std::smatch lm;
    if (!std::regex_search(src, lm, launch)) return "no launch of " + kernel;
    const std::size_t lpos = static_cast<std::size_t>(lm.position(0) + lm.length(0)) - 3;
    auto g = ceil_launch(src.substr(lpos), rows, true);
    if (!g) return "the launch is not <<<(" + rows + " + block - 1) / block, block>>>";
    const std::string block = g->block;
    if (std::isdigit(static_cast<unsigned char>(block[0]))) {
        if (std::stoll(block) % 32 != 0) return "the block size " + block + " is not a multiple of 32";
    } else {
        try {  // a tunable block size: every value must make whole warps
            for (const auto& t : parse_tunables(src).params)
                if (t.name == block)
                    for (long long v : t.values)
                        if (v % 32 != 0) return "the block size " + block + " may be " + std::to_string(v) + ", not a multiple of 32";
        } catch (const Error&) {
        }
    }
    edits.push_back({lpos, g->len,
                     "<<<static_cast<unsigned>((static_cast<long long>(" + rows + ") * 32 + " + block + " - 1) / " + block + "), " + block});
    return std::nullopt;
}

/** `out` with the warp shuffles' butterflies (kf_warp_sum, kf_warp_max, kf_warp_min) after its includes. */
std::string with_warp_butterflies(std::string out) {
    out.insert(after_includes(out),
               std::string(after_includes(out) ? "\n" : "") +
                   "// Butterflies of warp shuffles: every lane ends with the warp's sum, maximum or minimum.\n"
                   "template <typename T> __device__ __forceinline__ T kf_warp_sum(T v) {\n"
                   "    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n    return v;\n}\n"
                   "template <typename T> __device__ __forceinline__ T kf_warp_max(T v) {\n"
                   "    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));\n    return v;\n}\n"
                   "template <typename T> __device__ __forceinline__ T kf_warp_min(T v) {\n"
                   "    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));\n    return v;\n}\n");
    return out;
}

/**
 * warp-rows: a kernel with a thread per row (`r = blockIdx.x * blockDim.x + threadIdx.x; if
 * (r >= rows) return;`) whose loops over the row are reductions (`acc += e`, `acc =
 * fmaxf(acc, e)`...) or stores becomes a kernel with a warp per row: each lane takes every
 * 32nd column, a reduction ends with a butterfly of warp shuffles (so every lane holds the
 * row's value), and the launch has 32 threads per row.
 */
TransformResult warp_rows(const std::string& src) {
    if (src.find("kf_lane") != std::string::npos) return refuse("already a warp per row");
    static const std::regex index("(const\\s+)?(int|long long)\\s+(\\w+)\\s*=\\s*blockIdx\\.x\\s*\\*\\s*blockDim\\.x\\s*\\+\\s*threadIdx\\.x\\s*;"
                                  "\\s*if\\s*\\(\\s*\\3\\s*>=\\s*(\\w+)\\s*\\)\\s*return\\s*;");
    std::smatch m;
    if (!std::regex_search(src, m, index))
        return refuse("no thread-per-row kernel (r = blockIdx.x * blockDim.x + threadIdx.x; if (r >= rows) return; then loops over the row)");
    const std::size_t at = static_cast<std::size_t>(m.position(0));
    const std::string type = m[2], r = m[3], rows = m[4];
    // The kernel around it: its name and its body.
    const std::size_t global = src.rfind("__global__", at);
    if (global == std::string::npos) return refuse("the row index is not in a __global__ kernel");
    static const std::regex head("__global__\\s+void\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?(\\w+)\\s*\\(");
    std::smatch h;
    const std::string from_global = src.substr(global);
    if (!std::regex_search(from_global, h, head) || h.position(0) != 0) return refuse("cannot read the kernel's name");
    const std::string kernel = h[1];
    const std::size_t brace = src.find('{', global);
    const std::size_t end = brace == std::string::npos ? brace : closing(src, brace);
    if (end == std::string::npos || brace > at) return refuse("cannot find the kernel's body");

    std::vector<Edit> edits;
    const std::size_t body_from = static_cast<std::size_t>(m.position(0) + m.length(0));
    int loops = 0;
    static const std::regex for_word("\\bfor\\b");
    for (auto it = std::sregex_iterator(src.begin() + static_cast<long>(body_from), src.begin() + static_cast<long>(end), for_word);
         it != std::sregex_iterator(); ++it) {
        const std::size_t pos = body_from + static_cast<std::size_t>(it->position(0));
        if (auto why = warp_row_loop(src, pos, body_from, end, edits)) return refuse(*why);
        ++loops;
    }
    if (loops == 0) return refuse("no loop over the row in the kernel");
    if (auto why = warp_row_launch(src, kernel, rows, edits)) return refuse(*why);
    // The row index: one per warp.
    edits.push_back({at, src.find(';', at) - at,
                     "const int kf_lane = threadIdx.x & 31;\n    " + m[1].str() + type + " " + r + " = static_cast<" + type +
                         ">((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5)"});
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
    std::string out = src;
    for (const auto& e : edits) out.replace(e.pos, e.len, e.text);
    return {with_warp_butterflies(out), {}};
}

/**
 * vector-loads: a one-element-per-thread kernel over float tensors (`i = blockIdx.x *
 * blockDim.x + threadIdx.x;` then `if (i < n) <statement>` or `if (i >= n) return; <body>`)
 * whose body reads and writes its tensors at [i] only, without control flow, takes 4
 * consecutive elements per thread: one float4 load per input and one float4 store per output
 * where the 4 are inside and every pointer is 16-byte aligned, scalar accesses otherwise; the
 * grid shrinks 4 times.
 */
TransformResult vector_loads(const std::string& src) {
    if (src.find("kf_full") != std::string::npos) return refuse("already vector loads");
    static const std::regex index(
        "(?:const\\s+)?(int|long long|size_t|int64_t|unsigned)\\s+(\\w+)\\s*=\\s*(?:\\(\\s*(?:long long|size_t|int64_t)\\s*\\)\\s*blockIdx\\.x|"
        "static_cast<\\s*(?:long long|size_t|int64_t)\\s*>\\s*\\(\\s*blockIdx\\.x\\s*\\)|blockIdx\\.x)\\s*\\*\\s*blockDim\\.x\\s*\\+\\s*"
        "threadIdx\\.x\\s*;\\s*if\\s*\\(\\s*\\2\\s*(<|>=)\\s*(\\w+)\\s*\\)\\s*(return\\s*;)?");
    std::smatch m;
    if (!std::regex_search(src, m, index) || (m[3] == "<") == m[5].matched)
        return refuse("no one-element-per-thread kernel (i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ... or if (i >= n) return;)");
    const std::string type = m[1], i = m[2], n = m[4];
    const std::size_t at = static_cast<std::size_t>(m.position(0)), after = at + static_cast<std::size_t>(m.length(0));
    const std::size_t global = src.rfind("__global__", at);
    const std::size_t open = global == std::string::npos ? global : src.find('(', global);
    const std::size_t brace = open == std::string::npos ? open : src.find('{', closing(src, open));
    const std::size_t kend = brace == std::string::npos ? brace : closing(src, brace);
    if (kend == std::string::npos || brace > at) return refuse("the index is not in a __global__ kernel");
    // The kernel's float pointers, and whether each is const (an input).
    std::map<std::string, bool> floats;
    const std::string params = src.substr(open + 1, closing(src, open) - open - 1);
    static const std::regex ptr("(const\\s+)?(\\w+)\\s*\\*\\s*(?:__restrict__\\s*)?(\\w+)");
    for (auto it = std::sregex_iterator(params.begin(), params.end(), ptr); it != std::sregex_iterator(); ++it)
        if ((*it)[2] == "float") floats[(*it)[3]] = (*it)[1].matched;
    // The body: the guarded statement, or the rest of the kernel after the early return.
    std::size_t bend = kend;
    if (m[3] == "<") {
        bend = statement_end(src, after, kend);
        if (bend == std::string::npos) return refuse("cannot read the guarded statement");
        if (src.substr(bend, kend - bend).find_first_not_of(" \t\r\n") != std::string::npos)
            return refuse("code after the guarded statement");
    }
    std::string body = src.substr(after, bend - after);
    static const std::regex control("\\b(if|for|while|switch|goto|return|do)\\b");
    if (std::regex_search(body, control)) return refuse("control flow in the body: each element must take the same path");
    // Every tensor access is p[i]; outputs are written once with '=' and not read.
    static const std::regex access("\\b(\\w+)\\s*\\[([^\\]]*)\\]\\s*(=(?!=)|[-+*/]=)?");
    std::set<std::string> inputs, outputs;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), access); it != std::sregex_iterator(); ++it) {
        const std::string p = (*it)[1];
        auto f = floats.find(p);
        if (f == floats.end()) return refuse("'" + p + "[...]' is not a float tensor of the kernel: the loads are written for float");
        if (trim((*it)[2].str()) != i) return refuse(p + "[" + trim((*it)[2].str()) + "]: a tensor read at another index than " + i);
        const std::string op = (*it)[3];
        if (op.empty()) {
            if (!f->second) return refuse("the body reads its output " + p);
            inputs.insert(p);
        } else {
            if (op != "=" || f->second) return refuse("'" + p + "[" + i + "] " + op + "': an output is written once with =");
            if (!outputs.insert(p).second) return refuse("the output " + p + " is written twice");
        }
    }
    if (outputs.empty()) return refuse("the body writes no float tensor at [" + i + "]");
    for (const auto& o : outputs)
        if (inputs.count(o)) return refuse("the body reads its output " + o);
    // The grid: (count + block - 1) / block becomes (count + 4 * block - 1) / (4 * block).
    static const std::regex launch("<<<\\s*[^,]+,\\s*(\\w+)");
    std::smatch lm;
    const std::string host = src.substr(kend);
    if (!std::regex_search(host, lm, launch)) return refuse("no launch after the kernel");
    const std::string b = lm[1];
    std::string out_src = src;
    const std::regex grid_named("\\(\\s*(\\w+)\\s*\\+\\s*\\(?\\s*" + b + "\\s*-\\s*1\\s*\\)?\\s*\\)\\s*/\\s*" + b + "\\b");
    std::string grid_repl = "($1 + 4 * " + b + " - 1) / (4 * " + b + ")";
    std::regex grid = grid_named;
    if (std::isdigit(static_cast<unsigned char>(b[0]))) {
        grid = std::regex("\\(\\s*(\\w+)\\s*\\+\\s*" + std::to_string(std::stoll(b) - 1) + "\\s*\\)\\s*/\\s*" + b + "\\b");
        grid_repl = "($1 + " + std::to_string(4 * std::stoll(b) - 1) + ") / " + std::to_string(4 * std::stoll(b));
    }
    std::string host_new = std::regex_replace(host, grid, grid_repl, std::regex_constants::format_first_only);
    if (host_new == host) return refuse("the grid is not (n + " + b + " - 1) / " + b + ", so it cannot be shrunk");
    // The body for element kf_k: inputs from the vectors when full, outputs into arrays.
    std::string nb = body;
    for (const auto& p : inputs)
        nb = std::regex_replace(nb, std::regex("\\b" + p + "\\s*\\[[^\\]]*\\]"), "(kf_full ? kf_in_" + p + "[kf_k] : " + p + "[" + i + "])");
    for (const auto& p : outputs) {
        // p[i] = E;  ->  { const float kf_e = E; if (kf_full) kf_out_p[kf_k] = kf_e; else p[i] = kf_e; }
        std::smatch sm;
        if (!std::regex_search(nb, sm, std::regex("\\b" + p + "\\s*\\[[^\\]]*\\]\\s*=")))
            return refuse("cannot read the store to " + p);
        const std::size_t from = static_cast<std::size_t>(sm.position(0) + sm.length(0));
        const std::size_t e_end = statement_end(nb, from, nb.size());
        if (e_end == std::string::npos) return refuse("cannot read the store to " + p);
        nb = nb.substr(0, static_cast<std::size_t>(sm.position(0))) + "{ const float kf_e = (" + trim(nb.substr(from, e_end - 1 - from)) +
             "); if (kf_full) kf_out_" + p + "[kf_k] = kf_e; else " + p + "[" + i + "] = kf_e; }" + nb.substr(e_end);
    }
    std::string aligned;
    for (const auto& p : inputs) aligned += (aligned.empty() ? "" : " | ") + std::string("reinterpret_cast<unsigned long long>(") + p + ")";
    for (const auto& p : outputs) aligned += " | reinterpret_cast<unsigned long long>(" + p + ")";
    std::ostringstream k;
    k << "const long long kf_base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;\n"
      << "    if (kf_base >= " << n << ") return;\n"
      << "    // Four elements per thread: float4 loads and stores where all four are inside and aligned.\n"
      << "    const bool kf_full = kf_base + 4 <= " << n << " && ((" << aligned << ") & 15) == 0;\n";
    for (const auto& p : inputs)
        k << "    const float4 kf_v_" << p << " = kf_full ? *reinterpret_cast<const float4*>(" << p
          << " + kf_base) : make_float4(0.f, 0.f, 0.f, 0.f);\n"
          << "    const float kf_in_" << p << "[4] = {kf_v_" << p << ".x, kf_v_" << p << ".y, kf_v_" << p << ".z, kf_v_" << p << ".w};\n";
    for (const auto& p : outputs) k << "    float kf_out_" << p << "[4];\n";
    k << "#pragma unroll\n"
      << "    for (int kf_k = 0; kf_k < 4; ++kf_k) {\n"
      << "        if (!kf_full && kf_base + kf_k >= " << n << ") break;\n"
      << "        const " << type << " " << i << " = static_cast<" << type << ">(kf_base + kf_k);\n"
      << "        " << trim(nb) << "\n"
      << "    }\n";
    for (const auto& p : outputs)
      k << "    if (kf_full) *reinterpret_cast<float4*>(" << p << " + kf_base) = make_float4(kf_out_" << p << "[0], kf_out_" << p
        << "[1], kf_out_" << p << "[2], kf_out_" << p << "[3]);\n";
    out_src = src.substr(0, at) + k.str() + src.substr(bend, kend - bend) + host_new;
    return {out_src, {}};
}

class TransformExpert final : public Expert {
public:
    std::string name() const override { return "transform"; }
    std::map<DiagnosisClass, double> priors() const override {
        using C = DiagnosisClass;
        return {{C::Memory, 0.4}, {C::Latency, 0.5}, {C::Occupancy, 0.5}, {C::Compute, 0.2}};
    }
    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        refusal_.clear();
        if (ctx.backend != Backend::Cuda || !ctx.parent) {
            refusal_ = "the rewrites are for CUDA sources";
            return std::nullopt;
        }
        std::string reasons;
        for (const auto& t : code_transforms()) {
            TransformResult r = t.apply(ctx.parent->source);
            if (!r.source) {
                reasons += (reasons.empty() ? "" : "; ") + t.name + ": " + r.refusal;
                continue;
            }
            if (ctx.tried && ctx.tried->count(proposal_key(*r.source, ctx.parent->tunables))) continue;
            Proposal p;
            p.source = *r.source;
            p.tunables = ctx.parent->tunables;
            p.family = ctx.parent->family;
            p.expert = name();
            p.parents = {ctx.parent->id};
            p.rationale = "rewrite " + t.name + ": " + t.description;
            return p;
        }
        refusal_ = reasons.empty() ? "every rewrite of the parent has been tried" : reasons;
        return std::nullopt;
    }
};

}  // namespace

const std::vector<CodeTransform>& code_transforms() {
    static const std::vector<CodeTransform> t = {
        {"block-size-tunable", "the literal block size of the launches becomes the tunable KF_BLOCK", block_size_tunable},
        {"launch-bounds", "__launch_bounds__ of the tunable block size on every kernel", launch_bounds},
        {"grid-stride", "a grid-stride loop with KF_ITEMS elements per thread instead of one", grid_stride},
        {"warp-rows", "a warp per row instead of a thread: lanes take every 32nd column, reductions end in warp shuffles",
         warp_rows},
        {"vector-loads", "4 elements per thread with float4 loads and stores where aligned, instead of one element", vector_loads},
        {"smem-tile", "neighbour reads at constant offsets of the index from a shared-memory tile of the block's stretch and its halo",
         rewrites::smem_tile},
    };
    return t;
}

std::unique_ptr<Expert> make_transform_expert() { return std::make_unique<TransformExpert>(); }

}  // namespace kf
