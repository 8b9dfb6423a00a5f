#include "library_command.h"

#include "evolve_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "kf/evaluator.h"
#include "kf/library.h"
#include "kf/paths.h"
#include "kf/store.h"
#include "kf/task.h"
#include "kf/tunables.h"

namespace kf::cli {

using nlohmann::json;

namespace {

json insight_json(const Insight& i) {
    return {{"id", i.id},
            {"status", i.status},
            {"action", i.action},
            {"expert", i.expert},
            {"condition", {{"op_class", i.condition.op_class}, {"bound", i.condition.bound}, {"status", i.condition.status}}},
            {"applications", i.evidence.applications},
            {"successes", i.evidence.successes},
            {"median_gain", i.evidence.median_gain()},
            {"weight", i.weight}};
}

json pattern_json(const Pattern& p, bool with_source) {
    json j = {{"id", p.id},           {"name", p.name},         {"op_class", p.op_class},
              {"backend", p.backend}, {"family", p.family},     {"bound_tags", p.bound_tags},
              {"status", p.status},   {"applications", p.applications}, {"successes", p.successes},
              {"description", p.description}, {"meaning", p.meaning}};
    if (with_source) j["source"] = p.source;
    return j;
}

}  // namespace

int run_library(const LibraryArgs& a) {
    std::filesystem::path path = a.library.empty() ? ExperienceLibrary::user_library_path() : a.library;
    ExperienceLibrary lib = ExperienceLibrary::open(path);
    if (a.action == "list") {
        json out = json::array();
        if (a.what == "patterns") {
            PatternQuery q;
            q.text = a.text;
            q.op_class = a.op_class;
            q.status = a.status.empty() ? "active" : (a.status == "any" ? "" : a.status);
            for (const auto& p : lib.patterns(q)) {
                if (a.as_json) out.push_back(pattern_json(p, false));
                else std::printf("%5lld  %-32s %-12s %-5s %s\n", static_cast<long long>(p.id), p.name.c_str(), p.op_class.c_str(),
                                 p.backend.c_str(), p.status.c_str());
            }
        } else {
            InsightQuery q;
            q.text = a.text;
            q.status = a.status;
            q.op_class = a.op_class;
            for (const auto& i : lib.insights(q)) {
                if (a.as_json) out.push_back(insight_json(i));
                else std::printf("%5lld  %-9s weight %.2f  %lld/%lld  %s\n", static_cast<long long>(i.id), i.status.c_str(), i.weight,
                                 static_cast<long long>(i.evidence.successes), static_cast<long long>(i.evidence.applications),
                                 i.action.c_str());
            }
        }
        if (a.as_json) std::cout << out.dump(2) << "\n";
        return kExitOk;
    }
    if (a.action == "show") {
        if (a.what == "patterns") {
            auto p = lib.pattern(a.id);
            if (!p) throw Error("no pattern " + std::to_string(a.id) + " in " + path.string());
            std::cout << (a.as_json ? pattern_json(*p, true).dump(2) + "\n" : p->name + " (" + p->family + ")\n" + p->description + "\n" +
                                          (p->meaning.empty() ? std::string() : "computes: " + p->meaning + "\n") + "\n" + p->source);
        } else {
            auto i = lib.insight(a.id);
            if (!i) throw Error("no insight " + std::to_string(a.id) + " in " + path.string());
            std::cout << insight_json(*i).dump(2) << "\n";
        }
        return kExitOk;
    }
    if (a.action == "approve" || a.action == "reject") {
        if (!lib.insight(a.id)) throw Error("no insight " + std::to_string(a.id) + " in " + path.string());
        lib.set_insight_status(a.id, a.action == "approve" ? "approved" : "rejected");
        std::cout << "insight " << a.id << " " << (a.action == "approve" ? "approved" : "rejected") << "\n";
        return kExitOk;
    }
    if (a.action == "export") {
        std::string text = lib.export_json().dump(2) + "\n";
        if (a.file.empty() || a.file == "-") {
            std::cout << text;
        } else {
            auto tmp = a.file;
            tmp += ".tmp";
            {
                std::ofstream out(tmp);
                out << text;
                if (!out) throw Error("cannot write " + a.file.string());
            }
            std::filesystem::rename(tmp, a.file);
        }
        return kExitOk;
    }
    if (a.action == "import") {
        std::ifstream in(a.file);
        if (!in) throw Error("cannot read " + a.file.string());
        json j = json::parse(in, nullptr, false);
        if (j.is_discarded()) throw Error(a.file.string() + " is not valid JSON");
        ImportReport r = lib.import_json(j);
        std::cout << "imported " << r.patterns_imported << " pattern(s), " << r.insights_imported << " insight(s), "
                  << r.improvements_imported << " improvement record(s)\n";
        for (const auto& s : r.skipped) std::cout << "  skipped " << s << "\n";
        return kExitOk;
    }
    throw Error("unknown library action '" + a.action + "'");
}

int run_export(const std::filesystem::path& project, const std::string& task_name, const std::filesystem::path& out_dir) {
    ProjectStore store = ProjectStore::open(project);
    auto best = best_in_project(store, task_name);
    if (!best) {
        std::cerr << "kfoundry: no correct candidate to export in " << project.string() << "\n";
        return kExitCandidateFailed;
    }
    const auto& [cand, eval] = *best;
    std::optional<std::filesystem::path> dir;
    if (auto run = store.run(cand.run_id); run && run->config.contains("task_dir"))
        if (std::filesystem::exists(run->config.value("task_dir", ""))) dir = run->config.value("task_dir", "");
    if (!dir) dir = resolve_task(cand.task);
    std::string backend = eval.diagnosis.value("backend", "cuda");
    std::string ext = backend == "host" ? ".cpp" : ".cu";
    std::filesystem::create_directories(out_dir);
    // The kernel as compiled: its tunables applied.
    std::string source = apply_tunables(cand.source, cand.tunables.is_object() ? cand.tunables.get<Assignment>() : Assignment{});
    std::ofstream(out_dir / (cand.task + ext)) << source;
    if (dir) std::ofstream(out_dir / "kf_task.h") << entry_header(load_task(*dir), backend == "host" ? Backend::Host : Backend::Cuda);
    std::ofstream md(out_dir / "report.md");
    md << "# " << cand.task << ": best kernel\n\n"
       << "Candidate " << cand.id << " of run " << cand.run_id << ", " << eval.fitness << "x the reference (" << backend
       << " backend, " << eval.diagnosis.value("device", std::string()) << ").\n\n";
    if (eval.diagnosis.contains("timing") && eval.diagnosis["timing"].is_object()) {
        const json& t = eval.diagnosis["timing"];
        md << "Median " << t.value("median_ms", 0.0) << " ms against the reference's " << t.value("reference_median_ms", 0.0)
           << " ms (" << t.value("reps", 0) << " repetitions).\n\n";
    }
    md << "## Lineage\n\n| candidate | expert | speedup | gain over parent | rationale |\n|---|---|---|---|---|\n";
    auto chain = store.lineage(cand.id);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        auto c = store.candidate(*it);
        auto e = store.evaluation_of(*it);
        if (!c) continue;
        double fit = e ? e->fitness : 0.0;
        double parent_fit = 0;
        if (!c->parents.empty())
            if (auto pe = store.evaluation_of(c->parents.front())) parent_fit = pe->fitness;
        char gain[32] = "-";
        if (parent_fit > 0) std::snprintf(gain, sizeof gain, "%.2fx", fit / parent_fit);
        std::string why = c->rationale;
        for (char& ch : why)
            if (ch == '|' || ch == '\n') ch = ' ';
        md << "| " << c->id << " | " << c->expert << " | " << fit << "x | " << gain << " | " << why << " |\n";
    }
    md << "\nFiles: `" << cand.task << ext << "` (the kernel, tunables applied), `kf_task.h` (its entry point).\n";
    std::cout << "exported candidate " << cand.id << " (" << eval.fitness << "x) to " << out_dir.string() << "\n";
    return kExitOk;
}

}  // namespace kf::cli
