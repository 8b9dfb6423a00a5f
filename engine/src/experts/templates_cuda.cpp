// CUDA instances of the op-class templates.
#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "template_parts.h"
#include "templates_backend.h"

namespace kf::templates {

namespace {

/** kf_load_pack: V elements of any type in one 16-, 8- or 4-byte load where they make one. */
std::string pack_loader() {
    std::ostringstream os;
    os << "// V elements from p: one 16-, 8- or 4-byte load when they make one, element by element otherwise.\n"
       << "template <int V, class E> __device__ __forceinline__ void kf_load_pack(const E* p, E (&out)[V]) {\n"
       << "    if constexpr (sizeof(E) * V == 16) {\n"
       << "        union { uint4 u; E e[V]; } t;\n"
       << "        t.u = __ldg(reinterpret_cast<const uint4*>(p));\n"
       << "#pragma unroll\n"
       << "        for (int k = 0; k < V; ++k) out[k] = t.e[k];\n"
       << "    } else if constexpr (sizeof(E) * V == 8) {\n"
       << "        union { uint2 u; E e[V]; } t;\n"
       << "        t.u = __ldg(reinterpret_cast<const uint2*>(p));\n"
       << "#pragma unroll\n"
       << "        for (int k = 0; k < V; ++k) out[k] = t.e[k];\n"
       << "    } else if constexpr (sizeof(E) * V == 4) {\n"
       << "        union { unsigned int u; E e[V]; } t;\n"
       << "        t.u = __ldg(reinterpret_cast<const unsigned int*>(p));\n"
       << "#pragma unroll\n"
       << "        for (int k = 0; k < V; ++k) out[k] = t.e[k];\n"
       << "    } else {\n"
       << "#pragma unroll\n"
       << "        for (int k = 0; k < V; ++k) out[k] = p[k];\n"
       << "    }\n"
       << "}\n\n";
    return os.str();
}

/** Vector loads (through kf_load_pack, converted to the element type) and stores (float4, float2, double2; scalar otherwise) of V elements. */
std::string vector_helpers(const std::string& T) {
    std::ostringstream os;
    os << pack_loader() << "template <int V> struct KfVec { " << T << " v[V]; };\n\n"
       << "// V elements from p in one vector load where they make one (p is aligned to V elements), converted to " << T << ".\n"
       << "template <int V, class E> __device__ __forceinline__ KfVec<V> kf_load(const E* p) {\n"
       << "    E e[V];\n"
       << "    kf_load_pack<V>(p, e);\n"
       << "    KfVec<V> r;\n"
       << "#pragma unroll\n"
       << "    for (int k = 0; k < V; ++k) r.v[k] = static_cast<" << T << ">(e[k]);\n"
       << "    return r;\n"
       << "}\n\n"
       << "template <int V> __device__ __forceinline__ void kf_store(" << T << "* p, const KfVec<V>& r) {\n"
       << "    if constexpr (V == 4 && sizeof(" << T << ") == 4) {\n"
       << "        *reinterpret_cast<float4*>(p) = make_float4(r.v[0], r.v[1], r.v[2], r.v[3]);\n"
       << "    } else if constexpr (V == 2 && sizeof(" << T << ") == 4) {\n"
       << "        *reinterpret_cast<float2*>(p) = make_float2(r.v[0], r.v[1]);\n"
       << "    } else if constexpr (V == 2 && sizeof(" << T << ") == 8) {\n"
       << "        *reinterpret_cast<double2*>(p) = make_double2(r.v[0], r.v[1]);\n"
       << "    } else {\n"
       << "#pragma unroll\n"
       << "        for (int k = 0; k < V; ++k) p[k] = r.v[k];\n"
       << "    }\n"
       << "}\n\n"
       << "static bool kf_aligned(const void* p, int bytes) {\n"
       << "    return reinterpret_cast<unsigned long long>(p) % static_cast<unsigned long long>(bytes) == 0;\n"
       << "}\n\n";
    return os.str();
}

std::string launch_check() {
    return "    (void)cudaPeekAtLastError();\n";
}

/** kf_sm_count(): the device's multiprocessors, asked once (for grids sized to the device). */
std::string sm_count_function() {
    return "// The device's multiprocessors, asked once.\n"
           "static int kf_sm_count() {\n"
           "    static int kf_sms = 0;\n"
           "    if (kf_sms == 0) {\n"
           "        int kf_dev = 0;\n"
           "        cudaGetDevice(&kf_dev);\n"
           "        cudaDeviceGetAttribute(&kf_sms, cudaDevAttrMultiProcessorCount, kf_dev);\n"
           "        if (kf_sms <= 0) kf_sms = 1;\n"
           "    }\n"
           "    return kf_sms;\n"
           "}\n\n";
}

/**
 * An fp32 instance's expf calls through kf_exp, which the tunable FAST_EXP (on by default)
 * makes the hardware's __expf (ex2.approx: a few ulp, growing with |x|; two instructions
 * rather than about ten). The tunable and the helper go after the instance's last tunable;
 * a source without expf is returned as it is.
 */
std::string with_fast_exp(const std::string& src) {
    static const std::regex call("(^|[^A-Za-z0-9_])expf\\(");
    if (!std::regex_search(src, call)) return src;
    std::string out = std::regex_replace(src, call, "$1kf_exp(");
    const std::size_t last = out.rfind("@kf tunable");
    const std::size_t at = last == std::string::npos ? 0 : out.find('\n', last) + 1;
    return out.insert(at, "// FAST_EXP: exp through the hardware's __expf (a few ulp) rather than expf.\n"
                          "#define FAST_EXP 1   // @kf tunable values(0, 1)\n"
                          "__device__ __forceinline__ float kf_exp(float v) {\n"
                          "#if FAST_EXP\n"
                          "    return __expf(v);\n"
                          "#else\n"
                          "    return expf(v);\n"
                          "#endif\n"
                          "}\n");
}

/** True where the expression calls a function that costs many instructions (worth computing once). */
bool costly(const ComputeExpr& e) {
    static const std::regex call("(^|[^A-Za-z0-9_])(exp|log|sqrt|rsqrt|tanh|erf|sin|cos|pow|sigmoid)\\(");
    return std::regex_search(e.form(), call);
}

/** Flat elementwise map: grid-stride over VEC-wide vectors, ITEMS vectors per thread; scalar tail. */
TemplateKernel cuda_map(const Task& task, const Computation& c, const std::string& n_expr) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    std::vector<std::string> used = tensors_in(c.map, c);
    auto vec = resolver(task, c, T, [](const std::string& n) { return "kf_v_" + n + ".v[kf_k]"; });
    auto scalar = resolver(task, c, T, [](const std::string& n) { return n + "[kf_i]"; });
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Elementwise map (CUDA): grid-stride loop over VEC-wide vector loads and stores, ITEMS vectors per thread.", c)
       << "\n#define BLOCK 256  // @kf tunable values(64, 128, 256, 512, 1024)\n"
       << "#define VEC " << (f32 ? 4 : 2) << "    // @kf tunable values(1, 2" << (f32 ? ", 4" : "") << ")\n"
       << "#define ITEMS 4    // @kf tunable values(1, 2, 4, 8, 16)\n\n"
       << vector_helpers(T)
       << "template <int V>\n__global__ void __launch_bounds__(BLOCK) kf_map_kernel(" << entry_params(task, Backend::Cuda)
       << ", long long kf_n) {\n"
       << "    const long long kf_stride = static_cast<long long>(gridDim.x) * BLOCK;\n"
       << "    const long long kf_nv = kf_n / V;\n"
       << "    for (long long kf_j = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; kf_j < kf_nv; kf_j += kf_stride) {\n"
       << "        const long long kf_i0 = kf_j * V;\n";
    for (const auto& n : used) os << "        const KfVec<V> kf_v_" << n << " = kf_load<V>(" << n << " + kf_i0);\n";
    os << "        KfVec<V> kf_o;\n"
       << "#pragma unroll\n"
       << "        for (int kf_k = 0; kf_k < V; ++kf_k) kf_o.v[kf_k] = static_cast<" << T << ">(" << c.map.to_c(vec, f32, true)
       << ");\n"
       << "        kf_store<V>(" << c.output << " + kf_i0, kf_o);\n"
       << "    }\n"
       << "    for (long long kf_i = kf_nv * V + static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; kf_i < kf_n; kf_i += kf_stride)\n"
       << "        " << c.output << "[kf_i] = static_cast<" << T << ">(" << c.map.to_c(scalar, f32, true) << ");\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << "    const long long kf_n = " << n_expr << ";\n"
       << "    if (kf_n <= 0) return;\n"
       << "    bool kf_vec = true;\n";
    for (const auto& n : used) os << "    kf_vec = kf_vec && kf_aligned(" << n << ", VEC * sizeof(*" << n << "));\n";
    os << "    kf_vec = kf_vec && kf_aligned(" << c.output << ", VEC * sizeof(" << T << "));\n"
       << "    const long long kf_v = kf_vec ? VEC : 1;\n"
       << "    long long kf_grid = (kf_n / kf_v + static_cast<long long>(BLOCK) * ITEMS - 1) / (static_cast<long long>(BLOCK) * ITEMS);\n"
       << "    if (kf_grid < 1) kf_grid = 1;\n"
       << "    if (kf_grid > 1048576) kf_grid = 1048576;\n"
       << "    if (kf_vec)\n"
       << "        kf_map_kernel<VEC><<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_n);\n"
       << "    else\n"
       << "        kf_map_kernel<1><<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_n);\n"
       << launch_check() << "}\n";
    return {"map-gridstride", "template/map-gridstride",
            "elementwise map, grid-stride over vector loads/stores (tunables: BLOCK, VEC, ITEMS)", os.str()};
}

/**
 * Rows: a group of TPR threads per row (BLOCK / TPR rows per block); each reduction is a
 * strided loop over VEC-wide loads, a warp-shuffle tree and, for groups wider than a warp, a
 * shared-memory step; then the per-element map or the per-row epilogue. With CACHE > 0 and a
 * row of at most TPR * VEC * CACHE elements, the row's tensors are read from memory once into
 * registers (CACHE vectors per thread and tensor) and every pass reads them there; a longer
 * row is read from memory in each pass.
 *
 * The instance is planned once (what is cached, what the last stat's pass keeps for the map,
 * whether the max and the sum go in one pass), then written section by section.
 */
class RowsKernel {
public:
    RowsKernel(const Task& task, const Computation& c, int tpr, const std::string& variant, int cache)
        : task_(task), c_(c), tpr_(tpr), variant_(variant), cache_(cache), T_(element_type(task, c)), f32_(is_fp32(task, c)),
          online_(is_online_max_sum(c)) {
        // The map's divisions by a row's stat as products by its reciprocal, computed once per row.
        for (const auto& st : c.stats) stat_names_.insert(st.name);
        map_ = c.per_row_output() ? c.map : c.map.with_reciprocals(stat_names_, "kf_rcp_");
        shared_ = shared_part();
        // A block per row reading it in three passes (two stats, then the map) keeps 4 blocks a
        // multiprocessor: with more, the rows in flight outgrew L2 between the passes (softmax
        // 1.19x at 4 against 0.90x unlimited, layernorm 1.09x against 1.02x; docs/benchmarks.md).
        resident_ = variant == "block" && !c.per_row_output() && c.stats.size() >= 2 ? 4 : 0;
        // With ONLINE, a softmax's sum is taken in the max's pass, against a running max: its
        // terms are not the map's, so the registers are filled only without it.
        shared_without_online_ = online_ && c.stats.size() == 2;
        vec_ = resolver(task, c, T_, [&c](const std::string& n) -> std::string {
            return c.inputs.at(n) == Indexing::PerRow ? "kf_row_" + n : "kf_v_" + n + ".v[kf_k]";
        });
        vec_shared_ = [vec = vec_](const std::string& n) { return n == "kf_shared" ? std::string("kf_e[kf_j].v[kf_k]") : vec(n); };
        row_only_ = resolver(task, c, T_, [](const std::string& n) { return "kf_row_" + n; });
        cached_ = cached_tensors();
    }

    TemplateKernel kernel() {
        write_tunables();
        write_group_reduce();
        if (online_) write_online_group_reduce();
        write_kernel_head();
        write_stats();
        write_output();
        write_entry();
        const bool online = online_;
        const std::string& variant = variant_;
        const std::string src = with_fast_exp(os_.str());
        const bool fast_exp = src.find("FAST_EXP") != std::string::npos;
        return {"rows-group/" + variant, "template/rows-group",
                "rows in groups of TPR threads (" + variant + " by default), VEC-wide loads, shuffle reductions, rows cached in registers "
                "up to TPR * VEC * CACHE elements" +
                    std::string(online ? ", the max and the sum of exp(. - max) in one pass (an online softmax)" : "") +
                    (shared_.empty() ? "" : ", on a cached row " + shared_.text() + " computed once") +
                    " (tunables: BLOCK, TPR, VEC, CACHE, UNROLL, RESIDENT" + (online ? ", ONLINE" : "") + (fast_exp ? ", FAST_EXP" : "") + ")",
                src};
    }

private:
    /**
     * A costly part of the map that the last stat's map computes too (a softmax's exp(x - m)):
     * on a cached row, that stat's pass keeps its values in registers (kf_e) for the map's pass.
     */
    ComputeExpr shared_part() const {
        const Computation& c = c_;
        if (!c.per_row_output() && !c.stats.empty())
            for (const auto& e : map_.subexpressions()) {
                if (e.is_name() || !costly(e) || !c.stats.back().map.contains(e)) continue;
                const auto ts = tensors_in(e, c);
                if (std::any_of(ts.begin(), ts.end(), [&c](const std::string& n) { return c.inputs.at(n) != Indexing::PerRow; }))
                    return e;
            }
        return ComputeExpr();
    }

    /**
     * The row's tensors read in any pass: in registers when the row is cached. A per-column
     * tensor (a LayerNorm's gamma) is the same for every row and stays in L1/L2; it is read in
     * each pass that uses it, so that the registers hold the row alone. Holding gamma and beta
     * too, layernorm's cached instance took 82 registers a thread, one block of 512 a
     * multiprocessor, and ran at 69% of the bound; without them 51 registers, two blocks, 105%
     * (docs/benchmarks.md).
     */
    std::vector<std::string> cached_tensors() const {
        const Computation& c = c_;
        std::vector<std::string> cached;
        auto cache_of = [&](const ComputeExpr& e) {
            for (const auto& n : tensors_in(e, c))
                if (c.inputs.at(n) == Indexing::Full && std::find(cached.begin(), cached.end(), n) == cached.end()) cached.push_back(n);
        };
        for (const auto& s : c.stats) cache_of(s.map);
        if (!c.per_row_output()) cache_of(map_);
        return cached;
    }

    /** A sum s of exp(. - m) moved to the max mn >= m; as it is where m is mn (both -inf included). */
    std::string rescaled(const std::string& s_, const std::string& m, const std::string& mn) const {
        return m + " == " + mn + " ? " + s_ + " : " + s_ + " * " + (f32_ ? "expf" : "exp") + "(" + m + " - " + mn + ")";
    }

    /** The vector loads of e's tensors at the row's column kf_c. */
    std::string loads(const ComputeExpr& e, const std::string& indent) const {
        const Computation& c = c_;
        std::string s;
        for (const auto& n : tensors_in(e, c)) {
            Indexing ix = c.inputs.at(n);
            if (ix == Indexing::PerRow) continue;
            s += indent + "const KfVec<V> kf_v_" + n + " = kf_load<V>(" + n + (ix == Indexing::Full ? " + kf_base" : "") +
                 " + kf_c);\n";
        }
        return s;
    }

