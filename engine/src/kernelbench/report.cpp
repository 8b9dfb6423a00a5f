// KernelBench's metrics: correctness rate, fast_p against eager and torch.compile, geometric
// mean speedup, and a per-problem table; read back from a project store.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "kf/kernelbench.h"
#include "kf/store.h"

namespace kf::kb {

using nlohmann::json;

double ProblemOutcome::speedup_eager() const { return correct && candidate_ms > 0 && eager_ms > 0 ? eager_ms / candidate_ms : 0; }
double ProblemOutcome::speedup_compile() const {
    return correct && candidate_ms > 0 && compile_ms > 0 ? compile_ms / candidate_ms : 0;
}

namespace {

double geomean(const std::vector<double>& xs) {
    if (xs.empty()) return 0;
    double s = 0;
    for (double x : xs) s += std::log(x);
    return std::exp(s / static_cast<double>(xs.size()));
}

std::string fmt(double v, const char* f = "%.3g") {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string ms_or_dash(double v) { return v > 0 ? fmt(v, "%.4g") : std::string("—"); }

}  // namespace

Report make_report(std::vector<ProblemOutcome> rows) {
    std::sort(rows.begin(), rows.end(), [](const ProblemOutcome& a, const ProblemOutcome& b) {
        return a.level != b.level ? a.level < b.level : a.id < b.id;
    });
    Report r;
    r.rows = std::move(rows);
    r.problems = static_cast<int>(r.rows.size());
    std::vector<double> se, sc;
    for (const auto& o : r.rows) {
        if (o.status != "missing") ++r.attempted;
        if (o.correct) ++r.correct;
        if (o.correct && o.speedup_eager() > 0) se.push_back(o.speedup_eager());
        if (o.correct && o.speedup_compile() > 0) sc.push_back(o.speedup_compile());
        if (o.compile_ms <= 0) ++r.without_compile_baseline;
    }
    double n = r.problems > 0 ? r.problems : 1;
    r.correctness_rate = r.problems > 0 ? r.correct / n : 0;
    for (double p : kFastP) {
        // fast_p: correct and strictly faster than p x the baseline, over all problems.
        int fe = 0, fc = 0;
        for (const auto& o : r.rows) {
            if (!o.correct) continue;
            if (o.speedup_eager() > p) ++fe;
            if (o.speedup_compile() > p) ++fc;
        }
        r.fast_eager.emplace_back(p, r.problems > 0 ? fe / n : 0);
        r.fast_compile.emplace_back(p, r.problems > 0 ? fc / n : 0);
    }
    r.geomean_eager = geomean(se);
    r.geomean_compile = geomean(sc);
    std::set<std::string> policies;
    for (const auto& o : r.rows)
        if (o.status != "missing" || !o.tolerance.empty()) policies.insert(o.tolerance.empty() ? "unrecorded" : o.tolerance);
    if (policies.empty()) r.tolerance = "unrecorded";
    else if (policies.size() == 1) r.tolerance = *policies.begin();
    else {
        r.tolerance = "mixed:";
        for (const auto& t : policies) r.tolerance += (r.tolerance.back() == ':' ? " " : ", ") + t;
    }
    return r;
}

json to_json(const Report& r) {
    json fe = json::object(), fc = json::object();
    for (auto [p, v] : r.fast_eager) fe[fmt(p, "%g")] = v;
    for (auto [p, v] : r.fast_compile) fc[fmt(p, "%g")] = v;
    json rows = json::array();
    for (const auto& o : r.rows)
        rows.push_back({{"level", o.level},
                        {"id", o.id},
                        {"name", o.name},
                        {"status", o.status},
                        {"correct", o.correct},
                        {"candidate_ms", o.candidate_ms},
                        {"eager_ms", o.eager_ms},
                        {"compile_ms", o.compile_ms},
                        {"speedup_eager", o.speedup_eager()},
                        {"speedup_compile", o.speedup_compile()},
                        {"candidate_id", o.candidate_id},
                        {"evaluations", o.evaluations},
                        {"message", o.message},
                        {"tolerance", o.tolerance},
                        {"passed_by", o.passed_by},
                        {"error_fp64", o.error_fp64 >= 0 ? json(o.error_fp64) : json(nullptr)},
                        {"reference_error_fp64", o.reference_error_fp64 >= 0 ? json(o.reference_error_fp64) : json(nullptr)}});
    return {{"tolerance", r.tolerance},
            {"tolerance_meaning", describe_tolerance(r.tolerance)},
            {"problems", r.problems},
            {"attempted", r.attempted},
            {"correct", r.correct},
            {"correctness_rate", r.correctness_rate},
            {"fast_p_eager", fe},
            {"fast_p_compile", fc},
            {"geomean_speedup_eager", r.geomean_eager},
            {"geomean_speedup_compile", r.geomean_compile},
            {"without_compile_baseline", r.without_compile_baseline},
            {"rows", rows}};
}

std::string to_markdown(const Report& r) {
    std::ostringstream o;
    o << "# KernelBench report\n\n";
    std::string meaning = describe_tolerance(r.tolerance);
    o << "- Tolerance: " << r.tolerance << (meaning.empty() ? std::string() : " (" + meaning + ")") << "\n";
    o << "- Problems: " << r.problems << " (attempted " << r.attempted << ", correct " << r.correct << ")\n";
    o << "- Correctness rate: " << fmt(100 * r.correctness_rate, "%.1f") << "%\n";
    o << "- Geometric-mean speedup of the correct kernels: " << fmt(r.geomean_eager, "%.3f") << "x over eager, "
      << (r.geomean_compile > 0 ? fmt(r.geomean_compile, "%.3f") + "x" : std::string("—")) << " over torch.compile\n";
    if (r.without_compile_baseline > 0)
        o << "- " << r.without_compile_baseline
          << " problem(s) have no torch.compile baseline; they count as not fast against it\n";
    o << "\n| baseline |";
    for (double p : kFastP) o << " fast_" << fmt(p, "%g") << " |";
    o << "\n|---|";
    for (std::size_t i = 0; i < std::size(kFastP); ++i) o << "---|";
    o << "\n| eager |";
    for (auto [p, v] : r.fast_eager) o << " " << fmt(100 * v, "%.1f") << "% |";
    o << "\n| torch.compile |";
    for (auto [p, v] : r.fast_compile) o << " " << fmt(100 * v, "%.1f") << "% |";
    o << "\n\n| level | id | problem | status | kernel ms | eager ms | compile ms | vs eager | vs compile | error vs fp64 "
         "| reference error vs fp64 |\n";
    o << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& x : r.rows) {
        o << "| " << x.level << " | " << x.id << " | " << x.name << " | " << x.status << " | " << ms_or_dash(x.candidate_ms)
          << " | " << ms_or_dash(x.eager_ms) << " | " << ms_or_dash(x.compile_ms) << " | "
          << (x.speedup_eager() > 0 ? fmt(x.speedup_eager(), "%.2f") + "x" : std::string("—")) << " | "
          << (x.speedup_compile() > 0 ? fmt(x.speedup_compile(), "%.2f") + "x" : std::string("—")) << " | "
          << (x.error_fp64 >= 0 ? fmt(x.error_fp64) + (x.passed_by == "fp64" ? " (fp64 rule)" : "") : std::string("—"))
          << " | " << (x.reference_error_fp64 >= 0 ? fmt(x.reference_error_fp64) : std::string("—")) << " |\n";
    }
    o << "\nfast_p: the share of all problems whose kernel is correct and more than p times as fast as the "
         "baseline (medians measured side by side in one process); a problem without a correct kernel counts as a "
         "failure. Errors vs fp64: the largest absolute difference from an fp64 run of the reference, of the kernel "
         "and of the fp32 reference itself.\n";
    return o.str();
}

std::vector<ProblemOutcome> outcomes_from_store(ProjectStore& store) { return outcomes_from_view(ProjectView(store)); }

std::vector<ProblemOutcome> outcomes_from_view(const ProjectView& store) {
    // The latest run of each problem wins.
    std::map<std::string, RunRecord> latest;
    for (const auto& run : store.runs()) {
        if (!run.config.is_object() || run.config.value("kind", "") != "kernelbench") continue;
        auto it = latest.find(run.task);
        if (it == latest.end() || run.id > it->second.id) latest[run.task] = run;
    }
    std::vector<ProblemOutcome> out;
    for (const auto& [task, run] : latest) {
        ProblemOutcome o;
        o.tolerance = run.config.value("tolerance", "");
        o.level = run.config.value("level", 0);
        o.id = run.config.value("id", 0);
        o.name = run.config.value("name", task);
        json base = store.get_state(run.id, "kernelbench_baselines").value_or(json::object());
        if (base.contains("eager") && base["eager"].is_object()) o.eager_ms = base["eager"].value("median_ms", 0.0);
        if (base.contains("compile") && base["compile"].is_object()) o.compile_ms = base["compile"].value("median_ms", 0.0);
        auto evals = store.evaluations(run.id);
        o.evaluations = static_cast<int>(evals.size());
        if (!evals.empty()) {
            // The last failure explains an unsolved problem; the best correct kernel wins otherwise.
            o.status = evals.back().status;
            o.message = evals.back().diagnosis.value("message", "");
            o.candidate_id = evals.back().candidate_id;
        }
        if (auto best = store.best(run.id); best && best->second.status == "ok") {
            const json& d = best->second.diagnosis;
            o.status = "ok";
            o.correct = true;
            o.candidate_id = best->first.id;
            o.message = d.value("message", "");
            json verdicts = store.get_state(run.id, "kernelbench_verdicts").value_or(json::object());
            if (auto v = verdicts.find(std::to_string(best->first.id)); v != verdicts.end() && v->is_object()) {
                o.passed_by = v->value("passed_by", "");
                if (v->value("fp64_available", false)) {
                    o.error_fp64 = v->value("candidate_error_fp64", 0.0);
                    o.reference_error_fp64 = v->value("reference_error_fp64", 0.0);
                }
            }
            if (d.contains("timing") && d["timing"].is_object()) {
                o.candidate_ms = d["timing"].value("median_ms", 0.0);
                if (o.eager_ms <= 0) o.eager_ms = d["timing"].value("reference_median_ms", 0.0);
            }
        }
        out.push_back(std::move(o));
    }
    return out;
}

}  // namespace kf::kb
