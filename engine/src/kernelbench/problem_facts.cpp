// What the prompts and the library know of a KernelBench problem: its op class from the
// PyTorch operations it calls, its input shapes, its baselines; and which problems the
// bridge does not run.
#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

#include "kf/kernelbench_search.h"
#include "kf/paths.h"

namespace kf::kb {

using nlohmann::json;

namespace {

/** The source with Python comments and docstrings blanked (strings kept otherwise). */
std::string python_code(const std::string& src) {
    std::string out;
    std::istringstream in(src);
    std::string line;
    bool doc = false;
    while (std::getline(in, line)) {
        std::size_t q = line.find("\"\"\"");
        if (doc) {
            if (q != std::string::npos) doc = false;
            out += "\n";
            continue;
        }
        if (q != std::string::npos && line.find("\"\"\"", q + 3) == std::string::npos) {
            doc = true;
            out += line.substr(0, q) + "\n";
            continue;
        }
        std::size_t hash = line.find('#');
        out += (hash == std::string::npos ? line : line.substr(0, hash)) + "\n";
    }
    return out;
}

struct OpClass {
    const char* name;
    const char* pattern;
};

/** Heaviest first: a problem's class is the first that matches. */
const std::vector<OpClass>& op_classes() {
    static const std::vector<OpClass> v = {
        {"conv", R"(\bnn\.Conv(?:Transpose)?[123]d\b|\bF\.conv(?:_transpose)?[123]d\b|\btorch\.conv(?:_transpose)?[123]d\b)"},
        {"gemm",
         R"(\bnn\.Linear\b|\bnn\.Bilinear\b|\bF\.linear\b|\btorch\.(?:matmul|mm|bmm|addmm|baddbmm|einsum|tensordot|inner|outer)\b|\.(?:matmul|mm|bmm)\s*\(|[\w\)\]]\s*@\s*[\w\(])"},
        {"attention", R"(\bscaled_dot_product_attention\b|\bnn\.MultiheadAttention\b)"},
        {"norm",
         R"(\bnn\.(?:LayerNorm|BatchNorm[123]d|GroupNorm|InstanceNorm[123]d|RMSNorm|LocalResponseNorm)\b|\bF\.(?:layer_norm|batch_norm|group_norm|instance_norm|normalize|rms_norm)\b|\btorch\.(?:norm|linalg\.norm)\b|\.norm\s*\()"},
        {"softmax", R"(\b(?:log_)?softmax\b|\bnn\.(?:Log)?Softmax\b)"},
        {"pooling", R"(\bnn\.(?:Adaptive)?(?:Max|Avg)Pool[123]d\b|\bF\.(?:adaptive_)?(?:max|avg)_pool[123]d\b)"},
        {"scan", R"(\b(?:torch\.)?cum(?:sum|prod|max|min)\b|\.cum(?:sum|prod|max|min)\s*\()"},
        {"reduction",
         R"(\btorch\.(?:sum|mean|max|min|amax|amin|argmax|argmin|prod|logsumexp|var|std)\b|\.(?:sum|mean|max|min|amax|amin|argmax|argmin|prod|logsumexp|var|std)\s*\(|\bF\.(?:cross_entropy|nll_loss|mse_loss|kl_div|smooth_l1_loss|huber_loss|cosine_similarity|triplet_margin_loss|hinge_embedding_loss)\b|\bnn\.\w+Loss\b)"},
        {"elementwise",
         R"(\btorch\.(?:relu|sigmoid|tanh|exp|log|abs|clamp|where|sqrt|rsqrt|sin|cos|pow|erf|add|mul|sub|div|maximum|minimum)\b|\bF\.(?:relu|relu6|gelu|silu|selu|elu|leaky_relu|hardtanh|hardsigmoid|hardswish|softplus|softsign|mish|dropout|tanh|sigmoid)\b|\bnn\.(?:ReLU|GELU|SiLU|ELU|SELU|LeakyReLU|Tanh|Sigmoid|Hardtanh|Softplus|Mish|Dropout)\b|\.(?:relu|sigmoid|tanh|exp|clamp|abs|pow|sqrt)\s*\(|return\s+[^\n]*[\*\+\-/])"},
    };
    return v;
}

std::string fmt_ms(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

}  // namespace

std::string ProblemFacts::baselines_line() const {
    std::string s = eager_ms > 0 ? "eager PyTorch " + fmt_ms(eager_ms) + " ms" : "eager PyTorch: not timed";
    if (compile_ms > 0) s += ", torch.compile " + fmt_ms(compile_ms) + " ms";
    else if (!compile_error.empty()) s += ", torch.compile failed (" + compile_error.substr(0, 120) + ")";
    return s;
}

std::string op_class_of(const std::string& source, std::vector<std::string>* ops) {
    const std::string code = python_code(source);
    std::string found;
    for (const auto& c : op_classes()) {
        static thread_local std::map<const char*, std::regex> compiled;
        auto it = compiled.find(c.pattern);
        if (it == compiled.end()) it = compiled.emplace(c.pattern, std::regex(c.pattern, std::regex::ECMAScript)).first;
        bool hit = false;
        for (auto m = std::sregex_iterator(code.begin(), code.end(), it->second); m != std::sregex_iterator(); ++m) {
            hit = true;
            if (!ops) break;
            std::string what = m->str(0);
            while (!what.empty() && (what.back() == '(' || what.back() == ' ')) what.pop_back();
            if (std::string(c.name) == "elementwise" && what.rfind("return", 0) == 0) what = "arithmetic";
            if (std::find(ops->begin(), ops->end(), what) == ops->end()) ops->push_back(what);
        }
        if (hit && found.empty()) found = c.name;
        if (hit && !ops) break;
    }
    return found.empty() ? "other" : found;
}

std::string shapes_from_source(const std::string& source) {
    const std::string code = python_code(source);
    std::string out;
    std::istringstream in(code);
    std::string line;
    static const std::regex constant(R"(^([A-Za-z_]\w*)\s*=\s*([^=].*?)\s*$)");
    bool in_inputs = false;
    std::string inputs;
    while (std::getline(in, line)) {
        if (line.rfind("def get_inputs", 0) == 0) {
            in_inputs = true;
            continue;
        }
        if (in_inputs) {
            if (!line.empty() && line[0] != ' ' && line[0] != '\t') in_inputs = false;
            else {
                std::size_t a = line.find_first_not_of(" \t");
                if (a != std::string::npos) inputs += (inputs.empty() ? "" : "; ") + line.substr(a);
                continue;
            }
        }
        std::smatch m;
        if (!line.empty() && line[0] != ' ' && line[0] != '\t' && std::regex_match(line, m, constant) &&
            m[2].str().size() < 80 && m[2].str().find('(') == std::string::npos)
            out += (out.empty() ? "" : ", ") + m[1].str() + " = " + m[2].str();
    }
    if (!inputs.empty()) out += (out.empty() ? "" : "; ") + std::string("get_inputs(): ") + inputs;
    return out;
}

ProblemFacts problem_facts(const Problem& p, const json& baselines, const json& inputs) {
    ProblemFacts f;
    f.key = p.key();
    f.source = read_text_file(p.file);
    f.op_class = op_class_of(f.source, &f.ops);
    f.shapes = shapes_from_source(f.source);
    if (inputs.is_array() && !inputs.empty()) {
        std::string list;
        for (const auto& i : inputs)
            if (i.is_string()) list += (list.empty() ? "" : ", ") + i.get<std::string>();
        if (!list.empty()) f.shapes = "inputs: " + list + (f.shapes.empty() ? "" : " (" + f.shapes + ")");
    }
    if (baselines.is_object()) {
        if (auto e = baselines.find("eager"); e != baselines.end() && e->is_object()) f.eager_ms = e->value("median_ms", 0.0);
        if (auto c = baselines.find("compile"); c != baselines.end() && c->is_object()) {
            f.compile_ms = c->value("median_ms", 0.0);
            f.compile_error = c->value("error", "");
        }
    }
    return f;
}

std::string unsupported_reason(const Problem& p) {
    if (p.level == 4)
        return "not supported: Level 4 problems are whole Hugging Face models (they need the transformers package, "
               "model weights and a tokenizer); the bridge runs levels 1 to 3";
    return {};
}

std::string reference_as_model_new(const std::string& problem_source) {
    std::string s = problem_source;
    if (!s.empty() && s.back() != '\n') s += '\n';
    return s + "\n\nclass ModelNew(Model):\n    \"\"\"The reference itself: PyTorch computes it (to be replaced by kernels).\"\"\"\n    pass\n";
}

}  // namespace kf::kb
