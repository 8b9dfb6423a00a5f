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

std::filesystem::path SeedEntry::source_path(const Task& t, const std::filesystem::path& seed_dir) const {
    return !task_file.empty() ? t.dir / task_file : seed_dir / file;
}

std::vector<SeedEntry> read_seed_entries(const std::filesystem::path& seed_json) {
    std::vector<SeedEntry> out;
    std::ifstream in(seed_json);
    if (!in) return out;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("patterns") || !j["patterns"].is_array()) return out;
    for (const auto& e : j["patterns"]) {
        if (!e.is_object()) continue;
        SeedEntry s;
        s.task = e.value("task", "");
        std::string backend = e.value("backend", "");
        if (s.task.empty() || (backend != "cuda" && backend != "host")) continue;
        s.backend = backend == "cuda" ? Backend::Cuda : Backend::Host;
        s.file = e.value("file", "");
        s.task_file = e.value("task_file", "");
        std::filesystem::path stem_of = !s.task_file.empty() ? s.task_file : s.file;
        s.name = e.value("name", stem_of.stem().string());
        s.family = e.value("family", s.name);
        s.description = e.value("description", "");
        s.bound_tags = e.value("bound_tags", std::vector<std::string>{});
        out.push_back(std::move(s));
    }
    return out;
}

int sync_seed_patterns(ExperienceLibrary& library, const std::filesystem::path& seed_json,
                       const std::filesystem::path& tasks_dir) {
    std::map<std::string, Task> tasks;
    int changed = 0;
    for (const SeedEntry& e : read_seed_entries(seed_json)) {
        auto t = tasks.find(e.task);
        if (t == tasks.end()) {
            try {
                t = tasks.emplace(e.task, load_task(tasks_dir / e.task)).first;
            } catch (const Error&) {
                continue;  // the seed names a task this installation does not have
            }
        }
        const Task& task = t->second;
        std::string source = read_text_file(e.source_path(task, seed_json.parent_path()));
        if (source.empty()) continue;
        Pattern p;
        p.name = e.name;
        p.op_class = task.op_class;
        p.backend = std::string(to_string(e.backend));
        p.family = e.family;
        p.bound_tags = e.bound_tags;
        p.signature = entry_signature(task, e.backend);
        p.description = e.description;
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
