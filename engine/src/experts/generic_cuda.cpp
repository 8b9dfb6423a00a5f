// CUDA kernels written from the generic plan (generic_parts.h): each top-level loop of the
// reference becomes a kernel launched in order on the caller's stream, its parallel loops
// spread over the grid (threads) or its outer loop over groups of threads with the loops
// along each row spread over the group and their reductions combined by warp shuffles and
// shared memory (warp-rows, block-rows). The reference's statements are kept as it wrote them.
#include <sstream>

#include "generic_parts.h"
#include "kf/generic.h"
#include "recognise_parts.h"
#include "template_parts.h"

namespace kf::generic {

namespace {

enum class Mode { Threads, WarpRows, BlockRows };

/** The top-level scalars declared before a nest (passed to its kernel): type and name. */
std::vector<std::pair<std::string, std::string>> scalars_before(const Program& prog, const Stmt* nest, const Printer& p) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Stmt& st : prog.body) {
        if (&st == nest) break;
        if (st.kind != Stmt::Kind::Decl) continue;
        std::string d = p.declaration(st);  // "type name = ...;"
        std::string type = d.substr(0, d.rfind(" " + st.var + (st.init ? " =" : ";")));
        out.emplace_back(type, st.var);
    }
    return out;
}

std::string restrict_params(const std::string& params) {
    // `const float* x` -> `const float* KF_R x`: inputs and outputs never alias in the harness.
    std::string out;
    std::size_t pos = 0;
    while (pos < params.size()) {
        std::size_t comma = params.find(',', pos);
        std::string one = params.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        std::size_t star = one.rfind('*');
        if (star != std::string::npos) one.insert(star + 1, " KF_R");
        out += one;
        if (comma == std::string::npos) break;
        out += ",";
        pos = comma + 1;
    }
    return out;
}

/** A statement with the tensors in `atomics` added to atomically. */
class CudaPrinter : public Printer {
public:
    std::set<std::string> atomics;
    std::string atomic_stmt(const Stmt& s, const std::string& indent) const {
        if (s.kind == Stmt::Kind::Assign && s.target->kind == Expr::Kind::Index && atomics.count(s.target->text) &&
            (s.op == "+=" || s.op == "-="))
            return indent + "kf_atomic_add(&" + expr(s.target) + ", " + (s.op == "-=" ? "-" : "") + "(" + expr(s.value) + "));\n";
        return {};
    }
};

/** Prints a block, adding atomically where the plan says, recursing into loops and ifs. */
std::string print_block(const CudaPrinter& p, const Block& b, const std::string& indent);

std::string print_stmt(const CudaPrinter& p, const Stmt& s, const std::string& indent) {
    if (auto a = p.atomic_stmt(s, indent); !a.empty()) return a;
    if (s.kind == Stmt::Kind::For)
        return indent + p.loop_header(s) + " {\n" + print_block(p, s.body, indent + "    ") + indent + "}\n";
    if (s.kind == Stmt::Kind::If) {
        std::string out = indent + "if (" + p.expr(s.cond) + ") {\n" + print_block(p, s.body, indent + "    ") + indent + "}";
        if (!s.else_body.empty()) out += " else {\n" + print_block(p, s.else_body, indent + "    ") + indent + "}";
        return out + "\n";
    }
    return p.stmt(s, indent);
}

std::string print_block(const CudaPrinter& p, const Block& b, const std::string& indent) {
    std::string out;
    for (const Stmt& s : b) out += print_stmt(p, s, indent);
    return out;
}

/**
 * The innermost loop's reads and writes taken VEC at a time, where its body is declarations
 * and assignments and its variable u steps by 1: reads of float inputs (not written in the
 * nest) at an index whose coefficient of u is 1, where every iteration makes them (not under a
 * condition); writes `y[...] = e` of float outputs at such an index, one per output, the
 * output not read in the nest.
 */
struct Vectorised {
    std::vector<const Expr*> loads;
    std::vector<const Stmt*> stores;
    /** Each load's and store's address, the body's integer definitions substituted: `name[index]`. */
    std::vector<ExprPtr> load_at, store_at;
};