    /**
     * A pass over the row: from the registers when cached (of the tensors of `ce`, by
     * `cached_body`), else a strided loop of loads (of the tensors of `e`, by `body`).
     */
    std::string pass_split(const ComputeExpr& e, const std::string& body, const std::vector<ComputeExpr>& ce,
                           const std::string& cached_body) const {
        const Computation& c = c_;
        std::string s = "        if (kf_active) {\n"
                        "            if constexpr (CACHED) {\n"
                        "#pragma unroll\n"
                        "                for (int kf_j = 0; kf_j < kf_slots; ++kf_j) {\n"
                        "                    const long long kf_c = (static_cast<long long>(kf_j) * TPR + kf_lane) * V;\n"
                        "                    if (kf_c >= kf_cols) break;\n";
        std::set<std::string> seen;
        for (const auto& x : ce)
            for (const auto& n : tensors_in(x, c)) {
                if (c.inputs.at(n) == Indexing::PerRow || !seen.insert(n).second) continue;
                if (c.inputs.at(n) == Indexing::Full)
                    s += "                    const KfVec<V>& kf_v_" + n + " = kf_reg_" + n + "[kf_j];\n";
                else
                    s += "                    const KfVec<V> kf_v_" + n + " = kf_load<V>(" + n + " + kf_c);\n";
            }
        s += cached_body + "                }\n"
             "            } else {\n"
             "#if UNROLL > 0\n"
             "#pragma unroll kf_unroll\n"
             "#endif\n"
             "                for (long long kf_c = static_cast<long long>(kf_lane) * V; kf_c < kf_cols; kf_c += static_cast<long long>(TPR) * V) {\n" +
             loads(e, "                    ") + body + "                }\n"
             "            }\n"
             "        }\n";
        return s;
    }

    std::string pass(const ComputeExpr& e, const std::string& body) const { return pass_split(e, body, {e}, body); }

    /** The includes, the header comment, the tunables and the vector helpers. */
    void write_tunables() {
        const Computation& c = c_;
        const std::string& T = T_;
        const int tpr = tpr_;
        const bool f32 = f32_;
        std::ostringstream& os = os_;
        os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
           << header_comment("Rows (CUDA): TPR threads per row, VEC-wide loads, warp-shuffle (and shared-memory) reductions.", c)
           << "\n#define BLOCK " << std::max(256, tpr) << "  // @kf tunable values(64, 128, 256, 512, 1024)\n"
           << "#define TPR " << tpr << (tpr < 100 ? "     " : "    ") << "// @kf tunable values(8, 16, 32, 64, 128, 256, 512, 1024)\n"
           << "#define VEC " << (f32 ? 4 : 2) << "      // @kf tunable values(1, 2" << (f32 ? ", 4" : "") << ")\n"
           << "#define CACHE " << cache_ << "    // @kf tunable values(0, 1, 2, 4, 8)\n"
           << "// UNROLL: iterations of a pass over a row from memory unrolled, their loads in flight together (0: the compiler's choice).\n"
           << "#define UNROLL 0   // @kf tunable values(0, 1, 2, 4)\n"
           << "// RESIDENT: at most this many blocks per multiprocessor, striding over the rows (0: a block per row group).\n"
           << "// Fewer rows in flight keep a row that is read in several passes in L2 between them.\n"
           << "#define RESIDENT " << resident_ << "   // @kf tunable values(0, 2, 4, 6, 8)\n";
        // One pass for the max and the sum measured faster on a row per warp (a pass less over a
        // row that no longer sits in L2), slower on a row per block (docs/benchmarks.md).
        if (online_)
            os << "// ONLINE: the max and the sum of exp(. - max) in one pass over the row.\n"
               << "#define ONLINE " << (tpr <= 32 ? 1 : 0) << "   // @kf tunable values(0, 1)\n";
        os << "// @kf constraint TPR <= BLOCK\n\n"
           << vector_helpers(T);
    }

    /** The combines as functors, and kf_group_reduce: the combine of a row group's lanes. */
    void write_group_reduce() {
        const std::string& T = T_;
        std::ostringstream& os = os_;
        for (const auto& comb : computation_combines())
            os << "struct KfComb_" << comb << " {\n    __device__ __forceinline__ " << T << " operator()(" << T << " a, " << T
               << " b) const { return " << combine_expr(comb, "a", "b") << "; }\n};\n";
        os << "\n// The combine of the TPR lanes of a row group: shuffles within a warp, shared memory across warps.\n"
           << "template <class Op>\n__device__ __forceinline__ " << T << " kf_group_reduce(" << T << " v, " << T << "* smem) {\n"
           << "#pragma unroll\n"
           << "    for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1) v = Op()(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
           << "    if constexpr (TPR > 32) {\n"
           << "        __syncthreads();\n"
           << "        if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;\n"
           << "        __syncthreads();\n"
           << "        const int first = (threadIdx.x / TPR) * (TPR / 32);\n"
           << "        v = smem[first];\n"
           << "        for (int w = 1; w < TPR / 32; ++w) v = Op()(v, smem[first + w]);\n"
           << "    }\n"
           << "    return v;\n"
           << "}\n\n";
    }

    /** kf_group_reduce_online: a row group's (max, sum) pairs, each sum rescaled to the larger max. */
    void write_online_group_reduce() {
        const std::string& T = T_;
        std::ostringstream& os = os_;
        auto merge = [&](const std::string& mo, const std::string& so, const std::string& indent) {
            return indent + "{\n" + indent + "    const " + T + " kf_mn = m > " + mo + " ? m : " + mo + ";\n" + indent +
                   "    s = (" + rescaled("s", "m", "kf_mn") + ") + (" + rescaled(so, mo, "kf_mn") + ");\n" + indent +
                   "    m = kf_mn;\n" + indent + "}\n";
        };
        os << "// The (max, sum) pairs of a row group's TPR lanes: each sum rescaled to the larger max.\n"
           << "__device__ __forceinline__ void kf_group_reduce_online(" << T << "& m, " << T << "& s, " << T << "* smem, " << T
           << "* smem2) {\n"
           << "#pragma unroll\n"
           << "    for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1) {\n"
           << "        const " << T << " kf_mo = __shfl_xor_sync(0xffffffffu, m, o), kf_so = __shfl_xor_sync(0xffffffffu, s, o);\n"
           << merge("kf_mo", "kf_so", "        ")
           << "    }\n"
           << "    if constexpr (TPR > 32) {\n"
           << "        __syncthreads();\n"
           << "        if ((threadIdx.x & 31) == 0) {\n"
           << "            smem[threadIdx.x >> 5] = m;\n"
           << "            smem2[threadIdx.x >> 5] = s;\n"
           << "        }\n"
           << "        __syncthreads();\n"
           << "        const int first = (threadIdx.x / TPR) * (TPR / 32);\n"
           << "        m = smem[first];\n"
           << "        s = smem2[first];\n"
           << "        for (int w = 1; w < TPR / 32; ++w)\n"
           << merge("smem[first + w]", "smem2[first + w]", "        ")
           << "    }\n"
           << "}\n\n";
    }

    /** The kernel's signature, its loop over the row groups, the row's per-row operands and, when cached, its registers. */
    void write_kernel_head() {
        const Computation& c = c_;
        const std::string& T = T_;
        std::ostringstream& os = os_;
        os << "// CACHED: the row (at most TPR * V * CACHE elements) is read once into registers.\n"
           << "template <int V, bool CACHED>\n__global__ void __launch_bounds__(BLOCK) kf_rows_kernel(" << entry_params(task_, Backend::Cuda)
           << ", long long kf_rows, long long kf_cols) {\n"
           << "    __shared__ " << T << " kf_smem[BLOCK / 32 > 0 ? BLOCK / 32 : 1];\n"
           << "    (void)kf_smem;\n"
           << (online_ ? "#if ONLINE\n    __shared__ " + T + " kf_smem2[BLOCK / 32 > 0 ? BLOCK / 32 : 1];\n#endif\n" : "")
           << "    constexpr int kf_slots = CACHED && CACHE > 0 ? CACHE : 1;\n"
           << "    constexpr int kf_unroll = UNROLL > 0 ? UNROLL : 1;  // #pragma unroll takes a constant, not a macro\n"
           << "    (void)kf_unroll;\n"
           << "    constexpr int kf_rpb = BLOCK / TPR;\n"
           << "    const int kf_lane = threadIdx.x % TPR;\n"
           << "    for (long long kf_r0 = static_cast<long long>(blockIdx.x) * kf_rpb; kf_r0 < kf_rows;\n"
           << "         kf_r0 += static_cast<long long>(gridDim.x) * kf_rpb) {\n"
           << "        const long long kf_r = kf_r0 + threadIdx.x / TPR;\n"
           << "        const bool kf_active = kf_r < kf_rows;\n"
           << "        const long long kf_base = kf_active ? kf_r * kf_cols : 0;\n"
           << "        (void)kf_base;\n";
        for (const auto& n : per_row_tensors(c))
            os << "        const " << T << " kf_row_" << n << " = kf_active ? " << n << "[kf_r] : static_cast<" << T << ">(0);\n";
        for (const auto& n : cached_) os << "        KfVec<V> kf_reg_" << n << "[kf_slots];\n";
        if (!shared_.empty())
            os << "        KfVec<V> kf_e[kf_slots];  // " << shared_.text() << " at the row's elements (cached rows)\n"
               << "        (void)kf_e;\n";
        os << "        if constexpr (CACHED) {\n"
           << "            if (kf_active) {\n"
           << "#pragma unroll\n"
           << "                for (int kf_j = 0; kf_j < kf_slots; ++kf_j) {\n"
           << "                    const long long kf_c = (static_cast<long long>(kf_j) * TPR + kf_lane) * V;\n"
           << "                    if (kf_c >= kf_cols) break;\n";
        for (const auto& n : cached_)
            os << "                    kf_reg_" << n << "[kf_j] = kf_load<V>(" << n << " + kf_base + kf_c);\n";
        os << "                }\n"
           << "            }\n"
           << "        }\n";
        for (const auto& n : cached_) os << "        (void)kf_reg_" << n << ";\n";
    }

    /** One stat's pass over the row and its group reduce; the last stat's keeps the shared part for the map. */
    void write_stat_pass(const ComputationStat& s) {
        const Computation& c = c_;
        const std::string& T = T_;
        const bool f32 = f32_;
        const ComputeExpr& shared = shared_;
        auto body = [&](const ComputeExpr& e, const std::string& keep) {
            return "#pragma unroll\n"
                   "                    for (int kf_k = 0; kf_k < V; ++kf_k) {\n" + keep +
                   "                        const " + T + " kf_x = " + e.to_c(vec_shared_, f32, true) + ";\n"
                   "                        kf_a_" + s.name + " = " + combine_expr(s.combine, "kf_a_" + s.name, "kf_x") + ";\n"
                   "                    }\n";
        };
        const bool keeps = !shared.empty() && &s == &c.stats.back();
        const ComputeExpr kept = keeps ? s.map.replaced(shared, "kf_shared") : s.map;
        os_ << "        " << T << " kf_a_" << s.name << " = " << identity(s.combine, f32) << ";  // " << s.name << " = "
            << s.combine << " over the row of " << s.map.text() << "\n"
            << pass_split(s.map, body(s.map, ""), keeps ? std::vector<ComputeExpr>{kept, shared} : std::vector<ComputeExpr>{kept},
                          body(kept, keeps ? "                        kf_e[kf_j].v[kf_k] = " + shared.to_c(vec_, f32, true) + ";\n" : ""))
            << "        " << T << " kf_s_" << s.name << " = kf_group_reduce<KfComb_" << s.combine << ">(kf_a_" << s.name
            << ", kf_smem);\n";
    }

    /**
     * The first two stats under ONLINE: the max m and the sum s of exp(e - m) in one pass: per
     * vector, its max; where that raises the running max, the running sum is rescaled by
     * exp(old - new) first. Without ONLINE, a pass each.
     */
    void write_online_stats() {
        const Computation& c = c_;
        const std::string& T = T_;
        const bool f32 = f32_;
        const auto& vec = vec_;
        const ComputationStat &mx = c.stats[0], &sm = c.stats[1];
        auto vec_running = [&](const std::string& n) { return n == mx.name ? "kf_a_" + mx.name : vec(n); };
        const std::string am = "kf_a_" + mx.name, as = "kf_a_" + sm.name;
        os_ << "#if ONLINE\n"
            << "        " << T << " " << am << " = " << identity("max", f32) << ";  // " << mx.name << " = max over the row of "
            << mx.map.text() << "\n"
            << "        " << T << " " << as << " = " << identity("sum", f32) << ";  // " << sm.name << " = sum over the row of "
            << sm.map.text() << ", in the same pass\n"
            << pass(sm.map, "                    " + T + " kf_cm = " + identity("max", f32) + ";\n"
                            "#pragma unroll\n"
                            "                    for (int kf_k = 0; kf_k < V; ++kf_k) {\n"
                            "                        const " + T + " kf_x = " + mx.map.to_c(vec, f32, true) + ";\n"
                            "                        kf_cm = " + combine_expr("max", "kf_cm", "kf_x") + ";\n"
                            "                    }\n"
                            "                    const " + T + " kf_mn = " + combine_expr("max", am, "kf_cm") + ";\n"
                            "                    " + as + " = " + rescaled(as, am, "kf_mn") + ";\n"
                            "                    " + am + " = kf_mn;\n"
                            "#pragma unroll\n"
                            "                    for (int kf_k = 0; kf_k < V; ++kf_k) " + as + " = " + as + " + " +
                            sm.map.to_c(vec_running, f32, true) + ";\n")
            << "        " << T << " kf_s_" << mx.name << " = " << am << ", kf_s_" << sm.name << " = " << as << ";\n"
            << "        kf_group_reduce_online(kf_s_" << mx.name << ", kf_s_" << sm.name << ", kf_smem, kf_smem2);\n"
            << "#else\n";
        write_stat_pass(mx);
        write_stat_pass(sm);
        os_ << "#endif\n";
    }

    /** The stats' passes, then the reciprocals of the stats the map divides by. */
    void write_stats() {
        const Computation& c = c_;
        const std::string& T = T_;
        for (std::size_t i = 0; i < c.stats.size(); ++i) {
            if (!(online_ && i == 0)) {
                write_stat_pass(c.stats[i]);
                continue;
            }
            write_online_stats();
            ++i;
        }
        for (const auto& n : stat_names_)
            if (map_.names().count("kf_rcp_" + n))
                os_ << "        const " << T << " kf_rcp_" << n << " = static_cast<" << T << ">(1) / kf_s_" << n << ";\n";
    }

    /** The row's value (per-row output), or the map's pass writing each element. */
    void write_output() {
        const Computation& c = c_;
        const std::string& T = T_;
        const bool f32 = f32_;
        const ComputeExpr& map = map_;
        const ComputeExpr& shared = shared_;
        std::ostringstream& os = os_;
        if (c.per_row_output()) {
            os << "        if (kf_active && kf_lane == 0) " << c.output << "[kf_r] = static_cast<" << T << ">("
               << c.epilogue.to_c(row_only_, f32, true) << ");\n";
            return;
        }
        auto body = [&](const ComputeExpr& e) {
            return "                    KfVec<V> kf_o;\n"
                   "#pragma unroll\n"
                   "                    for (int kf_k = 0; kf_k < V; ++kf_k) kf_o.v[kf_k] = static_cast<" + T + ">(" +
                   e.to_c(vec_shared_, f32, true) + ");\n"
                   "                    kf_store<V>(" + c.output + " + kf_base + kf_c, kf_o);\n";
        };
        const ComputeExpr kept = shared.empty() ? map : map.replaced(shared, "kf_shared");
        if (!shared.empty() && shared_without_online_)
            os << "#if ONLINE\n" << pass(map, body(map)) << "#else\n" << pass_split(map, body(map), {kept}, body(kept)) << "#endif\n";
        else
            os << pass_split(map, body(map), {kept}, body(kept));
    }

    /** The kernel's end and the entry point: vector loads where aligned, the grid, the cached or streamed instance. */
    void write_entry() {
        const Task& task = task_;
        const Computation& c = c_;
        const std::string& T = T_;
        std::ostringstream& os = os_;
        os << "    }\n}\n\n"
           << sm_count_function()
           << entry_definition(task, Backend::Cuda) << " {\n"
           << layout_consts(c)
           << "    if (kf_rows <= 0) return;\n"
           << "    // Vector loads need every row (and per-column tensor) to start on a VEC boundary.\n"
           << "    bool kf_vec = kf_cols % VEC == 0;\n";
        for (const auto& [n, ix] : c.inputs)
            if (ix != Indexing::PerRow) os << "    kf_vec = kf_vec && kf_aligned(" << n << ", VEC * sizeof(*" << n << "));\n";
        if (!c.per_row_output()) os << "    kf_vec = kf_vec && kf_aligned(" << c.output << ", VEC * sizeof(" << T << "));\n";
        os << "    long long kf_grid = (kf_rows + BLOCK / TPR - 1) / (BLOCK / TPR);\n"
           << "    if (kf_grid > 1048576) kf_grid = 1048576;\n"
           << "    if (RESIDENT > 0 && kf_grid > static_cast<long long>(kf_sm_count()) * RESIDENT)\n"
           << "        kf_grid = static_cast<long long>(kf_sm_count()) * RESIDENT;\n"
           << "    // The row in registers where it fits in CACHE vectors per thread.\n"
           << "    const bool kf_cached = CACHE > 0 && kf_cols <= static_cast<long long>(TPR) * (kf_vec ? VEC : 1) * CACHE;\n"
           << "    const unsigned kf_g = static_cast<unsigned>(kf_grid);\n"
           << "    if (kf_vec && kf_cached) kf_rows_kernel<VEC, true><<<kf_g, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols);\n"
           << "    else if (kf_vec) kf_rows_kernel<VEC, false><<<kf_g, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols);\n"
           << "    else if (kf_cached) kf_rows_kernel<1, true><<<kf_g, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols);\n"
           << "    else kf_rows_kernel<1, false><<<kf_g, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols);\n"
           << launch_check() << "}\n";
    }

