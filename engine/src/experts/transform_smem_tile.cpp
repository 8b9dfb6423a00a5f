// smem-tile (kf/transforms.h): the neighbour reads of a one-element-per-thread kernel come from
// a shared-memory tile holding the block's stretch of the input and its halo.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <variant>
#include <vector>

#include "kf/text.h"
#include "transform_parts.h"

namespace kf::rewrites {

namespace {

using util::trim;

/** Offsets farther than this from the index are refused: the halo would outgrow the block's own stretch. */
constexpr long long kMaxOffset = 32;
/** At most this many tiled inputs: with 1024 threads and 8-byte elements they fit in 48 KiB of shared memory. */
constexpr std::size_t kMaxInputs = 4;

/** A one-element-per-thread kernel: where its index and its guard are, and what they say. */
struct ElementKernel {
    std::size_t index_at = 0, index_end = 0;  ///< the index declaration, up to its ';'
    std::size_t guard_at = 0, guard_end = 0;  ///< `if (i < n)`, or `if (i >= n) return;`
    std::size_t body_end = 0;                 ///< the end of the guarded statement, or of the kernel
    std::size_t head = 0, params_open = 0, brace = 0, kernel_end = 0;
    std::string index, bound, name;
};

/** A kernel parameter that is a pointer: its element type and whether it is const. */
struct Pointer {
    std::string type;
    bool is_const = false;
};

/** An input read at constant offsets of the index: its element type and the smallest and largest offsets (with 0). */
struct TiledInput {
    std::string name, type;
    long long lo = 0, hi = 0;
    std::string halo() const { return std::to_string(hi - lo); }
};

/** `s` on one line, whitespace runs as one space, cut to a readable length. */
std::string one_line(const std::string& s) {
    std::string out;
    for (char c : s) {
        const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
        if (space && (out.empty() || out.back() == ' ')) continue;
        out += space ? ' ' : c;
    }
    out = trim(out);
    return out.size() > 60 ? out.substr(0, 57) + "..." : out;
}

/** The kernel whose head starts at `head` (`__global__ void [__launch_bounds__(...)] name(`); false when it cannot be
 * read. */
bool read_kernel(const std::string& src, std::size_t head, ElementKernel& k) {
    static const std::regex head_re("__global__\\s+void\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?(\\w+)\\s*\\(");
    std::smatch h;
    if (!std::regex_search(src.begin() + static_cast<long>(head), src.end(), h, head_re,
                           std::regex_constants::match_continuous))
        return false;
    k.head = head;
    k.name = h[1];
    k.params_open = head + static_cast<std::size_t>(h.length(0)) - 1;
    const std::size_t params_close = closing(src, k.params_open);
    k.brace = params_close == std::string::npos ? params_close : src.find('{', params_close);
    k.kernel_end = k.brace == std::string::npos ? k.brace : closing(src, k.brace);
    return k.kernel_end != std::string::npos;
}

/**
 * The guard after the index declaration: `if (i < n) <statement>` or `if (i >= n) return;`,
 * n any expression without conditions. False when the first `if` on the index is neither.
 */
bool read_guard(const std::string& src, ElementKernel& k) {
    const std::regex head("\\bif\\s*\\(\\s*" + k.index + "\\s*(<|>=)");
    std::smatch g;
    const auto from = src.begin() + static_cast<long>(k.index_end), to = src.begin() + static_cast<long>(k.kernel_end);
    if (!std::regex_search(from, to, g, head)) return false;
    k.guard_at = k.index_end + static_cast<std::size_t>(g.position(0));
    const std::size_t open = src.find('(', k.guard_at), close = closing(src, open);
    if (close == std::string::npos || close > k.kernel_end) return false;
    const std::string op = g[1];
    std::string bound = trim(src.substr(open + 1, close - open - 1));
    bound = trim(bound.substr(bound.find(op) + op.size()));
    static const std::regex condition("&&|\\|\\||\\?|,");
    if (bound.empty() || std::regex_search(bound, condition) ||
        std::regex_search(bound, std::regex("\\b" + k.index + "\\b")))
        return false;
    k.bound = bound;
    static const std::regex early_return("\\s*return\\s*;");
    std::smatch r;
    const bool returns = std::regex_search(src.begin() + static_cast<long>(close) + 1, to, r, early_return,
                                           std::regex_constants::match_continuous);
    if ((op == ">=") != returns) return false;
    if (returns) {
        k.guard_end = close + 1 + static_cast<std::size_t>(r.length(0));
        k.body_end = k.kernel_end;
    } else {
        k.guard_end = close + 1;
        k.body_end = statement_end(src, k.guard_end, k.kernel_end);
        if (k.body_end == std::string::npos) return false;
    }
    return true;
}

/** The first kernel with `i = blockIdx.x * blockDim.x + threadIdx.x;` (the references' index types and casts) and a
 * guard on i. */
std::optional<ElementKernel> element_kernel(const std::string& src) {
    static const std::regex index(
        "(?:const\\s+)?(?:int|long long|long|std::size_t|size_t|int64_t|unsigned long long|unsigned "
        "int|unsigned)\\s+(\\w+)\\s*=\\s*"
        "(?:\\(\\s*(?:long long|std::size_t|size_t|int64_t|unsigned)\\s*\\)\\s*blockIdx\\.x|"
        "static_cast<\\s*(?:long "
        "long|std::size_t|size_t|int64_t|unsigned)\\s*>\\s*\\(\\s*blockIdx\\.x\\s*\\)|blockIdx\\.x)"
        "\\s*\\*\\s*blockDim\\.x\\s*\\+\\s*threadIdx\\.x\\s*;");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), index); it != std::sregex_iterator(); ++it) {
        ElementKernel k;
        k.index_at = static_cast<std::size_t>(it->position(0));
        k.index_end = k.index_at + static_cast<std::size_t>(it->length(0));
        k.index = (*it)[1];
        const std::size_t head = src.rfind("__global__", k.index_at);
        if (head == std::string::npos || !read_kernel(src, head, k) || k.brace > k.index_at ||
            k.kernel_end < k.index_end)
            continue;
        if (read_guard(src, k)) return k;
    }
    return std::nullopt;
}