/** name[index] with the index as its polynomial, each term's arithmetic in long long. */
ExprPtr address(const std::string& name, const ast::Poly& index) {
    ExprPtr sum;
    for (const auto& [m, k] : index) {
        auto c = std::make_shared<Expr>(*Expr::number(static_cast<double>(k), true));
        c->converted = true;
        c->cast = "long long";
        ExprPtr term = c;
        for (const auto& n : m) term = Expr::binary("*", term, Expr::name(n));
        sum = sum ? Expr::binary("+", sum, term) : term;
    }
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Index;
    e->text = name;
    e->args = {sum ? sum : Expr::number(0, true)};
    return e;
}

std::optional<Vectorised> vectorise(const Task& task, const NestPlan& plan) {
    const Stmt& inner = *plan.chain.back();
    if (inner.step != 1) return std::nullopt;
    std::set<std::string> float_in, float_out, written, read;
    for (const auto& t : task.tensors)
        if (t.dtype == DType::F32) (t.role == TensorRole::Input ? float_in : float_out).insert(t.name);
    ast::Scope scope;
    auto declare = [&](const Stmt& st) {
        if (st.kind != Stmt::Kind::Decl) return;
        const bool f = st.type_name.find("float") != std::string::npos && st.type_name.find("double") == std::string::npos;
        if (st.type == Stmt::Type::Pointer && f)
            (st.type_name.rfind("const", 0) == 0 ? float_in : float_out).insert(st.var);
        if (st.type == Stmt::Type::Integer && st.init)
            if (auto p = ast::to_poly(st.init, scope)) scope.ilets[st.var] = *p;
    };
    for (std::size_t i = 0; i + 1 < plan.chain.size(); ++i)
        for (const Stmt& st : plan.chain[i]->body) declare(st);
    std::function<void(const ExprPtr&)> reads = [&](const ExprPtr& e) {
        if (!e) return;
        if (e->kind == Expr::Kind::Index) read.insert(e->text);
        for (const auto& a : e->args) reads(a);
    };
    for (const Stmt& st : inner.body) {
        if (st.kind != Stmt::Kind::Decl && st.kind != Stmt::Kind::Assign) return std::nullopt;
        if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Array) return std::nullopt;
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index) {
            written.insert(st.target->text);
            reads(st.target->args[0]);
        }
        reads(st.kind == Stmt::Kind::Decl ? st.init : st.value);
    }
    auto unit_stride = [&](const ExprPtr& index) {
        auto p = ast::to_poly(index, scope);
        if (!p) return false;
        ast::Poly k;
        for (const auto& [m, c] : *p) {
            long long n = std::count(m.begin(), m.end(), inner.var);
            if (n > 1) return false;
            if (n == 1) {
                ast::Monomial rest = m;
                rest.erase(std::find(rest.begin(), rest.end(), inner.var));
                k[rest] = c;
            }
        }
        return k == ast::constant(1);
    };
    Vectorised v;
    // Reads made by every iteration: not inside a select's arms nor the right of && and ||.
    std::function<void(const ExprPtr&)> loads = [&](const ExprPtr& e) {
        if (!e) return;
        if (e->kind == Expr::Kind::Index) {
            if (float_in.count(e->text) && !written.count(e->text) && unit_stride(e->args[0])) {
                v.loads.push_back(e.get());
                v.load_at.push_back(address(e->text, *ast::to_poly(e->args[0], scope)));
            }
            return;
        }
        if (e->kind == Expr::Kind::Select) return loads(e->args[0]);
        if (e->kind == Expr::Kind::Binary && (e->text == "&&" || e->text == "||")) return loads(e->args[0]);
        for (const auto& a : e->args) loads(a);
    };
    std::map<std::string, int> stores_of;
    for (const Stmt& st : inner.body) {
        declare(st);
        loads(st.kind == Stmt::Kind::Decl ? st.init : st.value);
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index) ++stores_of[st.target->text];
    }
    for (const Stmt& st : inner.body)
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Index && st.op == "=" &&
            float_out.count(st.target->text) && stores_of[st.target->text] == 1 && !read.count(st.target->text) &&
            unit_stride(st.target->args[0])) {
            v.stores.push_back(&st);
            v.store_at.push_back(address(st.target->text, *ast::to_poly(st.target->args[0], scope)));
        }
    if (v.loads.empty() && v.stores.empty()) return std::nullopt;
    return v;
}

