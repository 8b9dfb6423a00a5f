// Task queries and the generated entry point (typed header and glue).
#include <cctype>
#include <cmath>
#include <sstream>

#include "kf/error.h"
#include "kf/task.h"

namespace kf {

std::vector<const TaskCase*> Task::cases_for(Backend b) const {
    std::vector<const TaskCase*> out;
    for (const auto& c : cases)
        if (c.primary && c.runs_on(b)) out.push_back(&c);
    for (const auto& c : cases)
        if (!c.primary && c.runs_on(b)) out.push_back(&c);
    return out;
}

const TaskCase& Task::primary_case(Backend b) const {
    for (const auto& c : cases)
        if (c.primary && c.runs_on(b)) return c;
    throw Error("task " + name + " has no primary case for the " + std::string(to_string(b)) + " backend");
}

const TaskCase* Task::find_case(const std::string& case_name) const {
    for (const auto& c : cases)
        if (c.name == case_name) return &c;
    return nullptr;
}

std::map<std::string, double> Task::variables(const TaskCase& c) const {
    std::map<std::string, double> vars;
    for (const auto& [k, v] : c.sizes) vars[k] = static_cast<double>(v);
    return vars;
}

std::vector<std::int64_t> Task::shape_of(const TensorSpec& t, const TaskCase& c) const {
    auto vars = variables(c);
    std::vector<std::int64_t> out;
    for (const auto& e : t.shape) out.push_back(static_cast<std::int64_t>(std::llround(e.eval(vars))));
    return out;
}

std::int64_t Task::elements_of(const TensorSpec& t, const TaskCase& c) const {
    std::int64_t n = 1;
    for (auto d : shape_of(t, c)) n *= d;
    return n;
}

double Task::flops_of(const TaskCase& c) const { return flops.eval(variables(c)); }
double Task::bytes_of(const TaskCase& c) const { return bytes.eval(variables(c)); }

double Task::param_value(const ParamSpec& p, const TaskCase& c) const {
    auto it = c.params.find(p.name);
    return it != c.params.end() ? it->second : p.value;
}

namespace {

std::string c_type(DType t, Backend b) {
    return std::string(b == Backend::Cuda ? cuda_type_name(t) : host_type_name(t));
}

std::string param_c_type(DType t) {
    switch (t) {
    case DType::F64: return "double";
    case DType::I32: return "int";
    case DType::I64: return "long long";
    default: return "float";
    }
}

std::string size_c_type(const Task& task) { return task.size_type == DType::I64 ? "long long" : "int"; }

std::string signature_params(const Task& task, Backend b) {
    std::ostringstream os;
    bool first = true;
    auto sep = [&] {
        if (!first) os << ", ";
        first = false;
    };
    for (const auto& t : task.tensors) {
        sep();
        os << (t.role == TensorRole::Input ? "const " : "") << c_type(t.dtype, b) << "* " << t.name;
    }
    for (const auto& s : task.size_names) {
        sep();
        os << size_c_type(task) << " " << s;
    }
    for (const auto& p : task.params) {
        sep();
        os << param_c_type(p.dtype) << " " << p.name;
    }
    if (b == Backend::Cuda) {
        sep();
        os << "cudaStream_t stream";
    }
    return os.str();
}

std::string shape_text(const TensorSpec& t) {
    std::string s = "[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + t.shape[i].text();
    return s + "]";
}

// 16-bit float storage types and conversions for host candidates (round to nearest even).
constexpr const char* kHostHalfSupport = R"(typedef struct { uint16_t bits; } kf_half;
typedef struct { uint16_t bits; } kf_bfloat16;

static inline float kf_half_to_float(kf_half h) {
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16, exp = (h.bits >> 10) & 0x1Fu, mant = h.bits & 0x3FFu, out;
    if (exp == 0) {
        if (mant == 0) out = sign;
        else { int e = -1; do { mant <<= 1; ++e; } while (!(mant & 0x400u));
               out = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13); }
    } else if (exp == 0x1F) out = sign | 0x7F800000u | (mant << 13);
    else out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    float f; memcpy(&f, &out, 4); return f;
}
static inline kf_half kf_float_to_half(float f) {
    uint32_t x; memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7FFFFFu; int exp = (int)((x >> 23) & 0xFF);
    kf_half h;
    if (exp == 0xFF) { h.bits = (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0u)); return h; }
    int e = exp - 127 + 15;
    if (e >= 0x1F) { h.bits = (uint16_t)(sign | 0x7C00u); return h; }
    if (e <= 0) {
        if (e < -10) { h.bits = (uint16_t)sign; return h; }
        mant |= 0x800000u; int shift = 14 - e;
        uint32_t v = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (v & 1u))) ++v;
        h.bits = (uint16_t)(sign | v); return h;
    }
    uint32_t v = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
    h.bits = (uint16_t)(sign | v); return h;
}
static inline float kf_bfloat16_to_float(kf_bfloat16 h) { uint32_t u = (uint32_t)h.bits << 16; float f; memcpy(&f, &u, 4); return f; }
static inline kf_bfloat16 kf_float_to_bfloat16(float f) {
    uint32_t x; memcpy(&x, &f, 4); kf_bfloat16 h;
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) { h.bits = (uint16_t)((x >> 16) | 0x40u); return h; }
    x += 0x7FFFu + ((x >> 16) & 1u); h.bits = (uint16_t)(x >> 16); return h;
}
)";

}  // namespace

