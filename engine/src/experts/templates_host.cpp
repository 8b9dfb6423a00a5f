// Host (C++ with OpenMP) instances of the op-class templates.
#include <sstream>

#include "template_parts.h"
#include "templates_backend.h"

namespace kf::templates {

namespace {

/** Flat elementwise map: OpenMP over CHUNK-element chunks, each an `omp simd` loop. */
TemplateKernel host_map(const Task& task, const Computation& c, const std::string& n_expr) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto r = resolver(task, c, T, [](const std::string& n) { return n + "[kf_i]"; });
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n\n"
       << header_comment("Elementwise map (host): OpenMP threads over chunks of CHUNK elements, a SIMD loop in each.", c)
       << "\n#define CHUNK 16384  // @kf tunable values(1024, 4096, 16384, 65536, 262144)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << "    const long long kf_n = " << n_expr << ";\n"
       << "#pragma omp parallel for schedule(static)\n"
       << "    for (long long kf_c0 = 0; kf_c0 < kf_n; kf_c0 += CHUNK) {\n"
       << "        const long long kf_c1 = kf_c0 + CHUNK < kf_n ? kf_c0 + CHUNK : kf_n;\n"
       << "#pragma omp simd\n"
       << "        for (long long kf_i = kf_c0; kf_i < kf_c1; ++kf_i)\n"
       << "            " << c.output << "[kf_i] = static_cast<" << T << ">(" << c.map.to_c(r, f32, false) << ");\n"
       << "    }\n}\n";
    return {"map-omp", "template/map-omp",
            "elementwise map, OpenMP over CHUNK-element chunks with a SIMD inner loop (tunable: CHUNK)", os.str()};
}

/**
 * Rows: OpenMP over rows; each reduction keeps LANES independent accumulators so that the
 * loop vectorises without reassociating one accumulator; then the per-element map or the
 * per-row epilogue.
 */
TemplateKernel host_rows(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto at = [&](const std::string& idx) { return element_resolver(task, c, T, "kf_base + " + idx, idx, ""); };
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n\n"
       << header_comment("Rows (host): OpenMP over rows; each reduction in LANES independent accumulators (vectorised).", c)
       << "\n#define LANES 8  // @kf tunable values(1, 2, 4, 8, 16, 32)\n\n";
    os << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "    (void)kf_cols;\n"
       << "#pragma omp parallel for schedule(static)\n"
       << "    for (long long kf_r = 0; kf_r < kf_rows; ++kf_r) {\n"
       << "        const long long kf_base = kf_r * kf_cols;\n"
       << "        (void)kf_base;\n";
    for (const auto& n : per_row_tensors(c))
        os << "        const " << T << " kf_row_" << n << " = static_cast<" << T << ">(" << n << "[kf_r]);\n";
    for (const auto& s : c.stats) {
        const std::string id = identity(s.combine, f32);
        os << "        " << T << " kf_s_" << s.name << ";\n"
           << "        {  // " << s.name << " = " << s.combine << " over the row of " << s.map.text() << "\n"
           << "            " << T << " kf_acc[LANES];\n"
           << "            for (int kf_l = 0; kf_l < LANES; ++kf_l) kf_acc[kf_l] = " << id << ";\n"
           << "            long long kf_c = 0;\n"
           << "            for (; kf_c + LANES <= kf_cols; kf_c += LANES) {\n"
           << "#pragma omp simd\n"
           << "                for (int kf_l = 0; kf_l < LANES; ++kf_l) {\n"
           << "                    const " << T << " kf_v = " << s.map.to_c(at("(kf_c + kf_l)"), f32, false) << ";\n"
           << "                    kf_acc[kf_l] = " << combine_expr(s.combine, "kf_acc[kf_l]", "kf_v") << ";\n"
           << "                }\n"
           << "            }\n"
           << "            " << T << " kf_t = " << id << ";\n"
           << "            for (; kf_c < kf_cols; ++kf_c) {\n"
           << "                const " << T << " kf_v = " << s.map.to_c(at("kf_c"), f32, false) << ";\n"
           << "                kf_t = " << combine_expr(s.combine, "kf_t", "kf_v") << ";\n"
           << "            }\n"
           << "            for (int kf_l = 0; kf_l < LANES; ++kf_l) kf_t = " << combine_expr(s.combine, "kf_t", "kf_acc[kf_l]")
           << ";\n"
           << "            kf_s_" << s.name << " = kf_t;\n"
           << "        }\n";
    }
    if (c.per_row_output()) {
        os << "        " << c.output << "[kf_r] = static_cast<" << T << ">(" << c.epilogue.to_c(at("0"), f32, false) << ");\n";
    } else {
        os << "#pragma omp simd\n"
           << "        for (long long kf_c = 0; kf_c < kf_cols; ++kf_c)\n"
           << "            " << c.output << "[kf_base + kf_c] = static_cast<" << T << ">(" << c.map.to_c(at("kf_c"), f32, false)
           << ");\n";
    }
    os << "    }\n}\n";
    return {"rows-omp", "template/rows-omp",
            "rows over OpenMP threads, reductions in LANES accumulators that vectorise (tunable: LANES)", os.str()};
}

/**
 * Transpose in TILE x TILE blocks over OpenMP threads: within a block the input's rows and
 * the output's rows are both short runs that stay in cache.
 */
TemplateKernel host_transpose(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto at = resolver(task, c, T, [](const std::string& n) { return n + "[kf_r * kf_cols + kf_c]"; });
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n\n"
       << header_comment("Transpose (host): TILE x TILE blocks over OpenMP threads.", c)
       << "\n#define TILE 32  // @kf tunable values(8, 16, 32, 64, 128)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "#pragma omp parallel for collapse(2) schedule(static)\n"
       << "    for (long long kf_cb = 0; kf_cb < kf_cols; kf_cb += TILE)\n"
       << "        for (long long kf_rb = 0; kf_rb < kf_rows; kf_rb += TILE) {\n"
       << "            const long long kf_c1 = kf_cb + TILE < kf_cols ? kf_cb + TILE : kf_cols;\n"
       << "            const long long kf_r1 = kf_rb + TILE < kf_rows ? kf_rb + TILE : kf_rows;\n"
       << "            for (long long kf_c = kf_cb; kf_c < kf_c1; ++kf_c)\n"
       << "                for (long long kf_r = kf_rb; kf_r < kf_r1; ++kf_r)\n"
       << "                    " << c.output << "[kf_c * kf_rows + kf_r] = static_cast<" << T << ">(" << c.map.to_c(at, f32, false)
       << ");\n"
       << "        }\n}\n";
    return {"transpose-blocked", "template/transpose-blocked",
            "transpose in TILE x TILE blocks over OpenMP threads (tunable: TILE)", os.str()};
}

/** A running combine's type: an fp32 sum or product is carried in double, so that long rows or columns keep fp32 accuracy. */
std::string scan_carry_type(const ComputationStat& st, const std::string& T, bool f32) {
    return f32 && (st.combine == "sum" || st.combine == "prod") ? "double" : T;
}

/** Row scan: OpenMP over rows, a running combine along each row (in double for fp32 sums). */
TemplateKernel host_scan(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const ComputationStat& st = c.stats.front();
    const std::string A = scan_carry_type(st, T, f32);
    auto at = element_resolver(task, c, T, "kf_base + kf_c", "kf_c", "kf_r");
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n\n"
       << header_comment("Row scan (host): OpenMP over rows, a running combine along each row.", c)
       << "\n#define CHUNK 16  // @kf tunable values(1, 4, 16, 64)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "#pragma omp parallel for schedule(static, CHUNK)\n"
       << "    for (long long kf_r = 0; kf_r < kf_rows; ++kf_r) {\n"
       << "        const long long kf_base = kf_r * kf_cols;\n"
       << "        (void)kf_base;\n"
       << "        " << A << " kf_run = " << identity(st.combine, A == "float") << ";\n"
       << "        for (long long kf_c = 0; kf_c < kf_cols; ++kf_c) {\n"
       << "            const " << A << " kf_x = " << st.map.to_c(at, f32, false) << ";\n"
       << "            kf_run = " << combine_expr(st.combine, "kf_run", "kf_x") << ";\n"
       << "            const " << T << " kf_s_" << st.name << " = static_cast<" << T << ">(kf_run);\n"
       << "            " << c.output << "[kf_base + kf_c] = static_cast<" << T << ">(" << c.map.to_c(at, f32, false) << ");\n"
       << "        }\n"
       << "    }\n"
       << "}\n";
    return {"scan-omp", "template/scan-omp", "row scan, OpenMP over rows in chunks of CHUNK rows (tunable: CHUNK)", os.str()};
}

/**
 * GEMM with an epilogue: OpenMP over blocks of BLOCK_M rows; each row accumulates into a
 * row buffer, slice by slice of BLOCK_K, the right factor's rows streamed through a SIMD
 * loop (the sum over inner stays in order); then the epilogue per element.
 */
TemplateKernel host_gemm(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const ComputationStat& st = c.stats.front();
    std::string left;
    for (const auto& [n, ix] : c.inputs)
        if (ix == Indexing::Left) left = n;
    auto product = resolver(task, c, T, [&c](const std::string& n) -> std::string {
        return c.inputs.at(n) == Indexing::Left ? "kf_a" : n + "[kf_k * kf_cols + kf_c]";
    });
    auto epilogue = element_resolver(task, c, T, "kf_r * kf_cols + kf_c", "kf_c", "kf_r");
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n#include <vector>\n\n"
       << header_comment("GEMM with an epilogue (host): OpenMP over BLOCK_M-row blocks, BLOCK_K-deep slices, SIMD over columns.", c)
       << "\n#define BLOCK_M 8   // @kf tunable values(1, 2, 4, 8, 16, 32)\n"
       << "#define BLOCK_K 64  // @kf tunable values(16, 32, 64, 128, 256, 512)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "#pragma omp parallel\n"
       << "    {\n"
       << "        std::vector<" << T << "> kf_buf(static_cast<size_t>(BLOCK_M * kf_cols));\n"
       << "#pragma omp for schedule(static)\n"
       << "        for (long long kf_rb = 0; kf_rb < kf_rows; kf_rb += BLOCK_M) {\n"
       << "            const long long kf_re = kf_rb + BLOCK_M < kf_rows ? kf_rb + BLOCK_M : kf_rows;\n"
       << "            for (auto& kf_v : kf_buf) kf_v = 0;\n"
       << "            for (long long kf_kb = 0; kf_kb < kf_inner; kf_kb += BLOCK_K) {\n"
       << "                const long long kf_ke = kf_kb + BLOCK_K < kf_inner ? kf_kb + BLOCK_K : kf_inner;\n"
       << "                for (long long kf_r = kf_rb; kf_r < kf_re; ++kf_r) {\n"
       << "                    " << T << "* kf_row = kf_buf.data() + (kf_r - kf_rb) * kf_cols;\n"
       << "                    for (long long kf_k = kf_kb; kf_k < kf_ke; ++kf_k) {\n"
       << "                        const " << T << " kf_a = " << left << "[kf_r * kf_inner + kf_k];\n"
       << "#pragma omp simd\n"
       << "                        for (long long kf_c = 0; kf_c < kf_cols; ++kf_c) kf_row[kf_c] += "
       << st.map.to_c(product, f32, false) << ";\n"
       << "                    }\n"
       << "                }\n"
       << "            }\n"
       << "            for (long long kf_r = kf_rb; kf_r < kf_re; ++kf_r)\n"
       << "                for (long long kf_c = 0; kf_c < kf_cols; ++kf_c) {\n"
       << "                    const " << T << " kf_s_" << st.name << " = kf_buf[(kf_r - kf_rb) * kf_cols + kf_c];\n"
       << "                    " << c.output << "[kf_r * kf_cols + kf_c] = static_cast<" << T << ">("
       << c.map.to_c(epilogue, f32, false) << ");\n"
       << "                }\n"
       << "        }\n"
       << "    }\n"
       << "}\n";
    return {"gemm-blocked", "template/gemm-blocked",
            "GEMM with its epilogue: row blocks over OpenMP, inner slices, SIMD over columns (tunables: BLOCK_M, BLOCK_K)", os.str()};
}

/**
 * Stencil: OpenMP over rows in chunks of CHUNK, for layouts of PAR_MIN cells or more (a
 * smaller one on the calling thread alone: waking a team costs more than it saves there); the
 * interior of each row in a SIMD loop over its columns, the cells within the radius of an edge
 * (per dimension) from the border expression or from the map with its neighbours padded.
 */
TemplateKernel host_stencil(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto cell = element_resolver(task, c, T, "kf_base + kf_c", "kf_c", "kf_r");
    const std::string RR = std::to_string(c.radius_rows), RC = std::to_string(c.radius_cols);
    const std::string edge =
        c.output + "[kf_base + kf_c] = static_cast<" + T + ">(" + stencil_edge(c, cell, T, "kf_base + kf_c", f32, false) + ");";
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n\n"
       << header_comment("Stencil (host): OpenMP over rows in chunks of CHUNK from PAR_MIN cells, a SIMD loop over each row's interior.", c)
       << "\n#define CHUNK 8  // @kf tunable values(1, 2, 8, 32, 128)\n"
       << "#define PAR_MIN 1048576  // @kf tunable values(0, 65536, 1048576, 16777216)\n\n"
       << stencil_helpers(c, false) << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "    const long long kf_lo = " << RC << " < kf_cols ? " << RC << " : kf_cols;  // the interior columns: [kf_lo, kf_hi)\n"
       << "    const long long kf_hi = kf_cols - " << RC << " > kf_lo ? kf_cols - " << RC << " : kf_lo;\n"
       << "#pragma omp parallel for schedule(static, CHUNK) if (kf_rows * kf_cols >= PAR_MIN)\n"
       << "    for (long long kf_r = 0; kf_r < kf_rows; ++kf_r) {\n"
       << "        const long long kf_base = kf_r * kf_cols;\n"
       << "        if (kf_r < " << RR << " || kf_r >= kf_rows - " << RR << ") {\n"
       << "            for (long long kf_c = 0; kf_c < kf_cols; ++kf_c) " << edge << "\n"
       << "            continue;\n"
       << "        }\n"
       << "        for (long long kf_c = 0; kf_c < kf_lo; ++kf_c) " << edge << "\n"
       << "#pragma omp simd\n"
       << "        for (long long kf_c = kf_lo; kf_c < kf_hi; ++kf_c)\n"
       << "            " << c.output << "[kf_base + kf_c] = static_cast<" << T << ">("
       << c.map.to_c(neighbour_resolver(T, cell, "kf_base + kf_c", ""), f32, false) << ");\n"
       << "        for (long long kf_c = kf_hi; kf_c < kf_cols; ++kf_c) " << edge << "\n"
       << "    }\n"
       << "}\n";
    return {"stencil-omp", "template/stencil-omp",
            "stencil, OpenMP over rows in chunks of CHUNK from PAR_MIN cells, SIMD over each row's interior (tunables: CHUNK, PAR_MIN)", os.str()};
}

/**
 * Histogram: each OpenMP thread counts its share of the input into COPIES private
 * histograms (consecutive elements go to different copies, so that a run of one value does
 * not wait on its own count), then adds them to the output in a critical section.
 */
TemplateKernel host_histogram(const Task& task, const Computation& c, const std::string& n_expr) {
    std::string out_type = "int32_t";
    for (const auto& t : task.tensors)
        if (t.name == c.output && t.dtype == DType::I64) out_type = "int64_t";
    auto bin = resolver(task, c, "double", [](const std::string& n) { return n + "[kf_i + kf_k]"; });
    auto bin_scalar = resolver(task, c, "double", [](const std::string& n) { return n + "[kf_i]"; });
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n#include <vector>\n\n"
       << header_comment("Histogram (host): COPIES private histograms per OpenMP thread, added to the output at the end.", c)
       << "\n#define COPIES 4  // @kf tunable values(1, 2, 4, 8)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << "    const long long kf_n = " << n_expr << ";\n"
       << "    const long long kf_bins = " << size_expr(c.bins) << ";\n"
       << "    for (long long kf_b = 0; kf_b < kf_bins; ++kf_b) " << c.output << "[kf_b] = 0;\n"
       << "#pragma omp parallel\n"
       << "    {\n"
       << "        std::vector<long long> kf_h(static_cast<size_t>(COPIES * kf_bins), 0);\n"
       << "        auto kf_count = [&](int kf_copy, long long kf_bin) {\n"
       << "            if (kf_bin >= 0 && kf_bin < kf_bins) ++kf_h[static_cast<size_t>(kf_copy * kf_bins + kf_bin)];\n"
       << "        };\n"
       << "        const long long kf_whole = kf_n / COPIES * COPIES;\n"
       << "#pragma omp for schedule(static)\n"
       << "        for (long long kf_i = 0; kf_i < kf_whole; kf_i += COPIES)\n"
       << "            for (int kf_k = 0; kf_k < COPIES; ++kf_k) kf_count(kf_k, static_cast<long long>(" << c.map.to_c(bin, false, false)
       << "));\n"
       << "#pragma omp single\n"
       << "        for (long long kf_i = kf_whole; kf_i < kf_n; ++kf_i) kf_count(0, static_cast<long long>("
       << c.map.to_c(bin_scalar, false, false) << "));\n"
       << "#pragma omp critical\n"
       << "        for (long long kf_b = 0; kf_b < kf_bins; ++kf_b) {\n"
       << "            long long kf_t = 0;\n"
       << "            for (int kf_k = 0; kf_k < COPIES; ++kf_k) kf_t += kf_h[static_cast<size_t>(kf_k * kf_bins + kf_b)];\n"
       << "            " << c.output << "[kf_b] = static_cast<" << out_type << ">(" << c.output << "[kf_b] + kf_t);\n"
       << "        }\n"
       << "    }\n"
       << "}\n";
    return {"histogram-private", "template/histogram-private",
            "histogram, COPIES private histograms per OpenMP thread (tunable: COPIES)", os.str()};
}

/**
 * Column reduction: OpenMP over blocks of CB columns; each stat accumulates the block's
 * columns row by row (a SIMD loop over the row's contiguous segment, each column's sum in
 * row order), then the epilogue per column.
 */
TemplateKernel host_cols(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    auto at = element_resolver(task, c, T, "kf_r * kf_cols + kf_c", "kf_c", "kf_r");
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n#include <vector>\n\n"
       << header_comment("Column reduction (host): OpenMP over blocks of CB columns, each stat row by row in a SIMD loop.", c)
       << "\n#define CB 256  // @kf tunable values(16, 64, 256, 1024, 4096)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "#pragma omp parallel\n"
       << "    {\n"
       << "        std::vector<" << T << "> kf_st(" << c.stats.size() << " * CB);\n"
       << "#pragma omp for schedule(static)\n"
       << "        for (long long kf_cb = 0; kf_cb < kf_cols; kf_cb += CB) {\n"
       << "            const long long kf_n = kf_cb + CB < kf_cols ? CB : kf_cols - kf_cb;\n";
    auto earlier = [&](std::size_t upto, const std::string& indent) {
        std::string out;
        for (std::size_t k = 0; k < upto; ++k)
            out += indent + "const " + T + " kf_s_" + c.stats[k].name + " = kf_st[" + std::to_string(k) + " * CB + kf_j];\n" +
                   indent + "(void)kf_s_" + c.stats[k].name + ";\n";
        return out;
    };
    for (std::size_t k = 0; k < c.stats.size(); ++k) {
        const ComputationStat& st = c.stats[k];
        os << "            {  // " << st.name << " = " << st.combine << " over the column of " << st.map.text() << "\n"
           << "                " << T << "* kf_acc = kf_st.data() + " << k << " * CB;\n"
           << "                for (long long kf_j = 0; kf_j < kf_n; ++kf_j) kf_acc[kf_j] = " << identity(st.combine, f32) << ";\n"
           << "                for (long long kf_r = 0; kf_r < kf_rows; ++kf_r) {\n"
           << "#pragma omp simd\n"
           << "                    for (long long kf_j = 0; kf_j < kf_n; ++kf_j) {\n"
           << "                        const long long kf_c = kf_cb + kf_j;\n"
           << earlier(k, "                        ")
           << "                        const " << T << " kf_x = " << st.map.to_c(at, f32, false) << ";\n"
           << "                        kf_acc[kf_j] = " << combine_expr(st.combine, "kf_acc[kf_j]", "kf_x") << ";\n"
           << "                    }\n"
           << "                }\n"
           << "            }\n";
    }
    os << "            for (long long kf_j = 0; kf_j < kf_n; ++kf_j) {\n"
       << "                const long long kf_c = kf_cb + kf_j;\n"
       << earlier(c.stats.size(), "                ")
       << "                " << c.output << "[kf_c] = static_cast<" << T << ">(" << c.epilogue.to_c(at, f32, false) << ");\n"
       << "            }\n"
       << "        }\n"
       << "    }\n"
       << "}\n";
    return {"cols-omp", "template/cols-omp",
            "column reduction, OpenMP over blocks of CB columns, SIMD over each row's segment (tunable: CB)", os.str()};
}

/**
 * Column scan (host): OpenMP over blocks of CB columns; each thread walks down the rows of its
 * block, a running combine per column in an array (an fp32 sum or product carried in double),
 * each row's segment in an `omp simd` loop.
 */
TemplateKernel host_col_scan(const Task& task, const Computation& c) {
    const std::string T = element_type(task, c);
    const bool f32 = is_fp32(task, c);
    const ComputationStat& st = c.stats.front();
    const std::string A = scan_carry_type(st, T, f32);
    auto at = element_resolver(task, c, T, "kf_base + kf_c", "kf_c", "kf_r");
    std::ostringstream os;
    os << "#include \"kf_task.h\"\n\n#include <cmath>\n#include <math.h>\n\n"
       << header_comment("Column scan (host): OpenMP over blocks of CB columns, a running combine per column down the rows.", c)
       << "\n#define CB 256  // @kf tunable values(16, 64, 256, 1024)\n\n"
       << entry_definition(task, Backend::Host) << " {\n"
       << layout_consts(c)
       << "    const long long kf_blocks = (kf_cols + CB - 1) / CB;\n"
       << "#pragma omp parallel for schedule(static)\n"
       << "    for (long long kf_b = 0; kf_b < kf_blocks; ++kf_b) {\n"
       << "        const long long kf_c0 = kf_b * CB, kf_c1 = kf_c0 + CB < kf_cols ? kf_c0 + CB : kf_cols;\n"
       << "        " << A << " kf_run[CB];\n"
       << "        for (long long kf_j = 0; kf_j < CB; ++kf_j) kf_run[kf_j] = " << identity(st.combine, A == "float") << ";\n"
       << "        for (long long kf_r = 0; kf_r < kf_rows; ++kf_r) {\n"
       << "            const long long kf_base = kf_r * kf_cols;\n"
       << "            (void)kf_base;\n"
       << "#pragma omp simd\n"
       << "            for (long long kf_c = kf_c0; kf_c < kf_c1; ++kf_c) {\n"
       << "                const " << A << " kf_x = " << st.map.to_c(at, f32, false) << ";\n"
       << "                kf_run[kf_c - kf_c0] = " << combine_expr(st.combine, "kf_run[kf_c - kf_c0]", "kf_x") << ";\n"
       << "                const " << T << " kf_s_" << st.name << " = static_cast<" << T << ">(kf_run[kf_c - kf_c0]);\n"
       << "                " << c.output << "[kf_base + kf_c] = static_cast<" << T << ">(" << c.map.to_c(at, f32, false) << ");\n"
       << "            }\n"
       << "        }\n"
       << "    }\n"
       << "}\n";
    return {"col-scan-omp", "template/col-scan-omp",
            "column scan, OpenMP over blocks of CB columns walking down the rows (tunable: CB)", os.str()};
}

}  // namespace

std::vector<TemplateKernel> host_templates(const Task& task, const Computation& c, const std::string& n_expr) {
    if (c.op == "histogram") return {host_histogram(task, c, n_expr)};
    if (c.op == "stencil") return {host_stencil(task, c)};
    if (c.op == "col_reduce") return {host_cols(task, c)};
    if (c.rows.empty()) return {host_map(task, c, n_expr)};
    if (c.op == "transpose") return {host_transpose(task, c)};
    if (c.op == "gemm") return {host_gemm(task, c)};
    if (c.op == "row_scan") return {host_scan(task, c)};
    if (c.op == "col_scan") return {host_col_scan(task, c)};
    return {host_rows(task, c)};
}

}  // namespace kf::templates