/** The chain's variables of one flat iteration from kf_q (the innermost one in VEC-wide groups when `grouped`), then the outer declarations. */
std::string chain_head(const CudaPrinter& p, const NestPlan& plan, bool grouped, const std::string& indent) {
    std::ostringstream os;
    os << indent << "I kf_q = kf_q0;\n";
    for (std::size_t i = plan.chain.size(); i-- > 0;) {
        const Stmt& l = *plan.chain[i];
        std::string pos = i == 0 ? "static_cast<long long>(kf_q)"
                                 : "static_cast<long long>(kf_q % static_cast<I>(kf_t" + std::to_string(i) + "))";
        const bool group = grouped && i + 1 == plan.chain.size();
        os << indent << "const long long " << (group ? "kf_ub" : l.var) << " = " << p.expr(l.start) << " + " << pos << " * "
           << (group ? "VEC" : std::to_string(l.step) + "LL") << ";\n";
        if (i > 0) os << indent << "kf_q /= static_cast<I>(kf_t" << i << ");\n";
    }
    for (std::size_t i = 0; i + 1 < plan.chain.size(); ++i) {
        const Stmt& l = *plan.chain[i];
        for (std::size_t j = 0; j + 1 < l.body.size(); ++j) os << print_stmt(p, l.body[j], indent);
    }
    return os.str();
}

/** The body of one flat iteration of a collapsed chain: its variables from kf_q, then the statements. */
std::string chain_iteration(const CudaPrinter& p, const NestPlan& plan, const std::string& indent) {
    return chain_head(p, plan, false, indent) + print_block(p, plan.chain.back()->body, indent);
}

/**
 * One flat iteration of a vectorised chain: VEC consecutive iterations of the innermost loop,
 * their loads and stores VEC-wide where all VEC are inside and every such address is aligned
 * to VEC elements, one by one otherwise.
 */
std::string vector_iteration(const CudaPrinter& p, const NestPlan& plan, const Vectorised& v, const std::string& indent) {
    const Stmt& inner = *plan.chain.back();
    const std::string u = inner.var, in = indent + "    ", in2 = in + "    ";
    CudaPrinter at_base = p;  // addresses at the group's first iteration
    at_base.rename[u] = "kf_ub";
    std::ostringstream os;
    os << chain_head(p, plan, true, indent);
    std::string aligned = "VEC > 1 && kf_ub + VEC <= " + p.expr(inner.bound);
    for (const auto& e : v.load_at) aligned += " && kf_valigned<VEC>(&" + at_base.expr(e) + ")";
    for (const auto& e : v.store_at) aligned += " && kf_valigned<VEC>(&" + at_base.expr(e) + ")";
    os << indent << "if (" << aligned << ") {\n";
    CudaPrinter lane = p;
    for (std::size_t k = 0; k < v.loads.size(); ++k) {
        os << in << "float kf_l" << k << "[VEC];\n" << in << "kf_vload<VEC>(&" << at_base.expr(v.load_at[k]) << ", kf_l" << k << ");\n";
        lane.replace[v.loads[k]] = "kf_l" + std::to_string(k) + "[kf_kk]";
    }
    for (std::size_t k = 0; k < v.stores.size(); ++k) os << in << "float kf_s" << k << "[VEC];\n";
    os << "#pragma unroll\n" << in << "for (int kf_kk = 0; kf_kk < VEC; ++kf_kk) {\n"
       << in2 << "const long long " << u << " = kf_ub + kf_kk;\n";
    for (const Stmt& st : inner.body) {
        auto it = std::find(v.stores.begin(), v.stores.end(), &st);
        if (it == v.stores.end()) os << print_stmt(lane, st, in2);
        else os << in2 << "kf_s" << (it - v.stores.begin()) << "[kf_kk] = " << lane.expr(st.value) << ";\n";
    }
    os << in << "}\n";
    for (std::size_t k = 0; k < v.stores.size(); ++k)
        os << in << "kf_vstore<VEC>(&" << at_base.expr(v.store_at[k]) << ", kf_s" << k << ");\n";
    os << indent << "} else {\n"
       << in << "for (int kf_kk = 0; kf_kk < VEC; ++kf_kk) {\n"
       << in2 << "const long long " << u << " = kf_ub + kf_kk;\n"
       << in2 << "if (" << u << " >= " << p.expr(inner.bound) << ") break;\n"
       << print_block(p, inner.body, in2) << in << "}\n"
       << indent << "}\n";
    return os.str();
}