    const Task& task_;
    const Computation& c_;
    const int tpr_;
    const std::string variant_;
    const int cache_;
    const std::string T_;  ///< the element type
    const bool f32_;
    const bool online_;    ///< a softmax's max and sum: ONLINE takes them in one pass
    std::set<std::string> stat_names_;
    ComputeExpr map_;      ///< the map, its divisions by a stat as products by the stat's reciprocal
    ComputeExpr shared_;   ///< the part of the map the last stat's pass keeps in registers (empty: none)
    int resident_ = 0;
    bool shared_without_online_ = false;
    std::function<std::string(const std::string&)> vec_, vec_shared_, row_only_;
    std::vector<std::string> cached_;  ///< the tensors a cached row holds in registers
    std::ostringstream os_;
};

TemplateKernel cuda_rows(const Task& task, const Computation& c, int tpr, const std::string& variant, int cache) {
    return RowsKernel(task, c, tpr, variant, cache).kernel();
}

/**
 * Transpose through shared memory: a TILE x TILE tile read along the input's rows and
 * written along the output's rows, both coalesced; BLOCK_ROWS rows of threads step over
 * the tile; the tile's row is padded by one element so that the column reads do not meet
 * in one shared-memory bank.
 */
TemplateKernel cuda_transpose(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto at = resolver(task, c, T, [](const std::string& n) { return n + "[kf_r * kf_cols + kf_c]"; });
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Transpose (CUDA): TILE x TILE tiles through padded shared memory, coalesced reads and writes.", c)
       << "\n#define TILE 32        // @kf tunable values(16, 32, 64)\n"
       << "#define BLOCK_ROWS 8   // @kf tunable values(2, 4, 8, 16, 32)\n"
       << "// @kf constraint BLOCK_ROWS <= TILE\n"
       << "// @kf constraint TILE * BLOCK_ROWS <= 1024\n\n"
       << "__global__ void __launch_bounds__(TILE * BLOCK_ROWS) kf_transpose_kernel(" << entry_params(task, Backend::Cuda)
       << ", long long kf_rows, long long kf_cols, long long kf_tile_rows) {\n"
       << "    __shared__ " << T << " kf_tile[TILE][TILE + 1];\n"
       << "    const long long kf_c0 = static_cast<long long>(blockIdx.x) * TILE;\n"
       << "    // gridDim.y is at most 65535: tile rows beyond it are taken in further rounds.\n"
       << "    for (long long kf_tr = blockIdx.y; kf_tr < kf_tile_rows; kf_tr += gridDim.y) {\n"
       << "        const long long kf_r0 = kf_tr * TILE;\n"
       << "        for (int kf_j = threadIdx.y; kf_j < TILE; kf_j += BLOCK_ROWS) {\n"
       << "            const long long kf_r = kf_r0 + kf_j, kf_c = kf_c0 + threadIdx.x;\n"
       << "            if (kf_r < kf_rows && kf_c < kf_cols) kf_tile[kf_j][threadIdx.x] = static_cast<" << T << ">("
       << c.map.to_c(at, f32, true) << ");\n"
       << "        }\n"
       << "        __syncthreads();\n"
       << "        for (int kf_j = threadIdx.y; kf_j < TILE; kf_j += BLOCK_ROWS) {\n"
       << "            const long long kf_c = kf_c0 + kf_j, kf_r = kf_r0 + threadIdx.x;\n"
       << "            if (kf_r < kf_rows && kf_c < kf_cols) " << c.output << "[kf_c * kf_rows + kf_r] = kf_tile[threadIdx.x][kf_j];\n"
       << "        }\n"
       << "        __syncthreads();\n"
       << "    }\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    const long long kf_tile_rows = (kf_rows + TILE - 1) / TILE;\n"
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_cols + TILE - 1) / TILE),\n"
       << "                       static_cast<unsigned>(kf_tile_rows < 65535 ? kf_tile_rows : 65535));\n"
       << "    kf_transpose_kernel<<<kf_grid, dim3(TILE, BLOCK_ROWS), 0, stream>>>(" << entry_args(task)
       << ", kf_rows, kf_cols, kf_tile_rows);\n"
       << launch_check() << "}\n";
    return {"transpose-tiled", "template/transpose-tiled",
            "transpose through padded shared-memory tiles, coalesced both ways (tunables: TILE, BLOCK_ROWS)", os.str()};
}

/**
 * Transpose with vector accesses both ways: TILE x TILE tiles, (TILE / 4) x BY threads; a
 * thread reads 4 consecutive elements of an input row in one vector load per tensor (the map
 * applied to each) into padded shared memory, then writes 4 consecutive elements of an output
 * row in one vector store. Vector accesses where the rows start on 4-element boundaries of
 * aligned tensors and the 4 are inside; element by element elsewhere.
 */
TemplateKernel cuda_transpose_vec(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const std::vector<std::string> inputs = tensors_in(c.map, c);
    std::ostringstream map4;
    for (int k = 0; k < 4; ++k) {
        auto vec = resolver(task, c, T, [k](const std::string& n) { return "kf_v_" + n + ".v[" + std::to_string(k) + "]"; });
        map4 << "                kf_tile[kf_j][4 * threadIdx.x + " << k << "] = static_cast<" << T << ">(" << c.map.to_c(vec, f32, true)
             << ");\n";
    }
    auto at = resolver(task, c, T, [](const std::string& n) { return n + "[kf_r * kf_cols + kf_cc]"; });
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Transpose (CUDA): TILE x TILE tiles through padded shared memory, 4 elements per vector load and store.", c)
       << "\n#define TILE 32   // @kf tunable values(32, 64)\n"
       << "#define BY 8      // @kf tunable values(4, 8, 16, 32)\n"
       << "// @kf constraint BY <= TILE\n\n"
       << vector_helpers(T)
       << "__global__ void __launch_bounds__(TILE / 4 * BY) kf_transpose_vec_kernel(" << entry_params(task, Backend::Cuda)
       << ", long long kf_rows, long long kf_cols, long long kf_tile_rows, bool kf_vec_in, bool kf_vec_out) {\n"
       << "    __shared__ " << T << " kf_tile[TILE][TILE + 1];\n"
       << "    const long long kf_c0 = static_cast<long long>(blockIdx.x) * TILE;\n"
       << "    // gridDim.y is at most 65535: tile rows beyond it are taken in further rounds.\n"
       << "    for (long long kf_tr = blockIdx.y; kf_tr < kf_tile_rows; kf_tr += gridDim.y) {\n"
       << "        const long long kf_r0 = kf_tr * TILE;\n"
       << "        for (int kf_j = threadIdx.y; kf_j < TILE; kf_j += BY) {\n"
       << "            const long long kf_r = kf_r0 + kf_j, kf_c = kf_c0 + 4 * threadIdx.x;\n"
       << "            if (kf_r >= kf_rows) break;\n"
       << "            if (kf_vec_in && kf_c + 4 <= kf_cols) {\n";
    for (const auto& n : inputs) os << "                const KfVec<4> kf_v_" << n << " = kf_load<4>(" << n << " + kf_r * kf_cols + kf_c);\n";
    os << map4.str()
       << "            } else {\n"
       << "                for (int kf_k = 0; kf_k < 4; ++kf_k) {\n"
       << "                    const long long kf_cc = kf_c + kf_k;\n"
       << "                    if (kf_cc < kf_cols)\n"
       << "                        kf_tile[kf_j][4 * threadIdx.x + kf_k] = static_cast<" << T << ">(" << c.map.to_c(at, f32, true) << ");\n"
       << "                }\n"
       << "            }\n"
       << "        }\n"
       << "        __syncthreads();\n"
       << "        for (int kf_j = threadIdx.y; kf_j < TILE; kf_j += BY) {\n"
       << "            const long long kf_c = kf_c0 + kf_j, kf_r = kf_r0 + 4 * threadIdx.x;\n"
       << "            if (kf_c >= kf_cols) break;\n"
       << "            if (kf_vec_out && kf_r + 4 <= kf_rows) {\n"
       << "                KfVec<4> kf_out;\n"
       << "#pragma unroll\n"
       << "                for (int kf_k = 0; kf_k < 4; ++kf_k) kf_out.v[kf_k] = kf_tile[4 * threadIdx.x + kf_k][kf_j];\n"
       << "                kf_store<4>(" << c.output << " + kf_c * kf_rows + kf_r, kf_out);\n"
       << "            } else {\n"
       << "                for (int kf_k = 0; kf_k < 4 && kf_r + kf_k < kf_rows; ++kf_k)\n"
       << "                    " << c.output << "[kf_c * kf_rows + kf_r + kf_k] = kf_tile[4 * threadIdx.x + kf_k][kf_j];\n"
       << "            }\n"
       << "        }\n"
       << "        __syncthreads();\n"
       << "    }\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    // Vector loads where the input rows start on 4-element boundaries, stores where the output rows do.\n"
       << "    bool kf_vec_in = kf_cols % 4 == 0;\n";
    for (const auto& n : inputs) os << "    kf_vec_in = kf_vec_in && kf_aligned(" << n << ", 4 * sizeof(*" << n << "));\n";
    os << "    const bool kf_vec_out = kf_rows % 4 == 0 && kf_aligned(" << c.output << ", 4 * sizeof(" << T << "));\n"
       << "    const long long kf_tile_rows = (kf_rows + TILE - 1) / TILE;\n"
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_cols + TILE - 1) / TILE),\n"
       << "                       static_cast<unsigned>(kf_tile_rows < 65535 ? kf_tile_rows : 65535));\n"
       << "    kf_transpose_vec_kernel<<<kf_grid, dim3(TILE / 4, BY), 0, stream>>>(" << entry_args(task)
       << ", kf_rows, kf_cols, kf_tile_rows, kf_vec_in, kf_vec_out);\n"
       << launch_check() << "}\n";
    return {"transpose-vec", "template/transpose-vec",
            "transpose through padded shared-memory tiles, 4 elements per vector load and store (tunables: TILE, BY)", os.str()};
}

/**
 * Row scan: a warp per row (BLOCK / 32 rows per block), the row taken in chunks of 32 * VEC
 * elements, CHUNKS of them loaded before any is scanned (their loads in flight together);
 * each lane scans its VEC elements, a shuffle scan joins the lanes, the running total of the
 * chunks before is carried along the row, and each lane's VEC outputs go out in one vector
 * store where the row starts on a VEC-element boundary of aligned tensors.
 */
TemplateKernel cuda_scan(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const ComputationStat& st = c.stats.front();
    const std::string id = identity(st.combine, f32);
    auto comb = [&](const std::string& a, const std::string& b) { return combine_expr(st.combine, a, b); };
    auto vec = resolver(task, c, T, [&c](const std::string& n) -> std::string {
        return c.inputs.at(n) == Indexing::PerRow ? "kf_row_" + n : "kf_v_" + n + ".v[kf_k]";
    });
    auto scalar = element_resolver(task, c, T, "kf_base + kf_c + kf_k", "kf_c + kf_k", "");
    std::vector<std::string> loaded;
    for (const auto& e : {&st.map, &c.map})
        for (const auto& n : tensors_in(*e, c))
            if (c.inputs.at(n) != Indexing::PerRow && std::find(loaded.begin(), loaded.end(), n) == loaded.end())
                loaded.push_back(n);
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Row scan (CUDA): a warp per row, chunks of 32 x VEC elements, shuffle scans, a carry along the row.", c)
       << "\n#define BLOCK 256  // @kf tunable values(64, 128, 256, 512, 1024)\n"
       << "#define VEC " << (f32 ? 4 : 2) << "      // @kf tunable values(1, 2" << (f32 ? ", 4" : "") << ")\n"
       << "#define CHUNKS 2   // @kf tunable values(1, 2, 4)\n\n"
       << vector_helpers(T)
       << "template <int V>\n__global__ void __launch_bounds__(BLOCK) kf_scan_kernel(" << entry_params(task, Backend::Cuda)
       << ", long long kf_rows, long long kf_cols) {\n"
       << "    constexpr int kf_rpb = BLOCK / 32;\n"
       << "    const int kf_lane = threadIdx.x & 31;\n"
       << "    for (long long kf_r0 = static_cast<long long>(blockIdx.x) * kf_rpb; kf_r0 < kf_rows;\n"
       << "         kf_r0 += static_cast<long long>(gridDim.x) * kf_rpb) {\n"
       << "        const long long kf_r = kf_r0 + threadIdx.x / 32;\n"
       << "        if (kf_r >= kf_rows) continue;  // the whole warp: one row per warp\n"
       << "        const long long kf_base = kf_r * kf_cols;\n"
       << "        (void)kf_base;\n";
    for (const auto& n : per_row_tensors(c)) os << "        const " << T << " kf_row_" << n << " = " << n << "[kf_r];\n";
    os << "        " << T << " kf_carry = " << id << ";\n"
       << "        // CHUNKS chunks of 32 * V elements are loaded before any is scanned, so that their loads are in flight together.\n"
       << "        for (long long kf_c00 = 0; kf_c00 < kf_cols; kf_c00 += 32 * V * CHUNKS) {\n"
       << "            " << T << " kf_xs[CHUNKS][V];\n"
       << "#pragma unroll\n"
       << "            for (int kf_u = 0; kf_u < CHUNKS; ++kf_u) {\n"
       << "                const long long kf_c = kf_c00 + kf_u * 32 * V + static_cast<long long>(kf_lane) * V;\n"
       << "                " << T << "* kf_x = kf_xs[kf_u];\n"
       << "                if (V > 1 && kf_c + V <= kf_cols) {\n";
    for (const auto& n : loaded)
        os << "                    const KfVec<V> kf_v_" << n << " = kf_load<V>(" << n
           << (c.inputs.at(n) == Indexing::Full ? " + kf_base" : "") << " + kf_c);\n";
    os << "#pragma unroll\n"
       << "                    for (int kf_k = 0; kf_k < V; ++kf_k) kf_x[kf_k] = " << st.map.to_c(vec, f32, true) << ";\n"
       << "                } else {\n"
       << "#pragma unroll\n"
       << "                    for (int kf_k = 0; kf_k < V; ++kf_k)\n"
       << "                        kf_x[kf_k] = kf_c + kf_k < kf_cols ? " << st.map.to_c(scalar, f32, true) << " : " << id << ";\n"
       << "                }\n"
       << "            }\n"
       << "#pragma unroll\n"
       << "            for (int kf_u = 0; kf_u < CHUNKS; ++kf_u) {\n"
       << "                const long long kf_c = kf_c00 + kf_u * 32 * V + static_cast<long long>(kf_lane) * V;\n"
       << "                if (kf_c00 + kf_u * 32 * V >= kf_cols) break;  // the same for the whole warp\n"
       << "                " << T << "* kf_x = kf_xs[kf_u];\n"
       << "#pragma unroll\n"
       << "                for (int kf_k = 1; kf_k < V; ++kf_k) kf_x[kf_k] = " << comb("kf_x[kf_k - 1]", "kf_x[kf_k]") << ";\n"
       << "                " << T << " kf_t = kf_x[V - 1];\n"
       << "#pragma unroll\n"
       << "                for (int kf_o = 1; kf_o < 32; kf_o <<= 1) {\n"
       << "                    const " << T << " kf_n = __shfl_up_sync(0xffffffffu, kf_t, kf_o);\n"
       << "                    if (kf_lane >= kf_o) kf_t = " << comb("kf_n", "kf_t") << ";\n"
       << "                }\n"
       << "                " << T << " kf_before = __shfl_up_sync(0xffffffffu, kf_t, 1);\n"
       << "                if (kf_lane == 0) kf_before = " << id << ";\n"
       << "                kf_before = " << comb("kf_carry", "kf_before") << ";\n"
       << "                KfVec<V> kf_o;\n"
       << "#pragma unroll\n"
       << "                for (int kf_k = 0; kf_k < V; ++kf_k) {\n"
       << "                    const " << T << " kf_s_" << st.name << " = " << comb("kf_before", "kf_x[kf_k]") << ";\n"
       << "                    kf_o.v[kf_k] = kf_c + kf_k < kf_cols ? static_cast<" << T << ">(" << c.map.to_c(scalar, f32, true)
       << ") : " << T << "(0);\n"
       << "                }\n"
       << "                // One vector store where the V are inside (rows start on V-element boundaries: kf_vec).\n"
       << "                if (kf_c + V <= kf_cols) {\n"
       << "                    kf_store<V>(" << c.output << " + kf_base + kf_c, kf_o);\n"
       << "                } else {\n"
       << "                    for (int kf_k = 0; kf_k < V && kf_c + kf_k < kf_cols; ++kf_k) " << c.output
       << "[kf_base + kf_c + kf_k] = kf_o.v[kf_k];\n"
       << "                }\n"
       << "                kf_carry = " << comb("kf_carry", "__shfl_sync(0xffffffffu, kf_t, 31)") << ";\n"
       << "            }\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    bool kf_vec = kf_cols % VEC == 0 && kf_aligned(" << c.output << ", VEC * sizeof(" << T << "));\n";
    for (const auto& n : loaded) os << "    kf_vec = kf_vec && kf_aligned(" << n << ", VEC * sizeof(*" << n << "));\n";
    os << "    long long kf_grid = (kf_rows + BLOCK / 32 - 1) / (BLOCK / 32);\n"
       << "    if (kf_grid > 1048576) kf_grid = 1048576;\n"
       << "    if (kf_vec)\n"
       << "        kf_scan_kernel<VEC><<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << entry_args(task)
       << ", kf_rows, kf_cols);\n"
       << "    else\n"
       << "        kf_scan_kernel<1><<<static_cast<unsigned>(kf_grid), BLOCK, 0, stream>>>(" << entry_args(task)
       << ", kf_rows, kf_cols);\n"
       << launch_check() << "}\n";
    return {"scan-warp", "template/scan-warp",
            "row scan, a warp per row in chunks of 32 x VEC (CHUNKS loaded at a time), shuffle scans, a carry and vector stores (tunables: BLOCK, VEC, CHUNKS)", os.str()};
}