std::string entry_header(const Task& task, Backend b) {
    std::ostringstream os;
    os << "#pragma once\n"
       << "// Kernel Foundry task \"" << task.name << "\" (" << task.title << "), " << to_string(b) << " backend.\n";
    if (!task.description.empty()) {
        // Word-wrapped so that the header reads well in an editor and in prompts.
        std::istringstream desc(task.description);
        std::string paragraph;
        while (std::getline(desc, paragraph)) {
            std::istringstream words(paragraph);
            std::string word, line;
            while (words >> word) {
                if (!line.empty() && line.size() + 1 + word.size() > 92) {
                    os << "// " << line << "\n";
                    line.clear();
                }
                line += (line.empty() ? "" : " ") + word;
            }
            os << "//" << (line.empty() ? "" : " " + line) << "\n";
        }
    }
    os << "//\n";
    for (const auto& t : task.tensors)
        os << "//   " << t.name << ": " << (t.role == TensorRole::Input ? "input " : "output") << " "
           << to_string(t.dtype) << " " << shape_text(t) << "\n";
    for (const auto& p : task.params) os << "//   " << p.name << ": scalar " << to_string(p.dtype) << "\n";
    if (b == Backend::Cuda)
        os << "// Tensors are device memory. Launch every kernel on `stream`; the call may return\n"
              "// before the work finishes. The candidate owns its launch configuration.\n";
    else
        os << "// Tensors are host memory. OpenMP may be used.\n";
    os << "\n#include <cstddef>\n#include <cstdint>\n";
    if (b == Backend::Cuda)
        os << "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
    else
        os << "#include <cmath>\n#include <cstring>\n\n" << kHostHalfSupport;
    os << "\nextern \"C\" void kf_solve(" << signature_params(task, b) << ");\n";
    return os.str();
}

std::string entry_glue(const Task& task, Backend b, const std::string& candidate_file) {
    std::ostringstream os;
    os << "// Generated by Kernel Foundry: the untyped trampoline the worker calls.\n"
       << "#include \"kf_task.h\"\n"
       << "#include \"" << candidate_file << "\"\n\n"
       << "extern \"C\" __attribute__((visibility(\"default\"))) void kf_entry("
       << "void* const* kf_tensors, const long long* kf_sizes, const double* kf_params, void* kf_stream) {\n"
       << "    (void)kf_tensors; (void)kf_sizes; (void)kf_params; (void)kf_stream;\n"
       << "    kf_solve(";
    bool first = true;
    auto sep = [&] {
        if (!first) os << ",\n             ";
        first = false;
    };
    for (std::size_t i = 0; i < task.tensors.size(); ++i) {
        const auto& t = task.tensors[i];
        sep();
        os << "(" << (t.role == TensorRole::Input ? "const " : "") << c_type(t.dtype, b) << "*)kf_tensors[" << i << "]";
    }
    for (std::size_t i = 0; i < task.size_names.size(); ++i) {
        sep();
        os << "(" << size_c_type(task) << ")kf_sizes[" << i << "]";
    }
    for (std::size_t i = 0; i < task.params.size(); ++i) {
        sep();
        os << "(" << param_c_type(task.params[i].dtype) << ")kf_params[" << i << "]";
    }
    if (b == Backend::Cuda) {
        sep();
        os << "(cudaStream_t)kf_stream";
    }
    os << ");\n}\n";
    return os.str();
}

std::string normalize_signature(const std::string& s) {
    std::string out;
    bool space = false;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

std::string entry_signature(const Task& task, Backend backend) {
    std::string header = entry_header(task, backend);
    std::size_t at = header.find("void kf_solve(");
    if (at == std::string::npos) return {};
    std::size_t begin = header.rfind("extern", at);
    if (begin == std::string::npos || header.find('\n', begin) < at - 1) begin = at;
    std::size_t end = header.find(';', at);
    std::string sig = header.substr(begin, end == std::string::npos ? std::string::npos : end - begin + 1);
    return normalize_signature(sig);
}

}  // namespace kf