std::string vector_helpers() {
    return "// VEC consecutive floats in one 16- or 8-byte access (p aligned to VEC elements).\n"
           "template <int V> __device__ __forceinline__ bool kf_valigned(const float* p) {\n"
           "    return reinterpret_cast<unsigned long long>(p) % (V * sizeof(float)) == 0;\n"
           "}\n"
           "template <int V> __device__ __forceinline__ void kf_vload(const float* p, float (&o)[V]) {\n"
           "    if constexpr (V == 4) {\n"
           "        const float4 t = __ldg(reinterpret_cast<const float4*>(p));\n"
           "        o[0] = t.x; o[1] = t.y; o[2] = t.z; o[3] = t.w;\n"
           "    } else if constexpr (V == 2) {\n"
           "        const float2 t = __ldg(reinterpret_cast<const float2*>(p));\n"
           "        o[0] = t.x; o[1] = t.y;\n"
           "    } else {\n"
           "        o[0] = p[0];\n"
           "    }\n"
           "}\n"
           "template <int V> __device__ __forceinline__ void kf_vstore(float* p, const float (&o)[V]) {\n"
           "    if constexpr (V == 4) *reinterpret_cast<float4*>(p) = make_float4(o[0], o[1], o[2], o[3]);\n"
           "    else if constexpr (V == 2) *reinterpret_cast<float2*>(p) = make_float2(o[0], o[1]);\n"
           "    else p[0] = o[0];\n"
           "}\n\n";
}

std::string threads_kernel(const CudaPrinter& p, const NestPlan& plan, const std::string& name, const std::string& params,
                           const std::optional<Vectorised>& vec) {
    auto iteration = [&](const std::string& indent) {
        return vec ? vector_iteration(p, plan, *vec, indent) : chain_iteration(p, plan, indent);
    };
    std::ostringstream os;
    os << "template <class I>\n__global__ void __launch_bounds__(BLOCK) " << name << "(" << params << ") {\n";
    for (std::size_t i = 0; i < plan.chain.size(); ++i) {
        const bool group = vec && i + 1 == plan.chain.size();
        os << "    const long long kf_t" << i << " = " << (group ? "(" : "") << trip_count(p, *plan.chain[i])
           << (group ? " + VEC - 1) / VEC" : "") << ";\n";
    }
    os << "    I kf_total = 1;\n";
    for (std::size_t i = 0; i < plan.chain.size(); ++i) os << "    kf_total *= static_cast<I>(kf_t" << i << ");\n";
    os << "    const I kf_chunk = static_cast<I>(BLOCK) * ITEMS;\n"
       << "    for (I kf_base = static_cast<I>(blockIdx.x) * kf_chunk; kf_base < kf_total; kf_base += static_cast<I>(gridDim.x) * kf_chunk) {\n"
       << "        if (kf_base + kf_chunk <= kf_total) {\n"
       << "#pragma unroll\n"
       << "            for (int kf_k = 0; kf_k < ITEMS; ++kf_k) {\n"
       << "                const I kf_q0 = kf_base + static_cast<I>(kf_k) * BLOCK + threadIdx.x;\n"
       << iteration("                ")
       << "            }\n"
       << "        } else {\n"
       << "            for (int kf_k = 0; kf_k < ITEMS; ++kf_k) {\n"
       << "                const I kf_q0 = kf_base + static_cast<I>(kf_k) * BLOCK + threadIdx.x;\n"
       << "                if (kf_q0 >= kf_total) break;\n"
       << iteration("                ")
       << "            }\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n";
    return os.str();
}

/** The row's statements: loops spread over the group, writes outside them by its first thread. */
std::string row_block(const CudaPrinter& p, const NestPlan& plan, const Block& b, const std::string& indent);