/** `p` past whitespace, comments and preprocessor lines, up to `end`. */
std::size_t skip_blank(const std::string& s, std::size_t p, std::size_t end) {
    while (p < end) {
        if (std::isspace(static_cast<unsigned char>(s[p]))) {
            ++p;
        } else if (s.compare(p, 2, "//") == 0 || s[p] == '#') {
            p = s.find('\n', p);
            if (p == std::string::npos) return end;
        } else if (s.compare(p, 2, "/*") == 0) {
            p = s.find("*/", p + 2);
            if (p == std::string::npos) return end;
            p += 2;
        } else {
            break;
        }
    }
    return std::min(p, end);
}

/** `type name [= init];` with no control flow, block or barrier in it. */
bool plain_declaration(const std::string& stmt) {
    static const std::regex control(
        "\\b(?:return|if|else|for|while|do|switch|case|goto|break|continue|asm|__syncthreads\\w*)\\b|[{}]");
    if (std::regex_search(stmt, control)) return false;
    static const std::regex decl(
        "(?:(?:const|constexpr|static|volatile|register)\\s+)*[A-Za-z_][\\w:]*(?:\\s*<[^<>;]*>)?(?:\\s+(?:long|int|"
        "short|char|double))*"
        "\\s*[*&]?\\s*(?:__restrict__\\s+)?[A-Za-z_]\\w*\\s*(?:=[\\s\\S]*)?;");
    return std::regex_match(stmt, decl);
}