/** The Left and Right tensors of a gemm's product. */
std::pair<std::string, std::string> gemm_factors(const Computation& c) {
    std::string left, right;
    for (const auto& [n, ix] : c.inputs) {
        if (ix == Indexing::Left) left = n;
        if (ix == Indexing::Right) right = n;
    }
    return {left, right};
}

/**
 * GEMM with an epilogue: a BM x BN tile of the output per block, TM x TN elements per
 * thread in registers, BK-deep slices of the factors staged in shared memory (the left one
 * k-major, padded); the last, partial slice is guarded. Then the epilogue per element.
 */
TemplateKernel cuda_gemm(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const auto [left, right] = gemm_factors(c);
    const ComputationStat& st = c.stats.front();
    auto product = resolver(task, c, T, [&c](const std::string& n) -> std::string {
        return c.inputs.at(n) == Indexing::Left ? "kf_a[kf_i]" : "kf_b[kf_j]";
    });
    auto epilogue = element_resolver(task, c, T, "kf_r * kf_cols + kf_c", "kf_c", "kf_r");
    const std::string step = "kf_acc[kf_i][kf_j] += " + st.map.to_c(product, f32, true) + ";";
    auto inner_step = [&](const std::string& indent) {
        return indent + "{\n" + indent + "    " + T + " kf_a[TM], kf_b[TN];\n" + indent + "#pragma unroll\n" + indent +
               "    for (int kf_i = 0; kf_i < TM; ++kf_i) kf_a[kf_i] = kf_as[kf_kk][kf_ty * TM + kf_i];\n" + indent +
               "#pragma unroll\n" + indent +
               "    for (int kf_j = 0; kf_j < TN; ++kf_j) kf_b[kf_j] = kf_bs[kf_kk][kf_tx * TN + kf_j];\n" + indent +
               "#pragma unroll\n" + indent + "    for (int kf_i = 0; kf_i < TM; ++kf_i)\n" + indent + "#pragma unroll\n" +
               indent + "        for (int kf_j = 0; kf_j < TN; ++kf_j) " + step + "\n" + indent + "}\n";
    };
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("GEMM with an epilogue (CUDA): BM x BN output tiles, TM x TN per thread, BK-deep shared-memory slices.", c)
       << "\n#define BM 64  // @kf tunable values(32, 64, 128)\n"
       << "#define BN 64  // @kf tunable values(32, 64, 128)\n"
       << "#define BK 16  // @kf tunable values(8, 16, 32)\n"
       << "#define TM 4   // @kf tunable values(2, 4, 8)\n"
       << "#define TN 4   // @kf tunable values(2, 4, 8)\n"
       << "// @kf constraint (BM / TM) * (BN / TN) <= 1024\n"
       << "// @kf constraint (BM / TM) * (BN / TN) >= 32\n"
       << "// @kf constraint BK * (BM + BN + 1) * " << (f32 ? 4 : 8) << " <= 49152\n\n"
       << "__global__ void __launch_bounds__((BM / TM) * (BN / TN)) kf_gemm_kernel(" << entry_params(task, Backend::Cuda)
       << ", long long kf_rows, long long kf_cols, long long kf_inner, long long kf_row_tiles) {\n"
       << "    constexpr int kf_threads = (BM / TM) * (BN / TN);\n"
       << "    __shared__ " << T << " kf_as[BK][BM + 1];  // the left factor's slice, k-major\n"
       << "    __shared__ " << T << " kf_bs[BK][BN];\n"
       << "    const int kf_tid = threadIdx.x;\n"
       << "    const int kf_ty = kf_tid / (BN / TN), kf_tx = kf_tid % (BN / TN);\n"
       << "    const long long kf_c0 = static_cast<long long>(blockIdx.x) * BN;\n"
       << "    // gridDim.y is at most 65535: row tiles beyond it are taken in further rounds.\n"
       << "    for (long long kf_rt = blockIdx.y; kf_rt < kf_row_tiles; kf_rt += gridDim.y) {\n"
       << "        const long long kf_r0 = kf_rt * BM;\n"
       << "        " << T << " kf_acc[TM][TN];\n"
       << "#pragma unroll\n"
       << "        for (int kf_i = 0; kf_i < TM; ++kf_i)\n"
       << "#pragma unroll\n"
       << "            for (int kf_j = 0; kf_j < TN; ++kf_j) kf_acc[kf_i][kf_j] = 0;\n"
       << "        for (long long kf_k0 = 0; kf_k0 < kf_inner; kf_k0 += BK) {\n"
       << "            for (int kf_e = kf_tid; kf_e < BM * BK; kf_e += kf_threads) {\n"
       << "                const int kf_m = kf_e / BK, kf_kk = kf_e % BK;\n"
       << "                const long long kf_gr = kf_r0 + kf_m, kf_gk = kf_k0 + kf_kk;\n"
       << "                kf_as[kf_kk][kf_m] = kf_gr < kf_rows && kf_gk < kf_inner ? " << left << "[kf_gr * kf_inner + kf_gk] : "
       << T << "(0);\n"
       << "            }\n"
       << "            for (int kf_e = kf_tid; kf_e < BK * BN; kf_e += kf_threads) {\n"
       << "                const int kf_kk = kf_e / BN, kf_n = kf_e % BN;\n"
       << "                const long long kf_gk = kf_k0 + kf_kk, kf_gc = kf_c0 + kf_n;\n"
       << "                kf_bs[kf_kk][kf_n] = kf_gk < kf_inner && kf_gc < kf_cols ? " << right << "[kf_gk * kf_cols + kf_gc] : "
       << T << "(0);\n"
       << "            }\n"
       << "            __syncthreads();\n"
       << "            if (kf_k0 + BK <= kf_inner) {\n"
       << "#pragma unroll\n"
       << "                for (int kf_kk = 0; kf_kk < BK; ++kf_kk)\n"
       << inner_step("                    ")
       << "            } else {  // the last slice: only its columns inside the inner dimension\n"
       << "                const int kf_kn = static_cast<int>(kf_inner - kf_k0);\n"
       << "                for (int kf_kk = 0; kf_kk < kf_kn; ++kf_kk)\n"
       << inner_step("                    ")
       << "            }\n"
       << "            __syncthreads();\n"
       << "        }\n"
       << "#pragma unroll\n"
       << "        for (int kf_i = 0; kf_i < TM; ++kf_i)\n"
       << "#pragma unroll\n"
       << "            for (int kf_j = 0; kf_j < TN; ++kf_j) {\n"
       << "                const long long kf_r = kf_r0 + kf_ty * TM + kf_i, kf_c = kf_c0 + kf_tx * TN + kf_j;\n"
       << "                if (kf_r >= kf_rows || kf_c >= kf_cols) continue;\n"
       << "                const " << T << " kf_s_" << st.name << " = kf_acc[kf_i][kf_j];\n"
       << "                " << c.output << "[kf_r * kf_cols + kf_c] = static_cast<" << T << ">(" << c.map.to_c(epilogue, f32, true)
       << ");\n"
       << "            }\n"
       << "    }\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    const long long kf_row_tiles = (kf_rows + BM - 1) / BM;\n"
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_cols + BN - 1) / BN),\n"
       << "                       static_cast<unsigned>(kf_row_tiles < 65535 ? kf_row_tiles : 65535));\n"
       << "    kf_gemm_kernel<<<kf_grid, (BM / TM) * (BN / TN), 0, stream>>>(" << entry_args(task)
       << ", kf_rows, kf_cols, kf_inner, kf_row_tiles);\n"
       << launch_check() << "}\n";
    return {"gemm-tiled", "template/gemm-tiled",
            "GEMM with its epilogue: shared-memory slices, a register tile per thread (tunables: BM, BN, BK, TM, TN)", os.str()};
}

/** The kernel's parameter list with every pointer __restrict__ (the task's tensors never alias). */
std::string restrict_params(const std::string& params) {
    std::string out;
    for (char ch : params) {
        out += ch;
        if (ch == '*') out += " __restrict__";
    }
    return out;
}

/**
 * Stencil: a thread per column and ITEMS consecutive rows, BX x BY threads per block; the
 * neighbours are read from global memory (pointers __restrict__, so loads go through the
 * read-only cache). Where a thread's column and all its rows are inside, the rows are one
 * unrolled block without branches, so that a cell read for one row is reused from a
 * register for the next; elsewhere each cell checks whether it is within the radius of an
 * edge (per dimension) and takes the border expression there, or the map with its
 * neighbours padded.
 */
TemplateKernel cuda_stencil(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto cell = element_resolver(task, c, T, "kf_i", "kf_c", "kf_r");
    const std::string RR = std::to_string(c.radius_rows), RC = std::to_string(c.radius_cols);
    const std::string map = c.map.to_c(neighbour_resolver(T, cell, "kf_i", ""), f32, true);
    const std::string edge = stencil_edge(c, cell, T, "kf_i", f32, true);
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Stencil (CUDA): a thread per column and ITEMS rows, neighbours reused across the rows in registers.", c)
       << "\n#define BX 32     // @kf tunable values(16, 32, 64, 128, 256)\n"
       << "#define BY 8      // @kf tunable values(1, 2, 4, 8, 16)\n"
       << "#define ITEMS 4   // @kf tunable values(1, 2, 4, 8, 16)\n"
       << "// @kf constraint BX * BY <= 1024\n"
       << "// @kf constraint BX * BY >= 32\n\n";
    os << stencil_helpers(c, true);
    os << "__global__ void __launch_bounds__(BX * BY) kf_stencil_kernel(" << restrict_params(entry_params(task, Backend::Cuda))
       << ", long long kf_rows, long long kf_cols, long long kf_groups) {\n"
       << "    const long long kf_c = static_cast<long long>(blockIdx.x) * BX + threadIdx.x;\n"
       << "    if (kf_c >= kf_cols) return;\n"
       << "    const bool kf_col_inside = kf_c >= " << RC << " && kf_c < kf_cols - " << RC << ";\n"
       << "    // gridDim.y is at most 65535: groups of BY * ITEMS rows beyond it are taken in further rounds.\n"
       << "    for (long long kf_g = blockIdx.y; kf_g < kf_groups; kf_g += gridDim.y) {\n"
       << "        const long long kf_r0 = kf_g * (BY * ITEMS) + static_cast<long long>(threadIdx.y) * ITEMS;\n"
       << "        if (kf_col_inside && kf_r0 >= " << RR << " && kf_r0 + ITEMS <= kf_rows - " << RR << ") {\n"
       << "#pragma unroll\n"
       << "            for (int kf_it = 0; kf_it < ITEMS; ++kf_it) {\n"
       << "                const long long kf_r = kf_r0 + kf_it;\n"
       << "                const long long kf_i = kf_r * kf_cols + kf_c;\n"
       << "                (void)kf_r;\n"
       << "                " << c.output << "[kf_i] = static_cast<" << T << ">(" << map << ");\n"
       << "            }\n"
       << "            continue;\n"
       << "        }\n"
       << "        for (int kf_it = 0; kf_it < ITEMS; ++kf_it) {\n"
       << "            const long long kf_r = kf_r0 + kf_it;\n"
       << "            if (kf_r >= kf_rows) break;\n"
       << "            const long long kf_i = kf_r * kf_cols + kf_c;\n"
       << "            const bool kf_inside = kf_col_inside && kf_r >= " << RR << " && kf_r < kf_rows - " << RR << ";\n"
       << "            " << c.output << "[kf_i] = kf_inside ? static_cast<" << T << ">(" << map << ")\n"
       << "                                  : static_cast<" << T << ">(" << edge << ");\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    const long long kf_groups = (kf_rows + BY * ITEMS - 1) / (BY * ITEMS);\n"
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_cols + BX - 1) / BX),\n"
       << "                       static_cast<unsigned>(kf_groups < 65535 ? kf_groups : 65535));\n"
       << "    kf_stencil_kernel<<<kf_grid, dim3(BX, BY), 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols, kf_groups);\n"
       << launch_check() << "}\n";
    return {"stencil-direct", "template/stencil-direct",
            "stencil, a thread per column and ITEMS rows, neighbours reused across rows in registers (tunables: BX, BY, ITEMS)",
            os.str()};
}

/** What the register-held stencil instances share: the neighbour tensors, the cell resolver, the map of a cell read from memory and the edge. */
struct StencilCells {
    std::set<std::string> neighbours;
    std::function<std::string(const std::string&)> cell;
    std::string scalar_map, edge;
};

StencilCells stencil_cells(const Task& task, const Computation& c, const std::string& T, bool f32) {
    StencilCells s;
    for (const auto& nb : c.map.neighbours()) s.neighbours.insert(nb.tensor);
    s.cell = element_resolver(task, c, T, "kf_i", "kf_c", "kf_r");
    s.scalar_map = c.map.to_c(neighbour_resolver(T, s.cell, "kf_i", ""), f32, true);
    s.edge = stencil_edge(c, s.cell, T, "kf_i", f32, true);
    return s;
}

/** A name of a stencil's map split into its tensor and offsets: "x@di,dj", or "x" at offsets 0. */
void split_neighbour(const std::string& name, std::string& tensor, int& di, int& dj) {
    const auto sep = name.find('@');
    tensor = name.substr(0, sep);
    di = dj = 0;
    if (sep == std::string::npos) return;
    di = std::stoi(name.substr(sep + 1, name.find(',') - sep - 1));
    dj = std::stoi(name.substr(name.find(',') + 1));
}