std::string row_stmt(const CudaPrinter& p, const NestPlan& plan, const Stmt& s, const std::string& indent) {
    if (s.kind == Stmt::Kind::If) {
        std::string out = indent + "if (" + p.expr(s.cond) + ") {\n" + row_block(p, plan, s.body, indent + "    ") + indent + "}";
        if (!s.else_body.empty()) out += " else {\n" + row_block(p, plan, s.else_body, indent + "    ") + indent + "}";
        return out + "\n";
    }
    if (s.kind == Stmt::Kind::Assign && s.target->kind == Expr::Kind::Index)
        return indent + "if (kf_lane == 0) {\n" + print_stmt(p, s, indent + "    ") + indent + "}\n" + indent + "KF_SYNC();\n";
    if (s.kind != Stmt::Kind::For) return print_stmt(p, s, indent);
    const SpreadLoop& sp = plan.spread.at(&s);
    std::ostringstream os;
    CudaPrinter inner = p;
    os << indent << "{\n";
    const std::string in = indent + "    ";
    for (const auto& r : sp.reductions) {
        os << in << r.type << " kf_p_" << r.var << " = " << identity_of(r.combine, r.type) << ";\n";
        inner.rename[r.var] = "kf_p_" + r.var;
    }
    os << in << p.loop_header(s, p.expr(s.start) + " + kf_lane * (" + std::to_string(s.step) + "LL)",
                              "KF_GROUP * (" + std::to_string(s.step) + "LL)")
       << " {\n"
       << print_block(inner, s.body, in + "    ") << in << "}\n";
    for (const auto& r : sp.reductions) {
        os << in << "kf_p_" << r.var << " = kf_group_reduce<KF_GROUP>(kf_p_" << r.var << ", Kf" << r.combine << "());\n"
           << in << combine_into(r.combine, r.var, "kf_p_" + r.var) << "\n";
    }
    os << in << "KF_SYNC();\n" << indent << "}\n";
    return os.str();
}

std::string row_block(const CudaPrinter& p, const NestPlan& plan, const Block& b, const std::string& indent) {
    std::string out;
    for (const Stmt& s : b) out += row_stmt(p, plan, s, indent);
    return out;
}

std::string rows_kernel(const CudaPrinter& p, const NestPlan& plan, const std::string& name, const std::string& params) {
    const Stmt& outer = *plan.loop;
    std::ostringstream os;
    os << "__global__ void __launch_bounds__(BLOCK) " << name << "(" << params << ") {\n"
       << "    const long long kf_rows = " << trip_count(p, outer) << ";\n"
       << "    const int kf_lane = static_cast<int>(threadIdx.x % KF_GROUP);\n"
       << "    const long long kf_groups = static_cast<long long>(gridDim.x) * (BLOCK / KF_GROUP);\n"
       << "    for (long long kf_r = (static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x) / KF_GROUP; kf_r < kf_rows; kf_r += kf_groups) {\n"
       << "        const long long " << outer.var << " = " << p.expr(outer.start) << " + kf_r * " << outer.step << "LL;\n"
       << row_block(p, plan, outer.body, "        ") << "    }\n"
       << "}\n\n";
    return os.str();
}

std::string serial_kernel(const CudaPrinter& p, const NestPlan& plan, const std::string& name, const std::string& params) {
    return "// The loops may not run in parallel: " + plan.serial_why + ".\n__global__ void " + name + "(" + params +
           ") {\n" + print_stmt(p, *plan.loop, "    ") + "}\n\n";
}

std::string reduce_helpers() {
    return "struct Kfsum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };\n"
           "struct Kfprod { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };\n"
           "struct Kfmax { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; } };\n"
           "struct Kfmin { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; } };\n\n"
           "// The combine of v over a group of G threads (a warp's lanes, or the whole block), given to each.\n"
           "template <int G, class T, class Op> __device__ __forceinline__ T kf_group_reduce(T v, Op op) {\n"
           "#pragma unroll\n"
           "    for (int o = (G < 32 ? G : 32) / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
           "    if constexpr (G > 32) {\n"
           "        __shared__ T kf_part[G / 32];\n"
           "        __syncthreads();\n"
           "        if (threadIdx.x % 32 == 0) kf_part[threadIdx.x / 32] = v;\n"
           "        __syncthreads();\n"
           "        v = kf_part[0];\n"
           "        for (int w = 1; w < G / 32; ++w) v = op(v, kf_part[w]);\n"
           "    }\n"
           "    return v;\n"
           "}\n\n";
}

std::string atomic_helpers() {
    return "__device__ __forceinline__ void kf_atomic_add(float* p, float v) { atomicAdd(p, v); }\n"
           "__device__ __forceinline__ void kf_atomic_add(double* p, double v) { atomicAdd(p, v); }\n"
           "__device__ __forceinline__ void kf_atomic_add(int* p, long long v) { atomicAdd(p, static_cast<int>(v)); }\n"
           "__device__ __forceinline__ void kf_atomic_add(long long* p, long long v) {\n"
           "    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));\n"
           "}\n\n";
}