/** Why the barrier cannot go right before the guard (something there may skip it), or "" when it can. */
std::string barrier_blocker(const std::string& src, const ElementKernel& k) {
    for (std::size_t p = k.brace + 1;;) {
        p = skip_blank(src, p, k.guard_at);
        if (p >= k.guard_at) return {};
        if (p == k.index_at) {
            p = k.index_end;
            continue;
        }
        const std::size_t e = statement_end(src, p, k.kernel_end);
        if (e == std::string::npos || e > k.guard_at || (p < k.index_at && e > k.index_at))
            return "the guard on " + k.index +
                   " is inside a block or branch: every thread of the block must reach the barrier before it";
        const std::string stmt = trim(src.substr(p, e - p));
        if (!plain_declaration(stmt))
            return "'" + one_line(stmt) + "' before the guard on " + k.index +
                   ": only plain declarations may come before it, so that every thread of the block reaches the "
                   "barrier";
        p = e;
    }
}

/** The kernel's pointer parameters by name, in order. */
std::vector<std::pair<std::string, Pointer>> pointer_params(const std::string& params) {
    static const std::regex ptr(
        "(const\\s+)?((?:unsigned\\s+|signed\\s+)?(?:long\\s+long|[A-Za-z_][\\w:]*))\\s*(const\\s*)?\\*\\s*(?:const\\s+"
        ")?"
        "(?:__restrict__\\s+)?(\\w+)\\s*(?:,|$)");
    std::vector<std::pair<std::string, Pointer>> out;
    for (auto it = std::sregex_iterator(params.begin(), params.end(), ptr); it != std::sregex_iterator(); ++it)
        out.push_back({(*it)[4], Pointer{(*it)[2], (*it)[1].matched || (*it)[3].matched}});
    return out;
}

/** The tensors the kernel writes: `p[...] = `, `p[...] += `, `++p[...]`, `atomicAdd(&p[...], ...)`. */
std::set<std::string> written(const std::string& kernel) {
    static const std::regex store("\\b(\\w+)\\s*\\[[^\\]]*\\]\\s*(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\\+\\+|--)");
    static const std::regex pre("(?:\\+\\+|--)\\s*(\\w+)\\s*\\[");
    static const std::regex atomic("\\batomic\\w*\\s*\\(\\s*&?\\s*(\\w+)");
    std::set<std::string> out;
    for (const auto* re : {&store, &pre, &atomic})
        for (auto it = std::sregex_iterator(kernel.begin(), kernel.end(), *re); it != std::sregex_iterator(); ++it)
            out.insert((*it)[1]);
    return out;
}

/** Whether the access at `at` in `s` has its address taken (`&p[i]`, not `a & p[i]` or `a && p[i]`). */
bool address_taken(const std::string& s, std::size_t at) {
    auto before = [&](std::size_t p) -> char {
        while (p > 0 && std::isspace(static_cast<unsigned char>(s[p - 1]))) --p;
        return p > 0 ? s[p - 1] : '\0';
    };
    std::size_t p = at;
    while (p > 0 && std::isspace(static_cast<unsigned char>(s[p - 1]))) --p;
    if (p == 0 || s[p - 1] != '&') return false;
    const char c = before(p - 1);
    return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ')' || c == ']' || c == '&');
}

/** Top-level pieces of a launch configuration `grid, block[, shared[, stream]]`. */
std::vector<std::string> launch_args(const std::string& config) {
    std::vector<std::string> out(1);
    int depth = 0;
    for (char c : config) {
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
        if (c == ',' && depth == 0)
            out.emplace_back();
        else
            out.back() += c;
    }
    for (auto& a : out) a = trim(a);
    return out;
}

/** The bytes of a tile with `block` threads per block. */
std::string tile_bytes(const TiledInput& t, const std::string& block) {
    return "(" + block + " + " + t.halo() + ") * sizeof(" + t.type + ")";
}

/** Where tile `count` starts: the tiles before it one after the other, each rounded up to 16 bytes ("" for the first).
 */
std::string tiles_before(const std::vector<TiledInput>& tiles, const std::string& block, std::size_t count) {
    std::string out;
    for (std::size_t t = 0; t < count; ++t)
        out += (out.empty() ? "(" : " + (") + tile_bytes(tiles[t], block) + " + 15) / 16 * 16";
    return out;
}