/**
 * A stencil that reads along the row only (no row offsets, e.g. a 1-D convolution): a thread
 * takes 4 consecutive cells of a row. Where they and their halo (H = the column radius
 * rounded up to 4) are inside the row and the row starts on a 4-element boundary, each
 * neighbour tensor comes in (4 + 2H) / 4 vector loads into registers and the 4 outputs go out
 * in one vector store; elsewhere cell by cell, the edge cells from the border or the padded
 * map. BLOCK threads per block along the row, rows over the grid's y (in rounds beyond 65535).
 */
TemplateKernel cuda_stencil_rows(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const int H = (c.radius_cols + 3) / 4 * 4;
    const int W = 4 + 2 * H;  // registers per neighbour tensor
    const StencilCells sc = stencil_cells(task, c, T, f32);
    const auto& neighbours = sc.neighbours;
    const auto& cell = sc.cell;
    const std::string& scalar_map = sc.scalar_map;
    const std::string& edge = sc.edge;
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Stencil along rows (CUDA): 4 cells per thread, vector loads of the row with its halo, one vector store.", c)
       << "\n#define BLOCK 128  // @kf tunable values(32, 64, 128, 256, 512)\n\n"
       << vector_helpers(T);
    os << stencil_helpers(c, true);
    os << "__global__ void __launch_bounds__(BLOCK) kf_stencil_rows_kernel(" << restrict_params(entry_params(task, Backend::Cuda))
       << ", long long kf_rows, long long kf_cols, bool kf_vec) {\n"
       << "    const long long kf_c0 = (static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x) * 4;\n"
       << "    if (kf_c0 >= kf_cols) return;\n"
       << "    const bool kf_inner = kf_vec && kf_c0 >= " << H << " && kf_c0 + 4 + " << H << " <= kf_cols;\n"
       << "    for (long long kf_r = blockIdx.y; kf_r < kf_rows; kf_r += gridDim.y) {\n"
       << "        const long long kf_base = kf_r * kf_cols;\n"
       << "        if (kf_inner) {\n";
    for (const auto& n : neighbours) {
        os << "            " << T << " kf_w_" << n << "[" << W << "];\n"
           << "#pragma unroll\n"
           << "            for (int kf_j = 0; kf_j < " << W / 4 << "; ++kf_j) {\n"
           << "                const KfVec<4> kf_p = kf_load<4>(" << n << " + kf_base + kf_c0 - " << H << " + 4 * kf_j);\n"
           << "#pragma unroll\n"
           << "                for (int kf_k = 0; kf_k < 4; ++kf_k) kf_w_" << n << "[4 * kf_j + kf_k] = kf_p.v[kf_k];\n"
           << "            }\n";
    }
    os << "            KfVec<4> kf_out;\n";
    for (int k = 0; k < 4; ++k) {
        // Cell k: its neighbours from the registers, everything else as a cell would read it.
        auto reg = [&, k](const std::string& name) -> std::string {
            std::string t;
            int di = 0, dj = 0;
            split_neighbour(name, t, di, dj);
            if (!neighbours.count(t)) return cell(name);
            return "kf_w_" + t + "[" + std::to_string(H + k + dj) + "]";
        };
        os << "            {\n"
           << "                const long long kf_c = kf_c0 + " << k << ", kf_i = kf_base + kf_c;\n"
           << "                (void)kf_c;\n                (void)kf_i;\n"
           << "                kf_out.v[" << k << "] = static_cast<" << T << ">(" << c.map.to_c(reg, f32, true) << ");\n"
           << "            }\n";
    }
    os << "            kf_store<4>(" << c.output << " + kf_base + kf_c0, kf_out);\n"
       << "            continue;\n"
       << "        }\n"
       << "        for (long long kf_c = kf_c0; kf_c < kf_c0 + 4 && kf_c < kf_cols; ++kf_c) {\n"
       << "            const long long kf_i = kf_base + kf_c;\n"
       << "            const bool kf_inside = kf_c >= " << c.radius_cols << " && kf_c < kf_cols - " << c.radius_cols << ";\n"
       << "            " << c.output << "[kf_i] = kf_inside ? static_cast<" << T << ">(" << scalar_map << ")\n"
       << "                                  : static_cast<" << T << ">(" << edge << ");\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n"
       << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    // Vector loads and stores where every row starts on a 4-element boundary of aligned tensors.\n"
       << "    bool kf_vec = kf_cols % 4 == 0;\n";
    for (const auto& n : neighbours) os << "    kf_vec = kf_vec && kf_aligned(" << n << ", 4 * sizeof(*" << n << "));\n";
    os << "    kf_vec = kf_vec && kf_aligned(" << c.output << ", 4 * sizeof(" << T << "));\n"
       << "    const long long kf_quads = (kf_cols + 3) / 4;\n"
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_quads + BLOCK - 1) / BLOCK), static_cast<unsigned>(kf_rows < 65535 ? kf_rows : 65535));\n"
       << "    kf_stencil_rows_kernel<<<kf_grid, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols, kf_vec);\n"
       << launch_check() << "}\n";
    return {"stencil-rows", "template/stencil-rows",
            "stencil along rows, 4 cells per thread from vector loads of the row and its halo (tunable: BLOCK)", os.str()};
}

/** The stencil-window source up to its kernel's fast path: includes, tunables, helpers, the warp's test. */
std::string stencil_window_head(const Task& task, const Computation& c, const std::string& T) {
    const std::string rr = std::to_string(c.radius_rows), r = std::to_string(c.radius_cols);
    const bool padded = !c.pad.empty();
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Stencil in a window of rows (CUDA): 4 cells of ITEMS rows per thread, a vector load per row, the halo by warp shuffles.", c)
       << "\n#define BLOCK 128  // @kf tunable values(32, 64, 128, 256, 512)\n"
       << "#define ITEMS 8    // @kf tunable values(1, 2, 4, 8, 16)\n\n"
       << vector_helpers(T);
    os << stencil_helpers(c, true);
    os << "__global__ void __launch_bounds__(BLOCK) kf_stencil_window_kernel(" << restrict_params(entry_params(task, Backend::Cuda))
       << ", long long kf_rows, long long kf_cols, long long kf_groups, bool kf_vec) {\n"
       << "    const int kf_lane = threadIdx.x & 31;\n"
       << "    const long long kf_c0 = (static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x) * 4;\n"
       << "    // The warp's cells and their halo: the fast path is taken by whole warps (its shuffles need every lane).\n"
       << "    const long long kf_w0 = (static_cast<long long>(blockIdx.x) * BLOCK + (threadIdx.x & ~31u)) * 4;\n"
       << (padded ? "    // Padded: the window's reads outside the layout take the pad, so every whole warp of whole row groups is fast.\n"
                    "    const bool kf_warp_inner = kf_vec && kf_w0 + 128 <= kf_cols;\n"
                  : "    const bool kf_warp_inner = kf_vec && kf_w0 >= " + r + " && kf_w0 + 128 + " + r + " <= kf_cols;\n")
       << "    (void)kf_lane;\n"
       << "    for (long long kf_g = blockIdx.y; kf_g < kf_groups; kf_g += gridDim.y) {\n"
       << "        const long long kf_r0 = kf_g * ITEMS;\n"
       << (padded ? "        if (kf_warp_inner && kf_r0 + ITEMS <= kf_rows) {\n"
                  : "        if (kf_warp_inner && kf_r0 >= " + rr + " && kf_r0 + ITEMS + " + rr + " <= kf_rows) {\n");
    return os.str();
}

/** Each neighbour tensor's window: ITEMS + 2 * RR rows of the thread's 4 cells and their halo, the halo by shuffles. */
std::string stencil_window_loads(const Computation& c, const std::string& T, const std::set<std::string>& neighbours) {
    const int RR = c.radius_rows, R = c.radius_cols;
    const std::string rr = std::to_string(RR), r = std::to_string(R), width = std::to_string(4 + 2 * R);
    std::ostringstream os;
    // The window's row kf_j of a neighbour tensor n (clamped, or zeros outside), and its halo at the warp's ends.
    auto window_row = [&](const std::string& n) -> std::string {
        if (c.pad == "clamp")
            return "                const auto* kf_p = " + n + " + kf_clamp(kf_r0 - " + rr + " + kf_j, kf_rows) * kf_cols + kf_c0;\n"
                   "                const KfVec<4> kf_v = kf_load<4>(kf_p);\n";
        if (c.pad == "zero")
            return "                const long long kf_rr = kf_r0 - " + rr + " + kf_j;\n"
                   "                const bool kf_rin = kf_rr >= 0 && kf_rr < kf_rows;  // the same for the whole warp\n"
                   "                const auto* kf_p = " + n + " + (kf_rin ? kf_rr : 0) * kf_cols + kf_c0;\n"
                   "                KfVec<4> kf_v;\n"
                   "                if (kf_rin) kf_v = kf_load<4>(kf_p);\n"
                   "                else\n"
                   "#pragma unroll\n"
                   "                    for (int kf_k = 0; kf_k < 4; ++kf_k) kf_v.v[kf_k] = static_cast<" + T + ">(0);\n";
        return "                const auto* kf_p = " + n + " + (kf_r0 - " + rr + " + kf_j) * kf_cols + kf_c0;\n"
               "                const KfVec<4> kf_v = kf_load<4>(kf_p);\n";
    };
    std::string left = "static_cast<" + T + ">(kf_p[-kf_h])", right = "static_cast<" + T + ">(kf_p[3 + kf_h])";
    if (c.pad == "clamp") {
        left = "static_cast<" + T + ">(kf_p[kf_c0 >= kf_h ? -kf_h : -kf_c0])";
        right = "static_cast<" + T + ">(kf_p[kf_c0 + 3 + kf_h < kf_cols ? 3 + kf_h : kf_cols - 1 - kf_c0])";
    } else if (c.pad == "zero") {
        left = "kf_rin && kf_c0 >= kf_h ? " + left + " : static_cast<" + T + ">(0)";
        right = "kf_rin && kf_c0 + 3 + kf_h < kf_cols ? " + right + " : static_cast<" + T + ">(0)";
    }
    for (const auto& n : neighbours) {
        os << "            " << T << " kf_w_" << n << "[ITEMS + " << 2 * RR << "][" << width << "];\n"
           << "#pragma unroll\n"
           << "            for (int kf_j = 0; kf_j < ITEMS + " << 2 * RR << "; ++kf_j) {\n"
           << window_row(n)
           << "#pragma unroll\n"
           << "                for (int kf_k = 0; kf_k < 4; ++kf_k) kf_w_" << n << "[kf_j][" << r << " + kf_k] = kf_v.v[kf_k];\n";
        if (R > 0) {
            os << "#pragma unroll\n"
               << "                for (int kf_h = 1; kf_h <= " << r << "; ++kf_h) {\n"
               << "                    " << T << " kf_left = __shfl_up_sync(0xffffffffu, kf_v.v[4 - kf_h], 1);\n"
               << "                    " << T << " kf_right = __shfl_down_sync(0xffffffffu, kf_v.v[kf_h - 1], 1);\n"
               << "                    if (kf_lane == 0) kf_left = " << left << ";\n"
               << "                    if (kf_lane == 31) kf_right = " << right << ";\n"
               << "                    kf_w_" << n << "[kf_j][" << r << " - kf_h] = kf_left;\n"
               << "                    kf_w_" << n << "[kf_j][" << r << " + 3 + kf_h] = kf_right;\n"
               << "                }\n";
        }
        os << "            }\n";
    }
    return os.str();
}

/** The fast path's ITEMS rows of 4 cells, their neighbours from the windows, each row in one vector store. */
std::string stencil_window_cells(const Computation& c, const std::string& T, bool f32, const StencilCells& sc) {
    const int RR = c.radius_rows, R = c.radius_cols;
    const auto& neighbours = sc.neighbours;
    const auto& cell = sc.cell;
    std::ostringstream os;
    os << "#pragma unroll\n"
       << "            for (int kf_it = 0; kf_it < ITEMS; ++kf_it) {\n"
       << "                const long long kf_r = kf_r0 + kf_it;\n"
       << "                KfVec<4> kf_out;\n";
    for (int k = 0; k < 4; ++k) {
        // Cell k of row kf_it: its neighbours from the window, everything else as a cell would read it.
        auto reg = [&, k](const std::string& name) -> std::string {
            std::string t;
            int di = 0, dj = 0;
            split_neighbour(name, t, di, dj);
            if (!neighbours.count(t)) return cell(name);
            return "kf_w_" + t + "[kf_it + " + std::to_string(RR + di) + "][" + std::to_string(R + k + dj) + "]";
        };
        os << "                {\n"
           << "                    const long long kf_c = kf_c0 + " << k << ", kf_i = kf_r * kf_cols + kf_c;\n"
           << "                    (void)kf_c;\n                    (void)kf_i;\n"
           << "                    kf_out.v[" << k << "] = static_cast<" << T << ">(" << c.map.to_c(reg, f32, true) << ");\n"
           << "                }\n";
    }
    os << "                kf_store<4>(" << c.output << " + kf_r * kf_cols + kf_c0, kf_out);\n"
       << "            }\n"
       << "            continue;\n"
       << "        }\n";
    return os.str();
}

/** Elsewhere cell by cell: the inner cells from the map, the edge cells from the border or the padded map. */
std::string stencil_window_cell_by_cell(const Computation& c, const std::string& T, const StencilCells& sc) {
    const std::string rr = std::to_string(c.radius_rows), r = std::to_string(c.radius_cols);
    const std::string& scalar_map = sc.scalar_map;
    const std::string& edge = sc.edge;
    std::ostringstream os;
    os << "        for (int kf_it = 0; kf_it < ITEMS; ++kf_it) {\n"
       << "            const long long kf_r = kf_r0 + kf_it;\n"
       << "            if (kf_r >= kf_rows) break;\n"
       << "            for (long long kf_c = kf_c0; kf_c < kf_c0 + 4 && kf_c < kf_cols; ++kf_c) {\n"
       << "                const long long kf_i = kf_r * kf_cols + kf_c;\n"
       << "                const bool kf_inside = kf_r >= " << rr << " && kf_r < kf_rows - " << rr << " && kf_c >= " << r
       << " && kf_c < kf_cols - " << r << ";\n"
       << "                " << c.output << "[kf_i] = kf_inside ? static_cast<" << T << ">(" << scalar_map << ")\n"
       << "                                      : static_cast<" << T << ">(" << edge << ");\n"
       << "            }\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n";
    return os.str();
}

/** The entry: vector access where rows start on 4-element boundaries of aligned tensors, the grid of row groups. */
std::string stencil_window_entry(const Task& task, const Computation& c, const std::string& T,
                                 const std::set<std::string>& neighbours) {
    std::ostringstream os;
    os << entry_definition(task, Backend::Cuda) << " {\n"
       << layout_consts(c)
       << "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
       << "    // Vector loads and stores where every row starts on a 4-element boundary of aligned tensors.\n"
       << "    bool kf_vec = kf_cols % 4 == 0;\n";
    for (const auto& n : neighbours) os << "    kf_vec = kf_vec && kf_aligned(" << n << ", 4 * sizeof(*" << n << "));\n";
    os << "    kf_vec = kf_vec && kf_aligned(" << c.output << ", 4 * sizeof(" << T << "));\n"
       << "    const long long kf_quads = (kf_cols + 3) / 4;\n"
       << "    const long long kf_groups = (kf_rows + ITEMS - 1) / ITEMS;\n"
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_quads + BLOCK - 1) / BLOCK),\n"
       << "                       static_cast<unsigned>(kf_groups < 65535 ? kf_groups : 65535));\n"
       << "    kf_stencil_window_kernel<<<kf_grid, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_rows, kf_cols, kf_groups, kf_vec);\n"
       << launch_check() << "}\n";
    return os.str();
}

/**
 * A 2-D stencil of small radii (rows and columns at most 4): a thread takes 4 consecutive cells
 * of a row and ITEMS consecutive rows. Where its warp's cells and their halo are inside, the
 * rows start on 4-element boundaries of aligned tensors and the group's rows and their halo
 * rows are inside, each row of each neighbour tensor comes in one vector load per thread,
 * the column halo from the neighbouring lanes (warp shuffles; the warp's first and last
 * lanes read theirs), each row is kept in registers for the ITEMS + 2 * row radius rows that
 * read it, and the 4 outputs of a row go out in one vector store. A padded stencil's window
 * takes the pad where it reaches outside (rows and halo columns clamped, or zeros), so every
 * whole warp of a whole group of rows is fast, at the edges too. Elsewhere cell by cell, the
 * edge cells from the border or the padded map. BLOCK threads (a multiple of 32) along the
 * row, groups of ITEMS rows over the grid's y (in rounds beyond 65535).
 */
