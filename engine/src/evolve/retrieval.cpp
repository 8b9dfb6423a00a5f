#include "kf/retrieval.h"

#include <algorithm>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "kf/paths.h"

namespace kf {

namespace {

const char* indexing_name(Indexing ix) {
    switch (ix) {
        case Indexing::Full: return "full";
        case Indexing::PerColumn: return "per_column";
        case Indexing::PerRow: return "per_row";
        case Indexing::Left: return "left";
        case Indexing::Right: return "right";
        case Indexing::Indexed: return "indexed";
    }
    return "?";
}

}  // namespace

std::string computation_meaning(const Task& task, const Computation& c) {
    if (c.op.empty()) return {};
    // Names by position: tensors, sizes, params, then the stats (which may not reuse those names).
    std::map<std::string, std::string> token;
    for (std::size_t i = 0; i < task.tensors.size(); ++i) token.emplace(task.tensors[i].name, "t" + std::to_string(i));
    for (std::size_t i = 0; i < task.size_names.size(); ++i) token.emplace(task.size_names[i], "s" + std::to_string(i));
    for (std::size_t i = 0; i < task.params.size(); ++i) token.emplace(task.params[i].name, "p" + std::to_string(i));
    for (std::size_t i = 0; i < c.stats.size(); ++i) token[c.stats[i].name] = "a" + std::to_string(i);
    // Names in a text (a layout, an index in C) replaced by their tokens, spaces dropped;
    // `keep_unknown` leaves other identifiers (C keywords of an index's casts) as they are.
    auto rename = [&](const std::string& text, bool keep_unknown) {
        static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
        std::string out;
        std::size_t last = 0;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), ident); it != std::sregex_iterator(); ++it) {
            auto tok = token.find(it->str());
            out += text.substr(last, static_cast<std::size_t>(it->position()) - last) +
                   (tok != token.end() ? tok->second : keep_unknown ? it->str() : "?" + it->str());
            last = static_cast<std::size_t>(it->position() + it->length());
        }
        out += text.substr(last);
        out.erase(std::remove(out.begin(), out.end(), ' '), out.end());
        return out;
    };
    auto resolve = [&](const std::string& name) -> std::string {
        if (name == "row()" || name == "col()") return name;
        // A read at an index comes as "w[<index in C>]": the tensor and the index's sizes by position.
        if (std::size_t open = name.find('['); open != std::string::npos)
            return rename(name.substr(0, open), false) + rename(name.substr(open), true);
        // A stencil's neighbour read at(x, di, dj) comes as "x@di,dj": its tensor by position, its offsets as they are.
        std::size_t at = name.find('@');
        auto it = token.find(name.substr(0, at));
        std::string t = it == token.end() ? "?" + name.substr(0, at) : it->second;
        return at == std::string::npos ? t : t + name.substr(at);
    };
    auto expr = [&](const ComputeExpr& e) { return e.to_c(resolve, /*fp32=*/true, /*cuda=*/false); };
    // A layout is sizes, integers, + - * and parentheses: its names replaced, its spaces dropped.
    auto layout = [&](const std::string& text) { return rename(text, false); };
    std::string key = c.op;
    if (!c.rows.empty() || !c.cols.empty()) key += " rows=" + layout(c.rows) + " cols=" + layout(c.cols);
    if (!c.inner.empty()) key += " inner=" + layout(c.inner);
    if (c.radius() > 0) key += " radius=" + std::to_string(c.radius());
    if (!c.bins.empty()) key += " bins=" + layout(c.bins);
    for (std::size_t i = 0; i < c.stats.size(); ++i)
        key += "; a" + std::to_string(i) + " = " + c.stats[i].combine + "(" + expr(c.stats[i].map) + ")";
    // Each class writes its output from either the per-element map or the per-row/column epilogue.
    key += "; " + resolve(c.output) + " = " + expr(c.map.empty() ? c.epilogue : c.map);
    if (!c.border.empty()) key += "; border = " + expr(c.border);
    if (!c.pad.empty()) key += "; pad = " + c.pad;
    std::vector<std::string> inputs;
    for (const auto& [name, ix] : c.inputs) inputs.push_back(resolve(name) + ":" + indexing_name(ix));
    std::sort(inputs.begin(), inputs.end());
    if (!inputs.empty()) {
        key += "; in";
        for (std::size_t i = 0; i < inputs.size(); ++i) key += (i ? ", " : " ") + inputs[i];
    }
    return key;
}