/** The bytes of all the tiles. */
std::string all_tiles(const std::vector<TiledInput>& tiles, const std::string& block) {
    const std::string before = tiles_before(tiles, block, tiles.size() - 1);
    return before + (before.empty() ? "" : " + ") + tile_bytes(tiles.back(), block);
}

struct Edit {
    std::size_t pos, len;
    std::string text;
};

/** A read of a kernel's pointer at the index plus a literal, in the body. */
struct Read {
    std::size_t pos, len;
    std::string name;
    long long offset;
};

/** What the body reads at constant offsets of the index, and the inputs to tile. */
struct Reads {
    std::vector<Read> reads;
    std::vector<TiledInput> tiles;  ///< in the order of the parameters
};

/** The reads of the body's const inputs at `i` plus or minus a literal, or the refusal. */
std::variant<Reads, std::string> read_offsets(const std::string& body, const std::string& i,
                                              const std::vector<std::pair<std::string, Pointer>>& params,
                                              const std::set<std::string>& writes) {
    auto param = [&](const std::string& name) -> const Pointer* {
        for (const auto& [n, p] : params)
            if (n == name) return &p;
        return nullptr;
    };
    const std::regex at_offset("\\b(\\w+)\\s*\\[\\s*" + i + "\\s*(?:([+-])\\s*([0-9]+)[uUlL]*\\s*)?\\]");
    static const std::regex store_after("\\s*(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\\+\\+|--)");
    Reads out;
    std::map<std::string, TiledInput> inputs;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), at_offset); it != std::sregex_iterator(); ++it) {
        const std::string name = (*it)[1];
        const Pointer* p = param(name);
        const auto pos = static_cast<std::size_t>(it->position(0)), len = static_cast<std::size_t>(it->length(0));
        if (!p || address_taken(body, pos)) continue;
        const auto after = body.begin() + static_cast<long>(pos + len);
        if (std::regex_search(after, body.end(), store_after, std::regex_constants::match_continuous)) continue;
        const long long size = (*it)[2].matched ? std::stoll((*it)[3].str().substr(0, 18)) : 0;
        const long long offset = (*it)[2] == "-" ? -size : size;
        if (offset != 0 && writes.count(name))
            return name +
                   " is written and read at an offset (in place): a tile would hold values other threads overwrite";
        if (offset < -kMaxOffset || offset > kMaxOffset)
            return one_line(it->str()) + ": an offset beyond " + std::to_string(kMaxOffset) +
                   " would make the halo too large";
        if (!p->is_const) continue;
        out.reads.push_back({pos, len, name, offset});
        TiledInput& in = inputs[name];
        in.name = name;
        in.type = p->type;
        in.lo = std::min(in.lo, offset);
        in.hi = std::max(in.hi, offset);
    }
    for (const auto& [name, p] : params)
        if (auto in = inputs.find(name); in != inputs.end() && in->second.hi > in->second.lo)
            out.tiles.push_back(in->second);
    if (out.tiles.empty()) {
        std::string example;  // a read at a computed offset, to say why it is not one
        const std::regex at_index("\\b(\\w+)\\s*\\[\\s*" + i + "\\b[^\\]]*\\]");
        for (auto it = std::sregex_iterator(body.begin(), body.end(), at_index); it != std::sregex_iterator(); ++it)
            if (param((*it)[1]) && !std::regex_match(it->str(), at_offset)) {
                example = ": " + one_line(it->str()) + " is not a constant offset";
                break;
            }
        return "no const input read at a constant nonzero offset of " + i + " (" + i + " - 1, " + i + " + 2)" + example;
    }
    if (out.tiles.size() > kMaxInputs)
        return "more than " + std::to_string(kMaxInputs) + " inputs to tile: their tiles may not fit in shared memory";
    return out;
}

