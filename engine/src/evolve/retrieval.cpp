#include "kf/retrieval.h"

#include <fstream>
#include <regex>

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

namespace {

struct SignatureParam {
    std::string type, name;
};

/** The parameters of a `void kf_solve(...)` declaration; nullopt when it does not read as one. */
std::optional<std::vector<SignatureParam>> signature_params(const std::string& sig) {
    std::size_t open = sig.find("kf_solve("), close = sig.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    std::string inner = sig.substr(open + 9, close - open - 9);
    std::vector<SignatureParam> out;
    static const std::regex param("^\\s*(.*[^A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\\s*$");
    std::size_t start = 0;
    while (start <= inner.size()) {
        std::size_t comma = inner.find(',', start);
        std::string one = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        std::smatch m;
        if (!std::regex_match(one, m, param)) return std::nullopt;
        out.push_back({normalize_signature(m[1].str()), m[2].str()});
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    for (auto& p : out)
        while (!p.type.empty() && p.type.back() == ' ') p.type.pop_back();
    return out;
}

}  // namespace

std::optional<std::string> adapt_to_signature(const std::string& source, const std::string& pattern_signature,
                                              const std::string& task_signature) {
    auto from = signature_params(pattern_signature), to = signature_params(task_signature);
    if (!from || !to || from->size() != to->size()) return std::nullopt;
    std::string args, renamed;
    for (std::size_t k = 0; k < from->size(); ++k) {
        if ((*from)[k].type != (*to)[k].type) return std::nullopt;
        args += (k ? ", " : "") + (*to)[k].name;
        if ((*from)[k].name != (*to)[k].name) renamed += (renamed.empty() ? "" : ", ") + (*from)[k].name + " -> " + (*to)[k].name;
    }
    static const std::regex entry("\\bkf_solve\\b");
    std::string body = std::regex_replace(source, entry, "kf_pattern_solve");
    std::string def = task_signature;
    if (!def.empty() && def.back() == ';') def.pop_back();
    return body + "\n// Adapted by Kernel Foundry to this task's entry point, argument by argument (" +
           (renamed.empty() ? std::string("same types") : renamed) + ").\n" + def + " { kf_pattern_solve(" + args + "); }\n";
}

Retrieval retrieve_patterns(const ExperienceLibrary& library, const Task& task, Backend backend, int limit) {
    // By op class and backend, not by parameter names: a pattern for another entry point is
    // adapted to this one when its parameter types agree position by position.
    PatternQuery q;
    q.op_class = task.op_class;
    q.backend = std::string(to_string(backend));
    q.limit = 0;
    const std::string signature = entry_signature(task, backend);
    Retrieval r;
    std::string ranked;
    for (const Pattern& p : library.patterns(q)) {
        if (limit > 0 && static_cast<int>(r.patterns.size()) >= limit) break;
        std::string source = p.source;
        bool adapted = false;
        if (normalize_signature(p.signature) != normalize_signature(signature)) {
            std::optional<std::string> a = adapt_to_signature(p.source, p.signature, signature);
            if (!a) continue;
            source = *a;
            adapted = true;
        }
        PatternSource ps;
        ps.name = p.name;
        ps.family = p.family;
        ps.source = source;
        if (adapted) r.adapted.insert(source);
        ps.bound_tags = p.bound_tags;
        ps.description = p.description;
        r.ids[source] = p.id;
        r.patterns.push_back(std::move(ps));
        ranked += (ranked.empty() ? "" : ", ") + p.name + " " + std::to_string(p.successes) + "/" +
                  std::to_string(p.applications) + (adapted ? " (adapted to the entry point)" : "");
    }
    if (r.patterns.empty())
        r.summary = "no library pattern matches task " + task.name + " (op class " + task.op_class + ", " +
                    std::string(to_string(backend)) + " backend, entry point with the same parameter types): starting from the task's own seeds";
    else
        r.summary = std::to_string(r.patterns.size()) + " library pattern(s) for " + task.name +
                    ", best evidence first (successes/uses): " + ranked;
    return r;
}

}  // namespace kf