TemplateKernel cuda_stencil_window(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const StencilCells sc = stencil_cells(task, c, T, f32);
    const std::string source = stencil_window_head(task, c, T) + stencil_window_loads(c, T, sc.neighbours) +
                               stencil_window_cells(c, T, f32, sc) + stencil_window_cell_by_cell(c, T, sc) +
                               stencil_window_entry(task, c, T, sc.neighbours);
    return {"stencil-window", "template/stencil-window",
            "2-D stencil, 4 cells of ITEMS rows per thread: a vector load per row kept in registers, the halo by warp shuffles "
            "(tunables: BLOCK, ITEMS)",
            source};
}

/** The histogram source's includes, tunables and device helpers (the global add of a count, the copies' shift). */
std::string histogram_prelude(const Computation& c, const std::string& out_type, bool wide) {
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Histogram (CUDA): vector loads, COPIES sub-histograms per block in shared memory, one global atomic per bin and block.", c)
       << "\n#define BLOCK 512         // @kf tunable values(128, 256, 512, 1024)\n"
       << "#define VEC 16            // @kf tunable values(1, 2, 4, 8, 16)\n"
       << "#define COPIES 32         // @kf tunable values(1, 2, 4, 8, 16, 32)\n"
       << "#define BLOCKS_PER_SM 4   // @kf tunable values(1, 2, 4, 8, 16)\n\n"
       << pack_loader()
       << "__device__ __forceinline__ void kf_global_add(" << out_type << "* p, unsigned int v) {\n"
       << (wide ? "    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));\n"
                : "    atomicAdd(reinterpret_cast<unsigned int*>(p), v);\n")
       << "}\n\n"
       << "// log2 of the copies of `bins` bins in shared memory: COPIES (a power of two), halved until they fit in 48 KiB.\n"
       << "__host__ __device__ constexpr unsigned kf_copy_shift(long long bins) {\n"
       << "    unsigned shift = 0;\n"
       << "    while ((2u << shift) <= static_cast<unsigned>(COPIES)) ++shift;\n"
       << "    while (shift > 0 && (bins << shift) * static_cast<long long>(sizeof(unsigned int)) > 48 * 1024) --shift;\n"
       << "    return shift;\n"
       << "}\n\n";
    return os.str();
}

/** The kernel up to its loop over the input: the bins and copies, the shared sub-histograms, kf_count. */
std::string histogram_kernel_head(const Task& task, const Computation& c, bool constant_bins) {
    std::ostringstream os;
    os << "template <int V, bool SHARED>\n__global__ void __launch_bounds__(BLOCK) kf_histogram_kernel("
       << entry_params(task, Backend::Cuda) << ", long long kf_n, long long kf_bins_arg, unsigned kf_shift_arg) {\n";
    if (constant_bins)
        os << "    // The bins are a constant: so are the copies, and a bin's check folds away where its type bounds it.\n"
           << "    constexpr long long kf_bins = " << c.bins << ";\n"
           << "    constexpr unsigned kf_shift = kf_copy_shift(kf_bins);\n"
           << "    (void)kf_bins_arg;\n"
           << "    (void)kf_shift_arg;\n";
    else
        os << "    const long long kf_bins = kf_bins_arg;\n"
           << "    const unsigned kf_shift = kf_shift_arg;\n";
    os << "    const unsigned kf_copies = 1u << kf_shift;\n"
       << "    // kf_copies copies of the bins when SHARED, interleaved: bin b of copy k at b * kf_copies + k.\n"
       << "    // A thread counts into copy threadIdx.x % kf_copies, so with 32 copies lane l only touches bank l.\n"
       << "    extern __shared__ unsigned int kf_h[];\n"
       << "    if constexpr (SHARED) {\n"
       << "        for (long long kf_b = threadIdx.x; kf_b < kf_copies * kf_bins; kf_b += BLOCK) kf_h[kf_b] = 0;\n"
       << "        __syncthreads();\n"
       << "    }\n"
       << "    unsigned int* kf_mine = kf_h + (threadIdx.x & (kf_copies - 1));\n"
       << "    (void)kf_mine;\n"
       << "    auto kf_count = [&](long long kf_bin) {\n"
       << "        if (static_cast<unsigned long long>(kf_bin) >= static_cast<unsigned long long>(kf_bins)) return;  // below 0 too\n"
       << "        if constexpr (SHARED) atomicAdd(kf_mine + (static_cast<unsigned>(kf_bin) << kf_shift), 1u);\n"
       << "        else kf_global_add(" << c.output << " + kf_bin, 1u);\n"
       << "    };\n"
       << "    const long long kf_stride = static_cast<long long>(gridDim.x) * BLOCK;\n"
       << "    const long long kf_nv = kf_n / V;\n"
       << "    for (long long kf_j = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; kf_j < kf_nv; kf_j += kf_stride) {\n";
    return os.str();
}

/** The kernel's counts (vector packs, then the tail one by one) and the sub-histograms added to the output. */
std::string histogram_kernel_counts(const Task& task, const Computation& c, const std::string& bin_c,
                                    const std::string& bin_scalar_c) {
    std::ostringstream os;
    for (const auto& [n, ix] : c.inputs) {
        (void)ix;
        std::string type;
        for (const auto& t : task.tensors)
            if (t.name == n) type = std::string(cuda_type_name(t.dtype));
        os << "        " << type << " kf_p_" << n << "[V];\n"
           << "        kf_load_pack<V>(" << n << " + kf_j * V, kf_p_" << n << ");\n";
    }
    os << "#pragma unroll\n"
       << "        for (int kf_k = 0; kf_k < V; ++kf_k) kf_count(static_cast<long long>(" << bin_c << "));\n"
       << "    }\n"
       << "    for (long long kf_i = kf_nv * V + static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; kf_i < kf_n; kf_i += kf_stride)\n"
       << "        kf_count(static_cast<long long>(" << bin_scalar_c << "));\n"
       << "    if constexpr (SHARED) {\n"
       << "        __syncthreads();\n"
       << "        for (long long kf_b = threadIdx.x; kf_b < kf_bins; kf_b += BLOCK) {\n"
       << "            unsigned int kf_t = 0;\n"
       << "            // The copies of a bin from a rotated start, so that a warp's reads spread over the banks.\n"
       << "            for (unsigned kf_copy = 0; kf_copy < kf_copies; ++kf_copy)\n"
       << "                kf_t += kf_h[kf_b * kf_copies + ((kf_copy + static_cast<unsigned>(kf_b)) & (kf_copies - 1))];\n"
       << "            if (kf_t != 0) kf_global_add(" << c.output << " + kf_b, kf_t);\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n";
    return os.str();
}

/** The entry: the output cleared, the grid capped by the multiprocessors, shared or global counting by what fits. */
std::string histogram_entry(const Task& task, const Computation& c, const std::string& n_expr,
                            const std::string& out_type) {
    std::ostringstream os;
    os << "static bool kf_aligned(const void* p, int bytes) {\n"
       << "    return reinterpret_cast<unsigned long long>(p) % static_cast<unsigned long long>(bytes) == 0;\n"
       << "}\n\n"
       << sm_count_function()
       << entry_definition(task, Backend::Cuda) << " {\n"
       << "    const long long kf_n = " << n_expr << ";\n"
       << "    const long long kf_bins = " << size_expr(c.bins) << ";\n"
       << "    if (kf_bins <= 0) return;\n"
       << "    cudaMemsetAsync(" << c.output << ", 0, static_cast<size_t>(kf_bins) * sizeof(" << out_type << "), stream);\n"
       << "    if (kf_n <= 0) return;\n"
       << "    const int kf_sms = kf_sm_count();\n"
       << "    bool kf_vec = true;\n";
    for (const auto& [n, ix] : c.inputs) {
        (void)ix;
        os << "    kf_vec = kf_vec && kf_aligned(" << n << ", VEC * sizeof(*" << n << "));\n";
    }
    os << "    const long long kf_v = kf_vec ? VEC : 1;\n"
       << "    long long kf_grid = (kf_n / kf_v + BLOCK - 1) / BLOCK;\n"
       << "    if (kf_grid > static_cast<long long>(kf_sms) * BLOCKS_PER_SM) kf_grid = static_cast<long long>(kf_sms) * BLOCKS_PER_SM;\n"
       << "    if (kf_grid < 1) kf_grid = 1;\n"
       << "    // As many of the COPIES copies as fit in 48 KiB of shared memory (halved until they do).\n"
       << "    const unsigned kf_shift = kf_copy_shift(kf_bins);\n"
       << "    const size_t kf_smem = (static_cast<size_t>(kf_bins) << kf_shift) * sizeof(unsigned int);\n"
       << "    const unsigned kf_g = static_cast<unsigned>(kf_grid);\n"
       << "    if (kf_smem <= 48 * 1024) {\n"
       << "        if (kf_vec) kf_histogram_kernel<VEC, true><<<kf_g, BLOCK, kf_smem, stream>>>(" << entry_args(task)
       << ", kf_n, kf_bins, kf_shift);\n"
       << "        else kf_histogram_kernel<1, true><<<kf_g, BLOCK, kf_smem, stream>>>(" << entry_args(task) << ", kf_n, kf_bins, kf_shift);\n"
       << "    } else {\n"
       << "        if (kf_vec) kf_histogram_kernel<VEC, false><<<kf_g, BLOCK, 0, stream>>>(" << entry_args(task)
       << ", kf_n, kf_bins, 0u);\n"
       << "        else kf_histogram_kernel<1, false><<<kf_g, BLOCK, 0, stream>>>(" << entry_args(task) << ", kf_n, kf_bins, 0u);\n"
       << "    }\n"
       << launch_check() << "}\n";
    return os.str();
}

/**
 * Histogram: a grid of BLOCKS_PER_SM blocks per multiprocessor strides over the input in
 * VEC-element vector loads; each block counts into COPIES sub-histograms in shared memory,
 * interleaved (bin b of copy k at b * copies + k; a thread uses copy threadIdx.x % copies, so
 * that with 32 copies lane l only ever touches bank l and a warp's atomics never conflict),
 * then adds its counts to the output with one global atomic per bin. Copies are halved until
 * they fit in 48 KiB; bins that do not fit even once are counted with global atomics. Where
 * the number of bins is a constant, it and the copies are compile-time constants in the
 * kernel: a bin's check then folds away for a byte input and 256 bins, and a count is a
 * shift, an add and the atomic.
 */
TemplateKernel cuda_histogram(const Task& task, const Computation& c, const std::string& n_expr) {
    std::string out_type = "int32_t";
    bool wide = false;
    for (const auto& t : task.tensors)
        if (t.name == c.output) wide = t.dtype == DType::I64;
    if (wide) out_type = "int64_t";
    auto bin = resolver(task, c, "double", [](const std::string& n) { return "kf_p_" + n + "[kf_k]"; });
    auto bin_scalar = resolver(task, c, "double", [](const std::string& n) { return n + "[kf_i]"; });
    const std::string bin_c = c.map.to_c(bin, false, true), bin_scalar_c = c.map.to_c(bin_scalar, false, true);
    // The bins as a constant where their expression names no size.
    const bool constant_bins = !std::regex_search(c.bins, std::regex("[A-Za-z_]"));
    const std::string source = histogram_prelude(c, out_type, wide) + histogram_kernel_head(task, c, constant_bins) +
                               histogram_kernel_counts(task, c, bin_c, bin_scalar_c) +
                               histogram_entry(task, c, n_expr, out_type);
    return {"histogram-shared", "template/histogram-shared",
            "histogram, vector loads into per-block shared-memory sub-histograms (tunables: BLOCK, VEC, COPIES, BLOCKS_PER_SM)",
            source};
}

/** The first `upto` stats of a column reduction as locals kf_s_<name>, from kf_stats at column kf_c. */
std::string col_stat_locals(const Computation& c, const std::string& T, std::size_t upto, const std::string& indent) {
    std::string out;
    for (std::size_t k = 0; k < upto; ++k)
        out += indent + "const " + T + " kf_s_" + c.stats[k].name + " = kf_stats[" + std::to_string(k) + " * kf_cols + kf_c];\n" +
               indent + "(void)kf_s_" + c.stats[k].name + ";\n";
    return out;
}

/** A column reduction's epilogue kernel, kf_col_epilogue: the output per column from all its stats. */
std::string col_epilogue_kernel(const Task& task, const Computation& c, const std::string& T,
                                const std::function<std::string(const std::string&)>& at, bool f32) {
    return "__global__ void kf_col_epilogue(" + entry_params(task, Backend::Cuda) + ", const " + T + "* kf_stats, long long kf_cols) {\n" +
           "    const long long kf_c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n" +
           "    if (kf_c >= kf_cols) return;\n" + col_stat_locals(c, T, c.stats.size(), "    ") + "    " + c.output +
           "[kf_c] = static_cast<" + T + ">(" + c.epilogue.to_c(at, f32, true) + ");\n}\n\n";
}

/**
 * A column reduction's entry point up to its scratch memory: kf_split slices of kf_chunk rows
 * (SPLIT at most), and from the stream's pool kf_stats (one value per stat and column) and
 * kf_part (`parts` values per slice and column). The device's default pool is told once to
 * keep what is freed (its release threshold), so that a call after a synchronisation does not
 * map its scratch memory again.
 */
std::string col_entry_start(const Task& task, const Computation& c, const std::string& T, int parts) {
    const std::string n = std::to_string(c.stats.size());
    return entry_definition(task, Backend::Cuda) + " {\n" + layout_consts(c) + "    if (kf_cols <= 0) return;\n" +
           "    long long kf_split = SPLIT < kf_rows ? SPLIT : kf_rows;\n" + "    if (kf_split < 1) kf_split = 1;\n" +
           "    const long long kf_chunk = (kf_rows + kf_split - 1) / kf_split > 0 ? (kf_rows + kf_split - 1) / kf_split : 1;\n" +
           "    static const bool kf_pool_kept = [] {\n"
           "        int kf_dev = 0;\n"
           "        cudaMemPool_t kf_pool;\n"
           "        if (cudaGetDevice(&kf_dev) != cudaSuccess || cudaDeviceGetDefaultMemPool(&kf_pool, kf_dev) != cudaSuccess) return false;\n"
           "        unsigned long long kf_keep = ~0ull;\n"
           "        return cudaMemPoolSetAttribute(kf_pool, cudaMemPoolAttrReleaseThreshold, &kf_keep) == cudaSuccess;\n"
           "    }();\n"
           "    (void)kf_pool_kept;\n" +
           "    " + T + "* kf_scratch = nullptr;\n" +
           "    if (cudaMallocAsync(reinterpret_cast<void**>(&kf_scratch), static_cast<size_t>(" + n + " + " +
           (parts == 1 ? std::string() : std::to_string(parts) + " * ") + "kf_split) * static_cast<size_t>(kf_cols) * sizeof(" + T +
           "), stream) != cudaSuccess) return;\n" + "    " + T + "* kf_stats = kf_scratch;\n" + "    " + T +
           "* kf_part = kf_scratch + " + n + " * kf_cols;\n";
}

/**
 * Column reduction: each stat in two steps. A BX x BY block takes BX columns of one of SPLIT
 * slices of the rows (BY threads per column, stepping over the slice's rows, so a warp reads
 * consecutive columns of a row), combines its BY partials in shared memory and writes one
 * partial per column and slice; a second kernel combines the SPLIT partials of each column.
 * The stats and partials live in scratch memory from the stream's pool; then the epilogue
 * per column.
 */