/** The launches of `kernel` with the tiles' bytes as their shared-memory size, or the refusal. */
std::variant<std::vector<Edit>, std::string> launch_edits(const std::string& src, const std::string& kernel,
                                                          const std::vector<TiledInput>& tiles) {
    std::vector<Edit> edits;
    const std::regex launch("\\b" + kernel + "\\s*<<<");
    static const std::regex simple("[A-Za-z_]\\w*|[0-9]+");
    static const std::regex zero("0[uUlL]*");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), launch); it != std::sregex_iterator(); ++it) {
        const auto open = static_cast<std::size_t>(it->position(0) + it->length(0));
        const std::size_t close = src.find(">>>", open);
        if (close == std::string::npos) return "cannot read a launch of " + kernel;
        const std::vector<std::string> args = launch_args(src.substr(open, close - open));
        if (args.size() < 2 || args.size() > 4) return "cannot read a launch of " + kernel;
        const std::string& block = args[1];
        if (!std::regex_match(block, simple))
            return "the block size of a launch of " + kernel + " (" + one_line(block) + ") is not a literal or a name";
        if (std::regex_search(src, std::regex("\\bdim3\\s+" + block + "\\b")))
            return "the block size of a launch of " + kernel + " is a dim3";
        if (args.size() >= 3 && !std::regex_match(args[2], zero))
            return "a launch of " + kernel + " already asks for shared memory (" + one_line(args[2]) + ")";
        std::string config = args[0] + ", " + block + ", " + all_tiles(tiles, block);
        if (args.size() == 4) config += ", " + args[3];
        edits.push_back({open, close - open, config});
    }
    if (edits.empty()) return "no launch of " + kernel + " to give the tiles' shared memory";
    return edits;
}

/** The body with each read of a tiled input from its tile where the element was loaded (inside [0, n)). */
std::string tiled_body(const std::string& body, const std::string& i, const Reads& r) {
    std::string out;
    std::size_t last = 0;
    for (const auto& read : r.reads) {
        const auto t =
            std::find_if(r.tiles.begin(), r.tiles.end(), [&](const TiledInput& in) { return in.name == read.name; });
        if (t == r.tiles.end()) continue;  // read at the index only: left to global memory
        const long long slot = read.offset - t->lo;
        const std::string tile =
            "kf_tile_" + read.name + "[threadIdx.x" + (slot ? " + " + std::to_string(slot) : "") + "]";
        const std::string global = body.substr(read.pos, read.len);
        std::string text = tile;  // at offset 0: inside, it passed the guard
        if (read.offset < 0)
            text = "(static_cast<long long>(" + i + ") >= " + std::to_string(-read.offset) + " ? " + tile + " : " +
                   global + ")";
        else if (read.offset > 0)
            text = "(static_cast<long long>(" + i + ") + " + std::to_string(read.offset) + " < kf_tile_n ? " + tile +
                   " : " + global + ")";
        out += body.substr(last, read.pos - last) + text;
        last = read.pos + read.len;
    }
    return out + body.substr(last);
}

/** The cooperative load of the tiles and the barrier, each line after the first indented by `indent`. */
std::string tile_load(const std::vector<TiledInput>& tiles, const std::string& bound, const std::string& indent) {
    std::string names;
    for (std::size_t t = 0; t < tiles.size(); ++t)
        names += (t == 0 ? "" : t + 1 == tiles.size() ? " and " : ", ") + tiles[t].name;
    std::ostringstream load;
    load << "// smem-tile: the block's stretch of " << names
         << (tiles.size() == 1 ? " with its halo" : " with their halos")
         << " in shared memory, loaded before the guard so that\n"
         << indent << "// every thread reaches the barrier. Elements outside [0, " << one_line(bound)
         << ") are not loaded: those reads stay global.\n"
         << indent << "extern __shared__ __align__(16) unsigned char kf_tile_smem[];\n"
         << indent << "const long long kf_tile_n = static_cast<long long>(" << bound << ");\n"
         << indent << "const long long kf_b0 = static_cast<long long>(blockIdx.x) * blockDim.x;\n";
    for (std::size_t t = 0; t < tiles.size(); ++t) {
        const TiledInput& in = tiles[t];
        const std::string before = tiles_before(tiles, "blockDim.x", t);
        load << indent << in.type << "* kf_tile_" << in.name << " = reinterpret_cast<" << in.type << "*>(kf_tile_smem"
             << (before.empty() ? "" : " + " + before) << ");\n"
             << indent << "for (unsigned kf_t = threadIdx.x; kf_t < blockDim.x + " << in.halo()
             << "; kf_t += blockDim.x) {\n"
             << indent << "    const long long kf_g = kf_b0 + kf_t" << (in.lo ? " - " + std::to_string(-in.lo) : "")
             << ";\n"
             << indent << "    if (kf_g >= 0 && kf_g < kf_tile_n) kf_tile_" << in.name << "[kf_t] = " << in.name
             << "[kf_g];\n"
             << indent << "}\n";
    }
    load << indent << "__syncthreads();\n" << indent;
    return load.str();
}

}  // namespace

