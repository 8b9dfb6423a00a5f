// JSON export and import of a whole library (format in docs/library.md). Import checks every
// entry on its own: a bad one is skipped with its reason, the rest are stored.
#include <algorithm>

#include "library_impl.h"

namespace kf {

using namespace library_detail;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "kernel-foundry-library";
constexpr int kFormatVersion = 1;

/** One invalid entry; the message is the reason reported for it. */
struct BadEntry {
    std::string reason;
};

const json* field(const json& o, const char* key) {
    auto it = o.find(key);
    return it == o.end() || it->is_null() ? nullptr : &*it;
}

std::string get_string(const json& o, const char* key, bool required = false) {
    const json* v = field(o, key);
    if (!v) {
        if (required) throw BadEntry{std::string("missing \"") + key + "\""};
        return {};
    }
    if (!v->is_string()) throw BadEntry{std::string("\"") + key + "\" must be a string"};
    if (required && v->get_ref<const std::string&>().empty()) throw BadEntry{std::string("\"") + key + "\" is empty"};
    return v->get<std::string>();
}

std::int64_t get_count(const json& o, const char* key) {
    const json* v = field(o, key);
    if (!v) return 0;
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0)
        throw BadEntry{std::string("\"") + key + "\" must be a non-negative integer"};
    return v->get<std::int64_t>();
}

std::vector<std::string> get_strings(const json& o, const char* key) {
    const json* v = field(o, key);
    std::vector<std::string> out;
    if (!v) return out;
    if (!v->is_array()) throw BadEntry{std::string("\"") + key + "\" must be an array of strings"};
    for (const auto& e : *v) {
        if (!e.is_string()) throw BadEntry{std::string("\"") + key + "\" must be an array of strings"};
        out.push_back(e.get<std::string>());
    }
    return out;
}

const json& get_object(const json& o, const char* key) {
    static const json empty = json::object();
    const json* v = field(o, key);
    if (!v) return empty;
    if (!v->is_object()) throw BadEntry{std::string("\"") + key + "\" must be an object"};
    return *v;
}

Pattern pattern_from_json(const json& o) {
    if (!o.is_object()) throw BadEntry{"not an object"};
    Pattern p;
    p.name = get_string(o, "name", true);
    p.op_class = get_string(o, "op_class");
    p.backend = get_string(o, "backend", true);
    if (p.backend != "cuda" && p.backend != "host") throw BadEntry{"\"backend\" must be cuda or host"};
    p.family = get_string(o, "family");
    p.bound_tags = get_strings(o, "bound_tags");
    p.signature = get_string(o, "signature");
    p.meaning = get_string(o, "meaning");  // absent from older exports: unknown
    p.description = get_string(o, "description");
    p.source = get_string(o, "source", true);
    p.provenance = get_string(o, "provenance");
    if (p.provenance.empty()) p.provenance = "user";
    p.status = get_string(o, "status");
    if (p.status.empty()) p.status = "active";
    if (p.status != "active" && p.status != "broken") throw BadEntry{"\"status\" must be active or broken"};
    p.broken_reason = get_string(o, "broken_reason");
    p.applications = get_count(o, "applications");
    p.successes = get_count(o, "successes");
    if (p.successes > p.applications) throw BadEntry{"more successes than applications"};
    p.created = get_string(o, "created");
    return p;
}

Insight insight_from_json(const json& o) {
    if (!o.is_object()) throw BadEntry{"not an object"};
    Insight in;
    const json& c = get_object(o, "condition");
    in.condition = {get_string(c, "op_class"), get_string(c, "bound"), get_string(c, "status"),
                    get_string(c, "expert")};
    in.action = get_string(o, "action", true);
    in.expert = get_string(o, "expert");
    const json& e = get_object(o, "evidence");
    in.evidence.applications = get_count(e, "applications");
    in.evidence.successes = get_count(e, "successes");
    in.evidence.failures = get_count(e, "failures");
    if (in.evidence.successes > in.evidence.applications) throw BadEntry{"more successes than applications"};
    if (const json* g = field(e, "gains")) {
        if (!g->is_array()) throw BadEntry{"\"evidence.gains\" must be an array of positive numbers"};
        for (const auto& x : *g) {
            if (!x.is_number() || x.get<double>() <= 0)
                throw BadEntry{"\"evidence.gains\" must be an array of positive numbers"};
            in.evidence.gains.push_back(x.get<double>());
        }
    }
    const json& pv = get_object(o, "provenance");
    in.provenance.run_ids = get_strings(pv, "run_ids");
    in.provenance.candidate_ids = get_strings(pv, "candidate_ids");
    in.status = get_string(o, "status");
    if (in.status.empty()) in.status = "proposed";
    if (in.status != "proposed" && in.status != "approved" && in.status != "rejected")
        throw BadEntry{"\"status\" must be proposed, approved or rejected"};
    in.created = get_string(o, "created");
    in.updated = get_string(o, "updated");
    return in;
}

