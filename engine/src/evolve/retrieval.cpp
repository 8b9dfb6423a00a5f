#include "kf/retrieval.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "kf/paths.h"

namespace kf {

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

int sync_seed_patterns(ExperienceLibrary& library, const std::filesystem::path& seed_json,
                       const std::filesystem::path& tasks_dir) {
    std::ifstream in(seed_json);
    if (!in) return 0;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("patterns") || !j["patterns"].is_array()) return 0;
    std::map<std::string, Task> tasks;
    int changed = 0;
    for (const auto& e : j["patterns"]) {
        std::string task_ref = e.value("task", "");
        std::string backend_s = e.value("backend", "");
        if (task_ref.empty() || (backend_s != "cuda" && backend_s != "host")) continue;
        auto t = tasks.find(task_ref);
        if (t == tasks.end()) {
            try {
                t = tasks.emplace(task_ref, load_task(tasks_dir / task_ref)).first;
            } catch (const Error&) {
                continue;  // the seed names a task this installation does not have
            }
        }
        const Task& task = t->second;
        Backend backend = backend_s == "cuda" ? Backend::Cuda : Backend::Host;
        std::filesystem::path file = e.contains("task_file") ? task.dir / e.value("task_file", "")
                                                             : seed_json.parent_path() / e.value("file", "");
        std::string source = read_text_file(file);
        if (source.empty()) continue;
        Pattern p;
        p.name = e.value("name", file.stem().string());
        p.op_class = task.op_class;
        p.backend = backend_s;
        p.family = e.value("family", p.name);
        p.bound_tags = e.value("bound_tags", std::vector<std::string>{});
        p.signature = entry_signature(task, backend);
        p.description = e.value("description", "");
        p.source = source;
        p.provenance = "seed";
        std::optional<Pattern> old = library.pattern_by_name(p.name);
        if (old && old->source == p.source && old->signature == p.signature && old->op_class == p.op_class) continue;
        if (old && old->provenance != "seed") continue;  // the user's own pattern of that name wins
        if (old) {
            // A new version of the template: its evidence stays, a broken mark is lifted.
            p.applications = old->applications;
            p.successes = old->successes;
            p.created = old->created;
        }
        library.add_pattern(p);
        ++changed;
    }
    return changed;
}

Retrieval retrieve_patterns(const ExperienceLibrary& library, const Task& task, Backend backend, int limit) {
    PatternQuery q;
    q.op_class = task.op_class;
    q.backend = std::string(to_string(backend));
    q.signature = entry_signature(task, backend);
    q.limit = limit;
    Retrieval r;
    std::string ranked;
    for (const Pattern& p : library.patterns(q)) {
        PatternSource ps;
        ps.name = p.name;
        ps.family = p.family;
        ps.source = p.source;
        ps.bound_tags = p.bound_tags;
        ps.description = p.description;
        r.ids[p.source] = p.id;
        r.patterns.push_back(std::move(ps));
        ranked += (ranked.empty() ? "" : ", ") + p.name + " " + std::to_string(p.successes) + "/" +
                  std::to_string(p.applications);
    }
    if (r.patterns.empty())
        r.summary = "no library pattern matches task " + task.name + " (op class " + task.op_class + ", " +
                    std::string(to_string(backend)) + " backend, its entry signature): starting from the task's own seeds";
    else
        r.summary = std::to_string(r.patterns.size()) + " library pattern(s) for " + task.name +
                    ", best evidence first (successes/uses): " + ranked;
    return r;
}

}  // namespace kf