/**
 * smem-tile: a one-element-per-thread kernel whose body reads const inputs at constant offsets
 * of the index (`x[i - 1]`, `x[i + 2]`) stages the block's stretch of each such input, with its
 * halo, in dynamic shared memory right before the guard (which every thread reaches); the reads
 * come from the tile where the element was loaded (inside [0, n)), from global memory otherwise,
 * and the launches ask for the tiles' bytes.
 */
TransformResult smem_tile(const std::string& src) {
    if (src.find("kf_tile_") != std::string::npos) return refuse("already tiled in shared memory (kf_tile_)");
    auto found = element_kernel(src);
    if (!found)
        return refuse(
            "no one-element-per-thread kernel (i = blockIdx.x * blockDim.x + threadIdx.x; "
            "then if (i < n) ... or if (i >= n) return;)");
    const ElementKernel& k = *found;
    const std::size_t previous = src.find_last_of(";}", k.head);  // the end of what precedes the kernel
    const std::size_t lead = previous == std::string::npos ? 0 : previous + 1;
    if (std::regex_search(src.substr(lead, k.head - lead), std::regex("\\btemplate\\s*<")))
        return refuse("the kernel " + k.name + " is a template: its element types are unknown at the launch");
    const std::string kernel = src.substr(k.brace, k.kernel_end + 1 - k.brace);
    if (std::regex_search(kernel, std::regex("\\bextern\\s+__shared__\\b")))
        return refuse("the kernel " + k.name + " already has dynamic shared memory");
    if (std::string why = barrier_blocker(src, k); !why.empty()) return refuse(why);

    const std::string body = src.substr(k.guard_end, k.body_end - k.guard_end);
    const std::string& i = k.index;
    const std::regex changed("\\b" + i + "\\s*(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\\+\\+|--)|(?:\\+\\+|--)\\s*" + i + "\\b");
    if (std::regex_search(body, changed))
        return refuse("the body changes " + i + ": the tile is laid out by its first value");
    const auto params = pointer_params(src.substr(k.params_open + 1, closing(src, k.params_open) - k.params_open - 1));
    auto reads = read_offsets(body, i, params, written(kernel));
    if (auto* why = std::get_if<std::string>(&reads)) return refuse(*why);
    const Reads& r = std::get<Reads>(reads);
    auto launches = launch_edits(src, k.name, r.tiles);
    if (auto* why = std::get_if<std::string>(&launches)) return refuse(*why);

    std::vector<Edit> edits = std::get<std::vector<Edit>>(launches);
    edits.push_back({k.guard_end, k.body_end - k.guard_end, tiled_body(body, i, r)});
    // The load goes right before the guard, at its indentation.
    const std::size_t line = src.rfind('\n', k.guard_at) + 1;
    std::string indent = src.substr(line, k.guard_at - line);
    if (indent.find_first_not_of(" \t") != std::string::npos) indent = "    ";
    edits.push_back({k.guard_at, 0, tile_load(r.tiles, k.bound, indent)});
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
    std::string out = src;
    for (const auto& e : edits) out.replace(e.pos, e.len, e.text);
    return {out, {}};
}

}  // namespace kf::rewrites