std::string launch(const CudaPrinter& p, const NestPlan& plan, Mode mode, const std::string& name, const std::string& args,
                   bool grouped) {
    std::ostringstream os;
    os << "    {\n";
    if (plan.chain.empty()) {
        os << "        " << name << "<<<1, 1, 0, stream>>>(" << args << ");\n";
    } else if (mode == Mode::Threads || !plan.rows) {
        os << "        long long kf_total = 1;\n";
        for (const Stmt* l : plan.chain)
            os << "        kf_total *= " << (grouped && l == plan.chain.back() ? "(" + trip_count(p, *l) + " + VEC - 1) / VEC" : trip_count(p, *l))
               << ";\n";
        os << "        if (kf_total > 0) {\n"
           << "            long long kf_grid = (kf_total + static_cast<long long>(BLOCK) * ITEMS - 1) / (static_cast<long long>(BLOCK) * ITEMS);\n"
           << "            if (kf_grid > 1048576) kf_grid = 1048576;\n"
           << "            if (kf_total < 2147483647LL)\n"
           << "                " << name << "<unsigned int><<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << args << ");\n"
           << "            else\n"
           << "                " << name << "<unsigned long long><<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << args << ");\n"
           << "        }\n";
    } else {
        os << "        const long long kf_rows = " << trip_count(p, *plan.loop) << ";\n"
           << "        if (kf_rows > 0) {\n"
           << "            long long kf_grid = (kf_rows + (BLOCK / KF_GROUP) - 1) / (BLOCK / KF_GROUP);\n"
           << "            if (kf_grid > 1048576) kf_grid = 1048576;\n"
           << "            " << name << "<<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << args << ");\n"
           << "        }\n";
    }
    os << "        (void)cudaPeekAtLastError();\n    }\n";
    return os.str();
}

std::string mode_name(Mode m) {
    return m == Mode::Threads ? "threads" : m == Mode::WarpRows ? "warp-rows" : "block-rows";
}