TemplateKernel cuda_cols(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto at = element_resolver(task, c, T, "kf_r * kf_cols + kf_c", "kf_c", "kf_r");
    const std::size_t nstats = c.stats.size();
    const std::string params = entry_params(task, Backend::Cuda);
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Column reduction (CUDA): BX columns x BY threads per block over SPLIT slices of the rows, then the slices combined.", c)
       << "\n#define BX 32     // @kf tunable values(32, 64, 128, 256)\n"
       << "#define BY 8      // @kf tunable values(1, 2, 4, 8, 16, 32)\n"
       << "#define SPLIT 16  // @kf tunable values(1, 4, 16, 64, 256)\n"
       << "// @kf constraint BX * BY <= 1024\n\n";
    for (std::size_t k = 0; k < nstats; ++k) {
        const ComputationStat& st = c.stats[k];
        const std::string id = identity(st.combine, f32);
        os << "// " << st.name << " = " << st.combine << " over the column of " << st.map.text() << ": one slice of rows.\n"
           << "__global__ void __launch_bounds__(BX * BY) kf_col_partial_" << k << "(" << params << ", const " << T
           << "* kf_stats, " << T << "* kf_part, long long kf_rows, long long kf_cols, long long kf_chunk) {\n"
           << "    __shared__ " << T << " kf_sm[BY][BX];\n"
           << "    const long long kf_c = static_cast<long long>(blockIdx.x) * BX + threadIdx.x;\n"
           << "    const bool kf_active = kf_c < kf_cols;\n"
           << "    const long long kf_r0 = static_cast<long long>(blockIdx.y) * kf_chunk;\n"
           << "    const long long kf_r1 = kf_r0 + kf_chunk < kf_rows ? kf_r0 + kf_chunk : kf_rows;\n"
           << "    " << T << " kf_acc = " << id << ";\n"
           << "    if (kf_active) {\n"
           << col_stat_locals(c, T, k, "        ")
           << "        for (long long kf_r = kf_r0 + threadIdx.y; kf_r < kf_r1; kf_r += BY) {\n"
           << "            const " << T << " kf_x = " << st.map.to_c(at, f32, true) << ";\n"
           << "            kf_acc = " << combine_expr(st.combine, "kf_acc", "kf_x") << ";\n"
           << "        }\n"
           << "    }\n"
           << "    kf_sm[threadIdx.y][threadIdx.x] = kf_acc;\n"
           << "    __syncthreads();\n"
           << "    if (threadIdx.y == 0 && kf_active) {\n"
           << "        for (int kf_k = 1; kf_k < BY; ++kf_k) kf_acc = " << combine_expr(st.combine, "kf_acc", "kf_sm[kf_k][threadIdx.x]")
           << ";\n"
           << "        kf_part[static_cast<long long>(blockIdx.y) * kf_cols + kf_c] = kf_acc;\n"
           << "    }\n"
           << "}\n\n"
           << "__global__ void kf_col_combine_" << k << "(" << T << "* kf_stats, const " << T
           << "* kf_part, long long kf_cols, int kf_split) {\n"
           << "    const long long kf_c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
           << "    if (kf_c >= kf_cols) return;\n"
           << "    " << T << " kf_acc = " << id << ";\n"
           << "    for (int kf_s = 0; kf_s < kf_split; ++kf_s) kf_acc = "
           << combine_expr(st.combine, "kf_acc", "kf_part[static_cast<long long>(kf_s) * kf_cols + kf_c]") << ";\n"
           << "    kf_stats[" << k << " * kf_cols + kf_c] = kf_acc;\n"
           << "}\n\n";
    }
    os << col_epilogue_kernel(task, c, T, at, f32) << col_entry_start(task, c, T, 1)
       << "    const dim3 kf_grid(static_cast<unsigned>((kf_cols + BX - 1) / BX), static_cast<unsigned>(kf_split));\n"
       << "    const unsigned kf_flat = static_cast<unsigned>((kf_cols + 255) / 256);\n";
    for (std::size_t k = 0; k < nstats; ++k)
        os << "    kf_col_partial_" << k << "<<<kf_grid, dim3(BX, BY), 0, stream>>>(" << entry_args(task)
           << ", kf_stats, kf_part, kf_rows, kf_cols, kf_chunk);\n"
           << "    kf_col_combine_" << k << "<<<kf_flat, 256, 0, stream>>>(kf_stats, kf_part, kf_cols, static_cast<int>(kf_split));\n";
    os << "    kf_col_epilogue<<<kf_flat, 256, 0, stream>>>(" << entry_args(task) << ", kf_stats, kf_cols);\n"
       << "    cudaFreeAsync(kf_scratch, stream);\n"
       << launch_check() << "}\n";
    return {"cols-split", "template/cols-split",
            "column reduction over SPLIT slices of the rows, BX columns x BY threads per block (tunables: BX, BY, SPLIT)", os.str()};
}

/** The cols-moments source's includes, description and tunables. */
std::string cols_moments_prelude(const Computation& c, bool vector) {
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n#include <stdint.h>\n\n"
       << header_comment("Column sum and centred second moment (CUDA) in one pass: sums of e - k and (e - k)^2 per column, "
                         "k the column's first e; BX threads x BY rows per block over SPLIT slices of the rows.",
                         c)
       << "\n#define BX 32     // @kf tunable values(32, 64, 128, 256)\n"
       << "#define BY 8      // @kf tunable values(1, 2, 4, 8, 16, 32)\n"
       << "#define SPLIT 16  // @kf tunable values(1, 4, 16, 64, 256)\n"
       << "#define UNROLL 4  // @kf tunable values(1, 2, 4, 8)\n"
       // VEC 2 measured faster than 4 on col_std in three runs on the H200 (docs/benchmarks.md).
       << (vector ? "#define VEC 2     // @kf tunable values(1, 2, 4)\n" : "#define VEC 1\n")
       << "// @kf constraint BX * BY <= 1024\n\n"
       << (vector ? pack_loader() : std::string());
    return os.str();
}

/** kf_row (e at a row of V columns, a vector load where e is the tensor itself) and kf_add_row (a row into the sums). */
std::string cols_moments_row_functions(const std::string& T, const std::string& params, const std::string& e,
                                       const std::string& name, bool vector) {
    std::ostringstream os;
    os << "// e at row kf_r of the V columns from kf_c0, into o.\n"
       << "template <int V>\n"
       << "__device__ __forceinline__ void kf_row(" << params << ", long long kf_r, long long kf_c0, long long kf_cols, " << T
       << " (&o)[V]) {\n";
    if (vector)
        os << "    kf_load_pack<V>(" << name << " + kf_r * kf_cols + kf_c0, o);\n";
    else
        os << "#pragma unroll\n"
           << "    for (int kf_j = 0; kf_j < V; ++kf_j) {\n"
           << "        const long long kf_c = kf_c0 + kf_j;\n"
           << "        o[kf_j] = " << e << ";\n"
           << "    }\n";
    os << "}\n\n"
       << "// One row's V elements added to the sums of their differences from k and of their squares.\n"
       << "template <int V>\n"
       << "__device__ __forceinline__ void kf_add_row(const " << T << " (&v)[V], const " << T << " (&k)[V], " << T << " (&d1)[V], " << T
       << " (&d2)[V]) {\n"
       << "#pragma unroll\n"
       << "    for (int kf_j = 0; kf_j < V; ++kf_j) {\n"
       << "        const " << T << " kf_d = v[kf_j] - k[kf_j];\n"
       << "        d1[kf_j] += kf_d;\n"
       << "        d2[kf_j] += kf_d * kf_d;\n"
       << "    }\n"
       << "}\n\n";
    return os.str();
}

/** kf_col_moments: each thread's sums of d and d * d over its rows of a slice, the block's into kf_part. */
std::string cols_moments_kernel(const std::string& T, const std::string& params, const std::string& args,
                                const std::string& zero) {
    std::ostringstream os;
    os << "template <int V>\n"
       << "__global__ void __launch_bounds__(BX * BY) kf_col_moments(" << params << ", " << T
       << "* kf_part, long long kf_rows, long long kf_cols, long long kf_chunk, long long kf_split) {\n"
       << "    __shared__ " << T << " kf_sm[2][BY][BX * V];\n"
       << "    const long long kf_c0 = (static_cast<long long>(blockIdx.x) * BX + threadIdx.x) * V;\n"
       << "    const bool kf_active = kf_c0 < kf_cols;\n"
       << "    const long long kf_r0 = static_cast<long long>(blockIdx.y) * kf_chunk;\n"
       << "    const long long kf_r1 = kf_r0 + kf_chunk < kf_rows ? kf_r0 + kf_chunk : kf_rows;\n"
       << "    " << T << " kf_d1[V], kf_d2[V], kf_k[V];\n"
       << "#pragma unroll\n"
       << "    for (int kf_j = 0; kf_j < V; ++kf_j) kf_d1[kf_j] = kf_d2[kf_j] = " << zero << ";\n"
       << "    if (kf_active && kf_rows > 0) {\n"
       << "        kf_row<V>(" << args << ", 0, kf_c0, kf_cols, kf_k);\n"
       << "        long long kf_r = kf_r0 + threadIdx.y;\n"
       << "        // UNROLL rows per step, their loads issued before their sums.\n"
       << "        for (; kf_r + (UNROLL - 1) * BY < kf_r1; kf_r += UNROLL * BY) {\n"
       << "            " << T << " kf_v[UNROLL][V];\n"
       << "#pragma unroll\n"
       << "            for (int kf_u = 0; kf_u < UNROLL; ++kf_u) kf_row<V>(" << args << ", kf_r + kf_u * BY, kf_c0, kf_cols, kf_v[kf_u]);\n"
       << "#pragma unroll\n"
       << "            for (int kf_u = 0; kf_u < UNROLL; ++kf_u) kf_add_row<V>(kf_v[kf_u], kf_k, kf_d1, kf_d2);\n"
       << "        }\n"
       << "        for (; kf_r < kf_r1; kf_r += BY) {\n"
       << "            " << T << " kf_v[V];\n"
       << "            kf_row<V>(" << args << ", kf_r, kf_c0, kf_cols, kf_v);\n"
       << "            kf_add_row<V>(kf_v, kf_k, kf_d1, kf_d2);\n"
       << "        }\n"
       << "    }\n"
       << "#pragma unroll\n"
       << "    for (int kf_j = 0; kf_j < V; ++kf_j) {\n"
       << "        kf_sm[0][threadIdx.y][threadIdx.x * V + kf_j] = kf_d1[kf_j];\n"
       << "        kf_sm[1][threadIdx.y][threadIdx.x * V + kf_j] = kf_d2[kf_j];\n"
       << "    }\n"
       << "    __syncthreads();\n"
       << "    if (threadIdx.y == 0 && kf_active) {\n"
       << "        for (int kf_y = 1; kf_y < BY; ++kf_y)\n"
       << "#pragma unroll\n"
       << "            for (int kf_j = 0; kf_j < V; ++kf_j) {\n"
       << "                kf_d1[kf_j] += kf_sm[0][kf_y][threadIdx.x * V + kf_j];\n"
       << "                kf_d2[kf_j] += kf_sm[1][kf_y][threadIdx.x * V + kf_j];\n"
       << "            }\n"
       << "#pragma unroll\n"
       << "        for (int kf_j = 0; kf_j < V; ++kf_j) {\n"
       << "            kf_part[static_cast<long long>(blockIdx.y) * kf_cols + kf_c0 + kf_j] = kf_d1[kf_j];\n"
       << "            kf_part[(kf_split + static_cast<long long>(blockIdx.y)) * kf_cols + kf_c0 + kf_j] = kf_d2[kf_j];\n"
       << "        }\n"
       << "    }\n"
       << "}\n\n";
    return os.str();
}

/** kf_col_moments_combine: the SPLIT partials added, the sum and the moment of each column into kf_stats. */
std::string cols_moments_combine(const std::string& T, const std::string& params, const std::string& args,
                                 const std::string& zero) {
    std::ostringstream os;
    os << "__global__ void kf_col_moments_combine(" << params << ", " << T
       << "* kf_stats, const " << T << "* kf_part, long long kf_rows, long long kf_cols, long long kf_split) {\n"
       << "    const long long kf_c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
       << "    if (kf_c >= kf_cols) return;\n"
       << "    " << T << " kf_d1 = " << zero << ", kf_d2 = " << zero << ";\n"
       << "    for (long long kf_s = 0; kf_s < kf_split; ++kf_s) {\n"
       << "        kf_d1 += kf_part[kf_s * kf_cols + kf_c];\n"
       << "        kf_d2 += kf_part[(kf_split + kf_s) * kf_cols + kf_c];\n"
       << "    }\n"
       << "    const " << T << " kf_n = static_cast<" << T << ">(kf_rows);\n"
       << "    " << T << " kf_k[1] = {" << zero << "};\n"
       << "    if (kf_rows > 0) kf_row<1>(" << args << ", 0, kf_c, kf_cols, kf_k);\n"
       << "    kf_stats[kf_c] = kf_d1 + kf_n * kf_k[0];\n"
       << "    " << T << " kf_m2 = kf_d2 - kf_d1 * kf_d1 / kf_n;\n"
       << "    kf_stats[kf_cols + kf_c] = kf_m2 > " << zero << " ? kf_m2 : " << zero << ";\n"
       << "}\n\n";
    return os.str();
}

/** The epilogue kernel and the entry: scratch, the launches (vector where columns and tensor allow), the epilogue. */
std::string cols_moments_entry(const Task& task, const Computation& c, const std::string& T,
                               const std::function<std::string(const std::string&)>& at, bool f32, const std::string& args,
                               const std::string& name, bool vector) {
    std::ostringstream os;
    os << col_epilogue_kernel(task, c, T, at, f32) << col_entry_start(task, c, T, 2)
       << "    const unsigned kf_flat = static_cast<unsigned>((kf_cols + 255) / 256);\n"
       << "    const bool kf_vec = VEC > 1 && kf_cols % VEC == 0"
       << (vector ? " && reinterpret_cast<uintptr_t>(" + name + ") % (VEC * sizeof(float)) == 0" : "") << ";\n"
       << "    if (kf_vec) {\n"
       << "        const dim3 kf_grid(static_cast<unsigned>((kf_cols + BX * VEC - 1) / (BX * VEC)), static_cast<unsigned>(kf_split));\n"
       << "        kf_col_moments<VEC><<<kf_grid, dim3(BX, BY), 0, stream>>>(" << args << ", kf_part, kf_rows, kf_cols, kf_chunk, kf_split);\n"
       << "    } else {\n"
       << "        const dim3 kf_grid(static_cast<unsigned>((kf_cols + BX - 1) / BX), static_cast<unsigned>(kf_split));\n"
       << "        kf_col_moments<1><<<kf_grid, dim3(BX, BY), 0, stream>>>(" << args << ", kf_part, kf_rows, kf_cols, kf_chunk, kf_split);\n"
       << "    }\n"
       << "    kf_col_moments_combine<<<kf_flat, 256, 0, stream>>>(" << entry_args(task) << ", kf_stats, kf_part, kf_rows, kf_cols, kf_split);\n"
       << "    kf_col_epilogue<<<kf_flat, 256, 0, stream>>>(" << entry_args(task) << ", kf_stats, kf_cols);\n"
       << "    cudaFreeAsync(kf_scratch, stream);\n"
       << launch_check() << "}\n";
    return os.str();
}

/**
 * A column's sum and centred second moment in one pass (is_centred_moment): each thread sums
 * d = e - k and d * d over its rows, k being e at the column's first row, so that every
 * element is read once and the sums stay small; a second kernel adds the SPLIT partials and
 * gives s = sum(d) + rows * k and the moment sum(d * d) - sum(d)^2 / rows. Where e is an fp32
 * tensor read as it is, a thread takes VEC adjacent columns in vector loads (when the columns
 * divide by VEC and the tensor is aligned; one column per thread otherwise).
 */
TemplateKernel cuda_cols_moments(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto at = element_resolver(task, c, T, "kf_r * kf_cols + kf_c", "kf_c", "kf_r");
    const std::string e = c.stats[0].map.to_c(at, f32, true);
    const std::string params = entry_params(task, Backend::Cuda), args = entry_args(task);
    const std::string zero = identity("sum", f32);
    const std::string name = c.stats[0].map.text();
    const bool vector = f32 && c.stats[0].map.is_name() && c.inputs.count(name) && c.inputs.at(name) == Indexing::Full;
    const std::string source = cols_moments_prelude(c, vector) + cols_moments_row_functions(T, params, e, name, vector) +
                               cols_moments_kernel(T, params, args, zero) + cols_moments_combine(T, params, args, zero) +
                               cols_moments_entry(task, c, T, at, f32, args, name, vector);
    return {"cols-moments", "template/cols-moments",
            "column sum and centred second moment in one pass over SPLIT slices of the rows, BX threads x BY rows per block, "
            "UNROLL rows per step, VEC columns per thread in vector loads where e is a tensor read as it is "
            "(tunables: BX, BY, SPLIT, UNROLL, VEC)",
            source};
}

