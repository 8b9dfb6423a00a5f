// CUDA kernels written from the generic plan (generic_parts.h): each top-level loop of the
// reference becomes a kernel launched in order on the caller's stream, its parallel loops
// spread over the grid (threads) or its outer loop over groups of threads with the loops
// along each row spread over the group and their reductions combined by warp shuffles and
// shared memory (warp-rows, block-rows). The reference's statements are kept as it wrote them.
#include <sstream>

#include "generic_parts.h"
#include "kf/generic.h"
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

/** The body of one flat iteration of a collapsed chain: its variables from kf_q, then the statements. */
std::string chain_iteration(const CudaPrinter& p, const NestPlan& plan, const std::string& indent) {
    std::ostringstream os;
    os << indent << "I kf_q = kf_q0;\n";
    for (std::size_t i = plan.chain.size(); i-- > 0;) {
        const Stmt& l = *plan.chain[i];
        std::string pos = i == 0 ? "static_cast<long long>(kf_q)"
                                 : "static_cast<long long>(kf_q % static_cast<I>(kf_t" + std::to_string(i) + "))";
        os << indent << "const long long " << l.var << " = " << p.expr(l.start) << " + " << pos << " * " << l.step << "LL;\n";
        if (i > 0) os << indent << "kf_q /= static_cast<I>(kf_t" << i << ");\n";
        (void)l;
    }
    for (std::size_t i = 0; i + 1 < plan.chain.size(); ++i) {
        const Stmt& l = *plan.chain[i];
        for (std::size_t j = 0; j + 1 < l.body.size(); ++j) os << print_stmt(p, l.body[j], indent);
    }
    os << print_block(p, plan.chain.back()->body, indent);
    return os.str();
}

std::string threads_kernel(const CudaPrinter& p, const NestPlan& plan, const std::string& name, const std::string& params) {
    std::ostringstream os;
    os << "template <class I>\n__global__ void __launch_bounds__(BLOCK) " << name << "(" << params << ") {\n";
    for (std::size_t i = 0; i < plan.chain.size(); ++i)
        os << "    const long long kf_t" << i << " = " << trip_count(p, *plan.chain[i]) << ";\n";
    os << "    I kf_total = 1;\n";
    for (std::size_t i = 0; i < plan.chain.size(); ++i) os << "    kf_total *= static_cast<I>(kf_t" << i << ");\n";
    os << "    const I kf_chunk = static_cast<I>(BLOCK) * ITEMS;\n"
       << "    for (I kf_base = static_cast<I>(blockIdx.x) * kf_chunk; kf_base < kf_total; kf_base += static_cast<I>(gridDim.x) * kf_chunk) {\n"
       << "        if (kf_base + kf_chunk <= kf_total) {\n"
       << "#pragma unroll\n"
       << "            for (int kf_k = 0; kf_k < ITEMS; ++kf_k) {\n"
       << "                const I kf_q0 = kf_base + static_cast<I>(kf_k) * BLOCK + threadIdx.x;\n"
       << chain_iteration(p, plan, "                ")
       << "            }\n"
       << "        } else {\n"
       << "            for (int kf_k = 0; kf_k < ITEMS; ++kf_k) {\n"
       << "                const I kf_q0 = kf_base + static_cast<I>(kf_k) * BLOCK + threadIdx.x;\n"
       << "                if (kf_q0 >= kf_total) break;\n"
       << chain_iteration(p, plan, "                ")
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

std::string launch(const CudaPrinter& p, const NestPlan& plan, Mode mode, const std::string& name, const std::string& args) {
    std::ostringstream os;
    os << "    {\n";
    if (plan.chain.empty()) {
        os << "        " << name << "<<<1, 1, 0, stream>>>(" << args << ");\n";
    } else if (mode == Mode::Threads || !plan.rows) {
        os << "        long long kf_total = 1;\n";
        for (const Stmt* l : plan.chain) os << "        kf_total *= " << trip_count(p, *l) << ";\n";
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
    bool any_rows = false, any_atomic = false;
    for (const auto& n : prog.nests) {
        any_rows = any_rows || (n.rows && mode != Mode::Threads);
        any_atomic = any_atomic || !n.atomics.empty();
    }
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n#include <limits>\n\n"
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
    os << "#define RESTRICT 1 // @kf tunable values(0, 1)\n"
       << "#if RESTRICT\n#define KF_R __restrict__\n#else\n#define KF_R\n#endif\n"
       << "#define KF_GROUP " << (mode == Mode::WarpRows ? "32" : "BLOCK") << "\n"
       << "#define KF_SYNC() " << (mode == Mode::WarpRows ? "__syncwarp()" : "__syncthreads()") << "\n\n"
       << helpers(Dialect::Cuda);
    if (any_rows) os << reduce_helpers();
    if (any_atomic) os << atomic_helpers();
    std::vector<std::string> launches;
    for (std::size_t i = 0; i < prog.nests.size(); ++i) {
        const NestPlan& n = prog.nests[i];
        CudaPrinter np = p;
        np.atomics = n.atomics;
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
        if (n.chain.empty()) os << serial_kernel(np, n, name, kparams);
        else if (mode != Mode::Threads && n.rows) os << rows_kernel(np, n, name, kparams);
        else os << threads_kernel(np, n, name, kparams);
        launches.push_back(launch(np, n, mode, name, kargs));
    }
    // The top-level statements in order, each nest replaced by its launch.
    os << templates::entry_definition(task, Backend::Cuda) << " {\n";
    std::size_t nest = 0;
    for (const Stmt& st : prog.body) os << (st.kind == Stmt::Kind::For ? launches[nest++] : p.stmt(st, "    "));
    os << "}\n";
    const std::string what = mode == Mode::Threads ? "the parallel loops collapsed over the grid (tunables: BLOCK, ITEMS, RESTRICT)"
                             : mode == Mode::WarpRows ? "a warp per outer iteration, reductions by shuffles (tunables: BLOCK, RESTRICT)"
                                                      : "a block per outer iteration, reductions by shuffles and shared memory (tunables: BLOCK, RESTRICT)";
    return {"generic/" + mode_name(mode), "generic/" + mode_name(mode), "generic kernel from the reference's loops: " + what,
            os.str()};
}

}  // namespace

std::vector<TemplateKernel> cuda_generic(const Task& task, const Program& prog) {
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