TemplateKernel write(const Task& task, const Program& prog, Mode mode) {
    CudaPrinter p;
    p.dialect = Dialect::Cuda;
    const std::string params = restrict_params(templates::entry_params(task, Backend::Cuda));
    const std::string args = templates::entry_args(task);
    bool any_rows = false, any_atomic = false, any_vec = false;
    std::vector<std::optional<Vectorised>> vecs;
    for (const auto& n : prog.nests) {
        any_rows = any_rows || (n.rows && mode != Mode::Threads);
        any_atomic = any_atomic || !(n.rows && mode != Mode::Threads ? n.row_atomics : n.atomics).empty();
        const bool threads = !n.chain.empty() && !(mode != Mode::Threads && n.rows);
        vecs.push_back(threads ? vectorise(task, n) : std::nullopt);
        any_vec = any_vec || vecs.back().has_value();
    }
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n#include <cmath>\n#include <limits>\n\n"
       << "// Generic kernel (CUDA, " << mode_name(mode) << "), written from the reference's loop nest by the generic\n"
       << "// expert: ";
    if (mode == Mode::Threads)
        os << "the parallel loops of each nest collapsed over the grid, ITEMS iterations per thread.\n";
    else
        os << "a group of " << (mode == Mode::WarpRows ? "32 threads (a warp)" : "BLOCK threads (a block)")
           << " per outer iteration,\n// the loops along it spread over the group, their reductions combined by shuffles"
           << (mode == Mode::BlockRows ? " and shared memory" : "") << ".\n";
    if (!prog.opaque.empty()) os << "// " << prog.opaque << ".\n";
    os << "\n#define BLOCK " << (mode == Mode::BlockRows ? 256 : 256)
       << "  // @kf tunable values(" << (mode == Mode::Threads ? "64, " : "64, ") << "128, 256, 512, 1024)\n";
    if (mode == Mode::Threads) os << "#define ITEMS 4    // @kf tunable values(1, 2, 4, 8)\n";
    else os << "#define ITEMS 1\n";
    if (any_vec) os << "#define VEC 4      // @kf tunable values(1, 2, 4)\n";
    os << "#define RESTRICT 1 // @kf tunable values(0, 1)\n"
       << "#if RESTRICT\n#define KF_R __restrict__\n#else\n#define KF_R\n#endif\n"
       << "#define KF_GROUP " << (mode == Mode::WarpRows ? "32" : "BLOCK") << "\n"
       << "#define KF_SYNC() " << (mode == Mode::WarpRows ? "__syncwarp()" : "__syncthreads()") << "\n\n"
       << helpers(Dialect::Cuda);
    if (any_rows) os << reduce_helpers();
    if (any_vec) os << vector_helpers();
    if (any_atomic) os << atomic_helpers();
    os << reference_functions(prog, Dialect::Cuda);
    std::vector<std::string> launches;
    for (std::size_t i = 0; i < prog.nests.size(); ++i) {
        const NestPlan& n = prog.nests[i];
        CudaPrinter np = p;
        np.atomics = n.rows && mode != Mode::Threads ? n.row_atomics : n.atomics;
        std::string kparams = params, kargs = args;
        for (const auto& [type, var] : scalars_before(prog, n.loop, p)) {
            kparams += ", " + type + " " + var;
            kargs += ", " + var;
        }
        const std::string name = "kf_nest" + std::to_string(i);
        os << "// The loop over " << n.loop->var << " (line " << n.loop->line << ")";
        if (n.chain.size() > 1) {
            os << " and those nested in it (";
            for (std::size_t j = 1; j < n.chain.size(); ++j) os << (j > 1 ? ", " : "") << n.chain[j]->var;
            os << ")";
        }
        os << ".\n";
        const bool threads = !n.chain.empty() && !(mode != Mode::Threads && n.rows);
        const std::optional<Vectorised>& vec = vecs[i];
        if (n.chain.empty()) os << serial_kernel(np, n, name, kparams);
        else if (!threads) os << rows_kernel(np, n, name, kparams);
        else os << threads_kernel(np, n, name, kparams, vec);
        launches.push_back(launch(np, n, mode, name, kargs, vec.has_value()));
    }
    // The top-level statements in order, each nest replaced by its launch.
    os << templates::entry_definition(task, Backend::Cuda) << " {\n";
    std::size_t nest = 0;
    for (const Stmt& st : prog.body) os << (st.kind == Stmt::Kind::For ? launches[nest++] : p.stmt(st, "    "));
    os << "}\n";
    const std::string what = mode == Mode::Threads ? std::string("the parallel loops collapsed over the grid") + (any_vec ? ", VEC-wide loads and stores along the contiguous innermost loop" : "") + " (tunables: BLOCK, ITEMS, " + (any_vec ? "VEC, " : "") + "RESTRICT)"
                             : mode == Mode::WarpRows ? "a warp per outer iteration, reductions by shuffles (tunables: BLOCK, RESTRICT)"
                                                      : "a block per outer iteration, reductions by shuffles and shared memory (tunables: BLOCK, RESTRICT)";
    return {"generic/" + mode_name(mode), "generic/" + mode_name(mode), "generic kernel from the reference's loops: " + what,
            os.str()};
}

}  // namespace

/** The first std::vector the body declares (its length known at run time), if any. */
static const Stmt* runtime_vector(const Block& b) {
    for (const Stmt& st : b) {
        if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Array && st.type_name.find('[') == std::string::npos)
            return &st;
        if (const Stmt* v = runtime_vector(st.body)) return v;
        if (const Stmt* v = runtime_vector(st.else_body)) return v;
    }
    return nullptr;
}

std::vector<TemplateKernel> cuda_generic(const Task& task, const Program& prog) {
    if (const Stmt* v = runtime_vector(prog.body))
        throw Unsupported("kf_solve declares the vector " + v->var + " (line " + std::to_string(v->line) +
                          "), whose length is known at run time: a GPU thread allocates none (a C array of constant "
                          "length, `float " + v->var + "[64] = {};`, is one it can hold)");
    std::vector<TemplateKernel> out;
    out.push_back(write(task, prog, Mode::Threads));
    bool rows = std::any_of(prog.nests.begin(), prog.nests.end(), [](const NestPlan& n) { return n.rows; });
    if (rows) {
        out.push_back(write(task, prog, Mode::WarpRows));
        out.push_back(write(task, prog, Mode::BlockRows));
    }
    return out;
}

}  // namespace kf::generic