/** What the column scans share: the stat, its identity, the tensors its map reads at the element and the resolvers. */
struct ColScan {
    std::string T, id;
    bool f32 = true;
    const ComputationStat* st = nullptr;
    std::function<std::string(const std::string&)> vec, scalar;  ///< a tensor from the row's vector loads, or read in place
    std::vector<std::string> full;                               ///< the tensors the stat's map reads at the element

    /** Row kf_r of the VEC columns at kf_c mapped into kf_x[kf_u]: vector loads where `fast`, else each column where `inside`. */
    std::string load_row(const std::string& fast, const std::string& inside) const {
        std::string out = "            if (" + fast + ") {\n";
        for (const auto& n : full) out += "                const KfVec<V> kf_v_" + n + " = kf_load<V>(" + n + " + kf_r * kf_cols + kf_c);\n";
        return out + "#pragma unroll\n"
                     "                for (int kf_k = 0; kf_k < V; ++kf_k) kf_x[kf_u][kf_k] = " + st->map.to_c(vec, f32, true) + ";\n"
                     "            } else {\n"
                     "#pragma unroll\n"
                     "                for (int kf_k = 0; kf_k < V; ++kf_k)\n"
                     "                    kf_x[kf_u][kf_k] = " + inside + " ? " + st->map.to_c(scalar, f32, true) + " : " + id + ";\n"
                     "            }\n";
    }
    /** Row kf_r's outputs, kf_s_<stat> per column set by `sum` (lines), stored in one vector store where the VEC columns are whole. */
    std::string store_row(const Computation& c, const std::string& sum) const {
        return "            KfVec<V> kf_o;\n"
               "#pragma unroll\n"
               "            for (int kf_k = 0; kf_k < V; ++kf_k) {\n" + sum +
               "                kf_o.v[kf_k] = kf_c + kf_k < kf_cols ? static_cast<" + T + ">(" + c.map.to_c(scalar, f32, true) + ") : " + T +
               "(0);\n"
               "            }\n"
               "            if (kf_full) {\n"
               "                kf_store<V>(" + c.output + " + kf_r * kf_cols + kf_c, kf_o);\n"
               "            } else {\n"
               "                for (int kf_k = 0; kf_k < V && kf_c + kf_k < kf_cols; ++kf_k) " + c.output +
               "[kf_r * kf_cols + kf_c + kf_k] = kf_o.v[kf_k];\n"
               "            }\n";
    }
};

ColScan col_scan_parts(const Task& task, const Computation& c) {
    ColScan s;
    s.T = element_type(task, c);
    s.f32 = is_fp32(task, c);
    s.st = &c.stats.front();
    s.id = identity(s.st->combine, s.f32);
    s.vec = resolver(task, c, s.T, [&c](const std::string& n) -> std::string {
        switch (c.inputs.at(n)) {
            case Indexing::Full: return "kf_v_" + n + ".v[kf_k]";
            case Indexing::PerColumn: return n + "[kf_c + kf_k]";
            case Indexing::PerRow: return n + "[kf_r]";
            default: return n + "[kf_r * kf_cols + kf_c + kf_k]";
        }
    });
    s.scalar = element_resolver(task, c, s.T, "kf_r * kf_cols + kf_c + kf_k", "kf_c + kf_k", "kf_r");
    for (const auto& n : tensors_in(s.st->map, c))
        if (c.inputs.at(n) == Indexing::Full) s.full.push_back(n);
    return s;
}

/** A column scan's entry point: vector accesses where the rows start on VEC boundaries of aligned tensors, `kernel` over the columns. */
std::string col_scan_entry(const Task& task, const Computation& c, const ColScan& s, const std::string& kernel, const std::string& block) {
    std::string out = entry_definition(task, Backend::Cuda) + " {\n" + layout_consts(c) +
                      "    if (kf_rows <= 0 || kf_cols <= 0) return;\n"
                      "    // Vector loads and stores where every row starts on a VEC-element boundary of aligned tensors.\n"
                      "    bool kf_vec = kf_cols % VEC == 0 && kf_aligned(" + c.output + ", VEC * sizeof(" + s.T + "));\n";
    for (const auto& n : s.full) out += "    kf_vec = kf_vec && kf_aligned(" + n + ", VEC * sizeof(*" + n + "));\n";
    return out + "    const long long kf_v = kf_vec ? VEC : 1;\n"
                 "    const unsigned kf_grid = static_cast<unsigned>((kf_cols + BX * kf_v - 1) / (BX * kf_v));\n"
                 "    if (kf_vec)\n"
                 "        " + kernel + "<VEC><<<kf_grid, " + block + ", 0, stream>>>(" + entry_args(task) + ", kf_rows, kf_cols);\n"
                 "    else\n"
                 "        " + kernel + "<1><<<kf_grid, " + block + ", 0, stream>>>(" + entry_args(task) + ", kf_rows, kf_cols);\n" +
                 launch_check() + "}\n";
}

/**
 * Column scan: a thread per VEC adjacent columns (BX threads per block along the row) walks
 * down the rows with the running combine in registers; UNROLL rows are loaded (vector loads
 * of the VEC columns where the rows start on VEC-element boundaries of aligned tensors)
 * before any is combined, so that their loads are in flight together, and each row's VEC
 * outputs go out in one vector store. The parallelism is the columns': a layout of few
 * columns leaves most of the device idle.
 */
TemplateKernel cuda_col_scan(const Task& task, const Computation& c) {
    const ColScan p = col_scan_parts(task, c);
    const std::string& T = p.T;
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Column scan (CUDA): a thread per VEC columns walks down the rows, UNROLL rows of loads ahead.", c)
       << "\n#define BX 128     // @kf tunable values(32, 64, 128, 256)\n"
       << "#define VEC 1      // @kf tunable values(1, 2" << (p.f32 ? ", 4" : "") << ")\n"
       << "#define UNROLL 16  // @kf tunable values(4, 8, 16, 32)\n\n"
       << vector_helpers(T)
       << "template <int V>\n__global__ void __launch_bounds__(BX) kf_col_scan_kernel(" << restrict_params(entry_params(task, Backend::Cuda))
       << ", long long kf_rows, long long kf_cols) {\n"
       << "    const long long kf_c = (static_cast<long long>(blockIdx.x) * BX + threadIdx.x) * V;\n"
       << "    if (kf_c >= kf_cols) return;\n"
       << "    const bool kf_full = kf_c + V <= kf_cols;  // else the last columns one by one\n"
       << "    " << T << " kf_run[V];\n"
       << "#pragma unroll\n"
       << "    for (int kf_k = 0; kf_k < V; ++kf_k) kf_run[kf_k] = " << p.id << ";\n"
       << "    for (long long kf_r0 = 0; kf_r0 < kf_rows; kf_r0 += UNROLL) {\n"
       << "        " << T << " kf_x[UNROLL][V];\n"
       << "#pragma unroll\n"
       << "        for (int kf_u = 0; kf_u < UNROLL; ++kf_u) {\n"
       << "            const long long kf_r = kf_r0 + kf_u;\n"
       << "            if (kf_r >= kf_rows) break;\n"
       << p.load_row("kf_full", "kf_c + kf_k < kf_cols")
       << "        }\n"
       << "#pragma unroll\n"
       << "        for (int kf_u = 0; kf_u < UNROLL; ++kf_u) {\n"
       << "            const long long kf_r = kf_r0 + kf_u;\n"
       << "            if (kf_r >= kf_rows) break;\n"
       << p.store_row(c, "                kf_run[kf_k] = " + combine_expr(p.st->combine, "kf_run[kf_k]", "kf_x[kf_u][kf_k]") + ";\n"
                         "                const " + T + " kf_s_" + p.st->name + " = kf_run[kf_k];\n")
       << "        }\n"
       << "    }\n"
       << "}\n\n"
       << col_scan_entry(task, c, p, "kf_col_scan_kernel", "BX");
    return {"col-scan", "template/col-scan",
            "column scan, a thread per VEC columns walking down the rows with UNROLL rows of loads ahead (tunables: BX, VEC, UNROLL)",
            os.str()};
}

/**
 * Column scan by blocks of rows: a block of BX x BY threads takes BX * VEC adjacent columns
 * and walks down the rows in chunks of BY * ITEMS rows. In a chunk, each thread loads ITEMS
 * consecutive rows of its VEC columns into registers (all in flight together) and scans them
 * there; the BY threads of a column then exchange their totals through shared memory (two
 * buffers, one barrier per chunk), each adding the totals of the threads above it and the
 * carry of the chunks before. Each element is read and written once, and the parallelism is
 * the columns' times BY, so a layout of few columns still keeps many warps busy.
 */
TemplateKernel cuda_col_scan_block(const Task& task, const Computation& c) {
    const ColScan p = col_scan_parts(task, c);
    const std::string& T = p.T;
    auto combine = [&](const std::string& a, const std::string& b) { return combine_expr(p.st->combine, a, b); };
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <math.h>\n\n"
       << header_comment("Column scan by blocks of rows (CUDA): BY threads per column scan ITEMS rows each in registers, "
                         "then add the totals of the threads above them through shared memory.",
                         c)
       << "\n#define BX 32     // @kf tunable values(32, 64, 128)\n"
       << "#define BY 16     // @kf tunable values(4, 8, 16, 32)\n"
       << "#define ITEMS 8   // @kf tunable values(2, 4, 8, 16)\n"
       << "#define VEC " << (p.f32 ? 4 : 2) << "     // @kf tunable values(1, 2" << (p.f32 ? ", 4" : "") << ")\n"
       << "// @kf constraint BX * BY <= 1024\n"
       << "// Registers: ITEMS x VEC values per thread, fewer in larger blocks.\n"
       << "// @kf constraint BX * BY * ITEMS * VEC <= 16384\n\n"
       << vector_helpers(T)
       << "template <int V>\n__global__ void __launch_bounds__(BX * BY) kf_col_scan_block_kernel("
       << restrict_params(entry_params(task, Backend::Cuda)) << ", long long kf_rows, long long kf_cols) {\n"
       << "    __shared__ " << T << " kf_tot[2][BY][BX * V];\n"
       << "    const int kf_tx = threadIdx.x, kf_ty = threadIdx.y;\n"
       << "    const long long kf_c = (static_cast<long long>(blockIdx.x) * BX + kf_tx) * V;\n"
       << "    // No early return: every thread reaches the barriers; the columns past the end only carry identities.\n"
       << "    const bool kf_full = kf_c + V <= kf_cols;\n"
       << "    " << T << " kf_carry[V];\n"
       << "#pragma unroll\n"
       << "    for (int kf_k = 0; kf_k < V; ++kf_k) kf_carry[kf_k] = " << p.id << ";\n"
       << "    int kf_buf = 0;\n"
       << "    for (long long kf_r0 = 0; kf_r0 < kf_rows; kf_r0 += static_cast<long long>(BY) * ITEMS, kf_buf ^= 1) {\n"
       << "        const long long kf_rt = kf_r0 + static_cast<long long>(kf_ty) * ITEMS;  // this thread's first row\n"
       << "        " << T << " kf_x[ITEMS][V];\n"
       << "#pragma unroll\n"
       << "        for (int kf_u = 0; kf_u < ITEMS; ++kf_u) {\n"
       << "            const long long kf_r = kf_rt + kf_u;\n"
       << p.load_row("kf_r < kf_rows && kf_full", "kf_r < kf_rows && kf_c + kf_k < kf_cols")
       << "        }\n"
       << "        // The thread's rows scanned in registers; its total goes to shared memory.\n"
       << "#pragma unroll\n"
       << "        for (int kf_u = 1; kf_u < ITEMS; ++kf_u)\n"
       << "#pragma unroll\n"
       << "            for (int kf_k = 0; kf_k < V; ++kf_k) kf_x[kf_u][kf_k] = " << combine("kf_x[kf_u - 1][kf_k]", "kf_x[kf_u][kf_k]") << ";\n"
       << "#pragma unroll\n"
       << "        for (int kf_k = 0; kf_k < V; ++kf_k) kf_tot[kf_buf][kf_ty][kf_tx * V + kf_k] = kf_x[ITEMS - 1][kf_k];\n"
       << "        __syncthreads();\n"
       << "        // What comes before this thread's rows: the carry, then the totals of the threads above; the carry moves past the chunk.\n"
       << "        " << T << " kf_pre[V];\n"
       << "#pragma unroll\n"
       << "        for (int kf_k = 0; kf_k < V; ++kf_k) kf_pre[kf_k] = kf_carry[kf_k];\n"
       << "#pragma unroll\n"
       << "        for (int kf_y = 0; kf_y < BY; ++kf_y)\n"
       << "#pragma unroll\n"
       << "            for (int kf_k = 0; kf_k < V; ++kf_k) {\n"
       << "                const " << T << " kf_t = kf_tot[kf_buf][kf_y][kf_tx * V + kf_k];\n"
       << "                if (kf_y < kf_ty) kf_pre[kf_k] = " << combine("kf_pre[kf_k]", "kf_t") << ";\n"
       << "                kf_carry[kf_k] = " << combine("kf_carry[kf_k]", "kf_t") << ";\n"
       << "            }\n"
       << "#pragma unroll\n"
       << "        for (int kf_u = 0; kf_u < ITEMS; ++kf_u) {\n"
       << "            const long long kf_r = kf_rt + kf_u;\n"
       << "            if (kf_r >= kf_rows || kf_c >= kf_cols) break;\n"
       << p.store_row(c, "                const " + T + " kf_s_" + p.st->name + " = " + combine("kf_pre[kf_k]", "kf_x[kf_u][kf_k]") + ";\n")
       << "        }\n"
       << "    }\n"
       << "}\n\n"
       << col_scan_entry(task, c, p, "kf_col_scan_block_kernel", "dim3(BX, BY)");
    return {"col-scan-block", "template/col-scan-block",
            "column scan by chunks of BY x ITEMS rows: each thread scans ITEMS rows of VEC columns in registers, the BY threads "
            "of a column add each other's totals through shared memory (tunables: BX, BY, ITEMS, VEC)",
            os.str()};
}

}  // namespace

std::vector<TemplateKernel> cuda_templates(const Task& task, const Computation& c, const std::string& n_expr) {
    if (c.op == "histogram") return {cuda_histogram(task, c, n_expr)};
    if (c.op == "stencil") {
        // A stencil along rows only (a 1-D convolution) also gets the row-vector variant,
        // with the window of rows too where its radius is at most 4 (the halo then comes from the neighbouring lanes).
        if (c.radius_rows == 0 && c.radius_cols <= 4)
            return {cuda_stencil(task, c), cuda_stencil_rows(task, c), cuda_stencil_window(task, c)};
        if (c.radius_rows == 0 && c.radius_cols <= 8) return {cuda_stencil(task, c), cuda_stencil_rows(task, c)};
        // A 2-D one of small radii gets the window of rows.
        if (c.radius_rows <= 4 && c.radius_cols <= 4) return {cuda_stencil(task, c), cuda_stencil_window(task, c)};
        return {cuda_stencil(task, c)};
    }
    if (c.op == "col_reduce") {
        if (is_centred_moment(c)) return {cuda_cols_moments(task, c), cuda_cols(task, c)};
        return {cuda_cols(task, c)};
    }
    if (c.rows.empty()) return {cuda_map(task, c, n_expr)};
    if (c.op == "transpose") {
        // Vector accesses where the map reads only tensors at the element (tensors_in lists them).
        bool full = true;
        for (const auto& n : tensors_in(c.map, c)) full = full && c.inputs.at(n) == Indexing::Full;
        if (full && !tensors_in(c.map, c).empty()) return {cuda_transpose(task, c), cuda_transpose_vec(task, c)};
        return {cuda_transpose(task, c)};
    }
    if (c.op == "gemm") return {cuda_gemm(task, c)};
    if (c.op == "row_scan") return {cuda_scan(task, c)};
    if (c.op == "col_scan") return {cuda_col_scan_block(task, c), cuda_col_scan(task, c)};
    // Computations that read the row in more than one pass also get a block per row with the row in registers.
    if (c.stats.size() + (c.per_row_output() ? 0 : 1) > 1)
        return {cuda_rows(task, c, 32, "warp", 0), cuda_rows(task, c, 256, "block", 0), cuda_rows(task, c, 512, "cached", 4)};
    return {cuda_rows(task, c, 32, "warp", 0), cuda_rows(task, c, 256, "block", 0)};
}

}  // namespace kf::templates
