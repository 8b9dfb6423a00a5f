// What the experience library keeps of KernelBench runs: a winning ModelNew distilled to a
// pattern (its technique), keyed by the problem's op class, and the notes retrieved from it
// for other problems of the class.
#include <cstdio>
#include <regex>

#include "kf/kernelbench_search.h"
#include "kf/llm.h"

namespace kf::kb {

namespace {

/** The signature every KernelBench pattern carries: it keeps them apart from native patterns. */
const char* kModelNewSignature = "class ModelNew(nn.Module)";

std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

int count_of(const std::string& s, const std::string& what) {
    int n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

}  // namespace

std::string technique_of(const ProblemFacts& facts, const std::string& src, const std::string& rationale) {
    std::vector<std::string> t;
    int kernels = count_of(src, "__global__");
    if (has(src, "load_inline")) t.push_back("CUDA C++ through load_inline");
    if (has(src, "import triton") || has(src, "@triton.jit")) t.push_back("Triton");
    if (has(src, "wmma::") || has(src, "mma.sync") || has(src, "__hmma")) t.push_back("tensor cores");
    if (has(src, "__shared__")) t.push_back("shared-memory tiling");
    if (has(src, "__shfl")) t.push_back("warp shuffles");
    if (has(src, "float4") || has(src, "float2") || has(src, "__ldg")) t.push_back("vectorised loads");
    if (has(src, "#pragma unroll")) t.push_back("unrolled loops");
    if (has(src, "__launch_bounds__")) t.push_back("launch bounds");
    if (has(src, "atomicAdd")) t.push_back("atomics");
    if (has(src, "cp.async") || has(src, "__pipeline")) t.push_back("asynchronous copies");
    std::string out;
    for (const auto& x : t) out += (out.empty() ? "" : ", ") + x;
    if (kernels > 0) {
        std::string ops;
        for (const auto& o : facts.ops) ops += (ops.empty() ? "" : ", ") + o;
        out += (out.empty() ? "" : "; ") + std::to_string(kernels) + " kernel" + (kernels > 1 ? "s" : "") +
               (ops.empty() ? std::string() : " replacing " + ops) + (kernels == 1 && facts.ops.size() > 1 ? " (fused)" : "");
    }
    std::string said = rationale;
    if (auto route = said.find(" [route: "); route != std::string::npos) said.resize(route);  // the router's reason
    if (said.size() > 2 && said[0] == '[') {
        auto e = said.find("] ");
        if (e != std::string::npos) said = said.substr(e + 2);
    }
    if (said.size() > 240) said = said.substr(0, 240) + "...";
    if (!said.empty()) out = said + (out.empty() ? "" : " (" + out + ")");
    return out.empty() ? "a ModelNew" : out;
}

Pattern distil_pattern(const ProblemFacts& facts, const std::string& model_new, const std::string& rationale, double speedup,
                       std::int64_t run_id) {
    Pattern p;
    p.name = "kernelbench/" + facts.key;
    p.op_class = facts.op_class;
    p.backend = "cuda";
    p.family = "kernelbench/" + facts.op_class;
    p.signature = kModelNewSignature;
    p.description = technique_of(facts, model_new, rationale) + "; " + fmt(speedup) + "x eager PyTorch on " + facts.key;
    p.source = model_new;
    p.provenance = "run:" + std::to_string(run_id);
    p.applications = 1;
    p.successes = 1;
    return p;
}

std::vector<std::string> library_notes(const ExperienceLibrary& library, const ProblemFacts& facts, const std::string& dclass) {
    std::vector<std::string> notes;
    const std::optional<DiagnosisClass> c = parse_diagnosis_class(dclass);
    const bool bound = c && is_bound(*c);
    try {
        InsightQuery q;
        q.op_class = facts.op_class;
        q.limit = 6;
        for (const Insight& in : library.insights(q)) {
            if (in.status == "rejected") continue;
            if (bound && !in.condition.bound.empty() && in.condition.bound != dclass) continue;
            if (!bound && !dclass.empty() && dclass != "initial" && !in.condition.status.empty() && in.condition.status != dclass)
                continue;
            notes.push_back("insight (" + in.status + ", " + std::to_string(in.evidence.successes) + "/" +
                            std::to_string(in.evidence.applications) + " successes, median gain " + fmt(in.evidence.median_gain()) +
                            "x): " + in.action);
        }
        PatternQuery pq;
        pq.op_class = facts.op_class;
        pq.backend = "cuda";
        pq.signature = kModelNewSignature;
        pq.limit = 4;
        int shown = 0;
        for (const Pattern& p : library.patterns(pq)) {
            if (p.name == "kernelbench/" + facts.key || shown >= 2) continue;
            ++shown;
            notes.push_back("pattern " + p.name + " (" + p.op_class + "): " + p.description + "\n```python\n" +
                            llm::excerpt(p.source, 60, 3000) + "```");
        }
    } catch (const Error&) {
        // The library is an aid: a failure to read it never stops the search.
    }
    return notes;
}

}  // namespace kf::kb