std::string task_meaning(const Task& task, Backend backend) {
    try {
        std::optional<Computation> c = task_computation(task, backend);
        return c ? computation_meaning(task, *c) : std::string();
    } catch (const Error&) {
        return {};  // a reference the recogniser cannot read: the meaning stays unknown
    }
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
    std::map<std::pair<std::string, Backend>, std::string> meanings;
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
        auto m = meanings.find({e.task, e.backend});
        if (m == meanings.end()) m = meanings.emplace(std::pair{e.task, e.backend}, task_meaning(task, e.backend)).first;
        std::string source = read_text_file(e.source_path(task, seed_json.parent_path()));
        if (source.empty()) continue;
        Pattern p;
        p.name = e.name;
        p.op_class = task.op_class;
        p.backend = std::string(to_string(e.backend));
        p.family = e.family;
        p.bound_tags = e.bound_tags;
        p.signature = entry_signature(task, e.backend);
        p.meaning = m->second;
        p.description = e.description;
        p.source = source;
        p.provenance = "seed";
        std::optional<Pattern> old = library.pattern_by_name(p.name);
        if (old && old->source == p.source && old->signature == p.signature && old->op_class == p.op_class &&
            old->meaning == p.meaning)
            continue;
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
    // adapted to this one when its parameter types agree position by position. By meaning:
    // a pattern known to compute another function is left out, one computing the task's own
    // comes first.
    PatternQuery q;
    q.op_class = task.op_class;
    q.backend = std::string(to_string(backend));
    q.limit = 0;
    const std::string signature = entry_signature(task, backend);
    Retrieval r;
    r.meaning = task_meaning(task, backend);
    struct Fit {
        const Pattern* pattern;
        std::string source;
        bool adapted;
    };
    std::vector<Fit> same, unknown;  // each best evidence first, as the library returns them
    const std::vector<Pattern> found = library.patterns(q);
    for (const Pattern& p : found) {
        Fit fit{&p, p.source, false};
        if (normalize_signature(p.signature) != normalize_signature(signature)) {
            std::optional<std::string> a = adapt_to_signature(p.source, p.signature, signature);
            if (!a) continue;
            fit.source = std::move(*a);
            fit.adapted = true;
        }
        if (r.meaning.empty() || p.meaning.empty()) unknown.push_back(std::move(fit));
        else if (p.meaning == r.meaning) same.push_back(std::move(fit));
        else ++r.other_meaning;
    }
    std::string ranked;
    for (const std::vector<Fit>* group : {&same, &unknown})
        for (const Fit& f : *group) {
            if (limit > 0 && static_cast<int>(r.patterns.size()) >= limit) break;
            const Pattern& p = *f.pattern;
            PatternSource ps;
            ps.name = p.name;
            ps.family = p.family;
            ps.source = f.source;
            if (f.adapted) r.adapted.insert(f.source);
            ps.bound_tags = p.bound_tags;
            ps.description = p.description;
            r.ids[f.source] = p.id;
            r.patterns.push_back(std::move(ps));
            if (group == &same) ++r.same_meaning;
            ranked += (ranked.empty() ? "" : ", ") + p.name + " " + std::to_string(p.successes) + "/" +
                      std::to_string(p.applications) + (f.adapted ? " (adapted to the entry point)" : "");
        }
    if (r.patterns.empty())
        r.summary = "no library pattern matches task " + task.name + " (op class " + task.op_class + ", " +
                    std::string(to_string(backend)) +
                    " backend, entry point with the same parameter types, same computation where known): starting from the "
                    "task's own seeds";
    else
        r.summary = std::to_string(r.patterns.size()) + " library pattern(s) for " + task.name +
                    (r.same_meaning > 0 ? ", " + std::to_string(r.same_meaning) + " computing the same function first" : std::string()) +
                    ", best evidence first (successes/uses): " + ranked;
    if (r.other_meaning > 0)
        r.summary += "; " + std::to_string(r.other_meaning) + " left out: they compute another function";
    return r;
}

}  // namespace kf
