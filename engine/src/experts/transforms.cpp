// Named rewrites of CUDA sources (kf/transforms.h), each refusing cleanly where it does not apply.
#include "kf/transforms.h"

#include <regex>
#include <set>

#include "kf/tunables.h"

namespace kf {

namespace {

TransformResult refuse(std::string why) { return {std::nullopt, std::move(why)}; }

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
    std::size_t at = 0;
    for (std::size_t p = out.find("#include"); p != std::string::npos; p = out.find("#include", p + 1)) at = out.find('\n', p) + 1;
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
    static const std::regex grid("<<<\\s*\\(\\s*(\\w+)\\s*\\+\\s*\\(?\\s*(\\w+)\\s*-\\s*1\\s*\\)?\\s*\\)\\s*/\\s*\\2\\s*,\\s*\\2");
    static const std::regex literal_grid("<<<\\s*\\(\\s*(\\w+)\\s*\\+\\s*([0-9]+)\\s*\\)\\s*/\\s*([0-9]+)\\s*,\\s*\\3");
    std::smatch g;
    std::string b;
    if (std::regex_search(out, g, grid) && g[1] == n) {
        b = g[2];
    } else if (std::regex_search(out, g, literal_grid) && g[1] == n && std::stoll(g[2]) + 1 == std::stoll(g[3])) {
        b = g[3];
    } else {
        return refuse("the launch is not <<<(" + n + " + block - 1) / block, block>>>, so its grid cannot be shrunk");
    }
    out = g.prefix().str() + "<<<(" + n + " + " + b + " * KF_ITEMS - 1) / (" + b + " * KF_ITEMS), " + b + g.suffix().str();
    std::size_t at = 0;
    for (std::size_t p = out.find("#include"); p != std::string::npos; p = out.find("#include", p + 1)) at = out.find('\n', p) + 1;
    out.insert(at, std::string(at ? "\n" : "") + "#define KF_ITEMS 4  // @kf tunable values(1, 2, 4, 8, 16)\n");
    return {out, {}};
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
    };
    return t;
}

std::unique_ptr<Expert> make_transform_expert() { return std::make_unique<TransformExpert>(); }

}  // namespace kf