Improvement improvement_from_json(const json& o) {
    if (!o.is_object()) throw BadEntry{"not an object"};
    Improvement imp;
    imp.op_class = get_string(o, "op_class");
    imp.bound_before = get_string(o, "bound_before");
    imp.status_before = get_string(o, "status_before");
    imp.expert = get_string(o, "expert", true);
    imp.change = get_string(o, "change");
    const json* g = field(o, "gain");
    if (!g || !g->is_number() || g->get<double>() <= 0) throw BadEntry{"\"gain\" must be a positive number"};
    imp.gain = g->get<double>();
    imp.run_id = get_string(o, "run_id");
    imp.candidate_id = get_string(o, "candidate_id");
    const json* s = field(o, "success");
    if (!s || !s->is_boolean()) throw BadEntry{"\"success\" must be true or false"};
    imp.success = s->get<bool>();
    return imp;
}

}  // namespace

json ExperienceLibrary::export_json() const {
    PatternQuery pq;
    pq.status.clear();
    pq.limit = 0;
    auto ps = patterns(pq);
    std::sort(ps.begin(), ps.end(), [](const Pattern& a, const Pattern& b) { return a.id < b.id; });
    InsightQuery iq;
    iq.limit = 0;
    auto is = insights(iq);
    std::sort(is.begin(), is.end(), [](const Insight& a, const Insight& b) { return a.id < b.id; });

    json out = {{"format", kFormat}, {"version", kFormatVersion}};
    out["patterns"] = json::array();
    for (const auto& p : ps) {
        auto j = to_json(p);
        j.erase("id");
        out["patterns"].push_back(std::move(j));
    }
    out["insights"] = json::array();
    for (const auto& in : is) {
        auto j = to_json(in);
        j.erase("id");
        j.erase("weight");  // derived
        j["evidence"].erase("median_gain");
        out["insights"].push_back(std::move(j));
    }
    out["improvements"] = json::array();
    for (const auto& imp : improvements()) out["improvements"].push_back(to_json(imp));
    return out;
}

ImportReport ExperienceLibrary::import_json(const json& j) {
    if (!j.is_object()) throw LibraryError("library import: not a JSON object");
    if (j.value("format", std::string()) != kFormat)
        throw LibraryError(std::string("library import: \"format\" is not \"") + kFormat + "\"");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() < 1)
        throw LibraryError("library import: \"version\" must be a positive integer");
    if (j["version"].get<int>() > kFormatVersion)
        throw LibraryError("library import: format version " + std::to_string(j["version"].get<int>()) +
                           " is newer than this build reads (" + std::to_string(kFormatVersion) + ")");

    ImportReport report;
    auto& db = *impl_->db;
    sql::Transaction tx(db);
    auto each = [&](const char* section, auto&& store) {
        if (!j.contains(section)) return;
        const json& arr = j[section];
        if (!arr.is_array()) {
            report.skipped.push_back(std::string(section) + ": not an array");
            return;
        }
        for (std::size_t i = 0; i < arr.size(); ++i) {
            try {
                store(arr[i]);
            } catch (const BadEntry& e) {
                report.skipped.push_back(std::string(section) + "[" + std::to_string(i) + "]: " + e.reason);
            }
        }
    };
    each("patterns", [&](const json& o) {
        add_pattern(pattern_from_json(o));
        ++report.patterns_imported;
    });
    each("insights", [&](const json& o) {
        Insight in = insight_from_json(o);
        auto s = db.prepare(
            "SELECT id FROM insights WHERE op_class = ? AND bound = ? AND diag_status = ? "
            "AND cond_expert = ? AND action = ?");
        s.bind(1, in.condition.op_class)
            .bind(2, in.condition.bound)
            .bind(3, in.condition.status)
            .bind(4, in.condition.expert)
            .bind(5, in.action);
        if (s.step())
            throw BadEntry{"the same insight is already present (id " + std::to_string(s.column_int(0)) + ")"};
        store_insight(db, in);
        ++report.insights_imported;
    });
    each("improvements", [&](const json& o) {
        Improvement imp = improvement_from_json(o);
        insert_improvement(db, imp);
        ++report.improvements_imported;
    });
    tx.commit();
    return report;
}

}  // namespace kf
