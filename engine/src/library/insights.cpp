// Insights and the librarian: improvement records grouped by (op class, bottleneck or
// status, expert) become proposed insights; failing groups lower matching insights' weight.
#include <algorithm>
#include <cstdio>

#include "library_impl.h"
#include "kf/stats.h"

namespace kf {

using namespace library_detail;

namespace {

// Librarian thresholds (docs/library.md, "Librarian").
constexpr int kMinRecords = 3;
constexpr double kMinSuccessRate = 0.5;
constexpr double kMinMedianGain = 1.05;
constexpr int kFailingRecords = 5;
constexpr double kFailingRate = 0.2;
constexpr double kMinWeight = 0.05;

constexpr const char* kInsightColumns =
    "id, op_class, bound, diag_status, cond_expert, action, expert, applications, successes, failures, "
    "gains, run_ids, candidate_ids, status, weight, created, updated";

Insight read_insight(const sql::Statement& s) {
    Insight in;
    in.id = s.column_int(0);
    in.condition = {s.column_text(1), s.column_text(2), s.column_text(3), s.column_text(4)};
    in.action = s.column_text(5);
    in.expert = s.column_text(6);
    in.evidence.applications = s.column_int(7);
    in.evidence.successes = s.column_int(8);
    in.evidence.failures = s.column_int(9);
    in.evidence.gains = doubles_from_json_text(s.column_text(10));
    in.provenance.run_ids = strings_from_json_text(s.column_text(11));
    in.provenance.candidate_ids = strings_from_json_text(s.column_text(12));
    in.status = s.column_text(13);
    in.weight = s.column_double(14);
    in.created = s.column_text(15);
    in.updated = s.column_text(16);
    return in;
}

void check_status(const std::string& status) {
    if (status != "proposed" && status != "approved" && status != "rejected")
        throw LibraryError("insight status must be proposed, approved or rejected, not '" + status + "'");
}

/** The records of one librarian group. */
struct Group {
    std::int64_t records = 0, successes = 0;
    std::vector<double> gains;  ///< of the successful records
    std::vector<std::string> run_ids, candidate_ids;
    double rate() const { return records ? double(successes) / double(records) : 0.0; }
};

void add_unique(std::vector<std::string>& v, const std::string& s) {
    if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

Group load_group(sql::Database& db, const Improvement& imp) {
    auto s = db.prepare(
        "SELECT success, gain, run_id, candidate_id FROM improvements WHERE op_class = ?1 AND expert = ?2 "
        "AND bound_before = ?3 AND (?3 <> '' OR status_before = ?4) ORDER BY id");
    s.bind(1, imp.op_class).bind(2, imp.expert).bind(3, imp.bound_before).bind(4, imp.status_before);
    Group g;
    while (s.step()) {
        ++g.records;
        if (s.column_int(0) == 0) continue;
        ++g.successes;
        g.gains.push_back(s.column_double(1));
        add_unique(g.run_ids, s.column_text(2));
        add_unique(g.candidate_ids, s.column_text(3));
    }
    return g;
}

std::string format_gain(double g) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", g);
    return buf;
}

std::optional<Insight> find_insight(sql::Database& db, const InsightCondition& c) {
    auto s = db.prepare(std::string("SELECT ") + kInsightColumns +
                        " FROM insights WHERE op_class = ? AND bound = ? AND diag_status = ? AND cond_expert = ? "
                        "ORDER BY id LIMIT 1");
    s.bind(1, c.op_class).bind(2, c.bound).bind(3, c.status).bind(4, c.expert);
    if (!s.step()) return std::nullopt;
    return read_insight(s);
}

}  // namespace

double InsightEvidence::median_gain() const {
    return gains.empty() ? 1.0 : util::median(gains);
}

double insight_weight(const InsightEvidence& e) {
    const double rate = double(e.successes + 1) / double(e.applications + e.failures + 2);
    return std::max(kMinWeight, rate * e.median_gain());
}

namespace library_detail {

std::int64_t store_insight(sql::Database& db, const Insight& in) {
    check_status(in.status);
    const auto now = now_iso();
    const std::string created = in.created.empty() ? now : in.created;
    const std::string updated = in.updated.empty() ? now : in.updated;
    std::string sql =
        in.id == 0 ? "INSERT INTO insights (op_class, bound, diag_status, cond_expert, action, expert, applications, "
                     "successes, failures, gains, run_ids, candidate_ids, status, weight, created, updated) VALUES "
                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
                   : "UPDATE insights SET op_class = ?1, bound = ?2, diag_status = ?3, cond_expert = ?4, action = ?5, "
                     "expert = ?6, applications = ?7, successes = ?8, failures = ?9, gains = ?10, run_ids = ?11, "
                     "candidate_ids = ?12, status = ?13, weight = ?14, updated = ?16 WHERE id = ?17";
    auto s = db.prepare(sql);
    s.bind(1, in.condition.op_class)
        .bind(2, in.condition.bound)
        .bind(3, in.condition.status)
        .bind(4, in.condition.expert)
        .bind(5, in.action)
        .bind(6, in.expert)
        .bind(7, in.evidence.applications)
        .bind(8, in.evidence.successes)
        .bind(9, in.evidence.failures)
        .bind(10, to_json_text(in.evidence.gains))
        .bind(11, to_json_text(in.provenance.run_ids))
        .bind(12, to_json_text(in.provenance.candidate_ids))
        .bind(13, in.status)
        .bind(14, insight_weight(in.evidence));
    if (in.id == 0) s.bind(15, created);
    s.bind(16, updated);
    if (in.id != 0) s.bind(17, in.id);
    s.run();
    return in.id == 0 ? db.last_insert_id() : in.id;
}

}  // namespace library_detail

void ExperienceLibrary::record_improvement(const Improvement& imp) {
    auto& db = *impl_->db;
    sql::Transaction tx(db);
    insert_improvement(db, imp);

    const Group g = load_group(db, imp);
    const InsightCondition key{imp.op_class, imp.bound_before,
                               imp.bound_before.empty() ? imp.status_before : std::string(), imp.expert};
    auto own = find_insight(db, key);
    const double median = InsightEvidence{0, 0, g.gains, 0}.median_gain();
    const bool helpful = g.records >= kMinRecords && g.rate() >= kMinSuccessRate && median > kMinMedianGain;
    if (own || helpful) {
        Insight in = own.value_or(Insight{});
        if (!own) {
            in.condition = key;
            in.expert = imp.expert;
            const std::string& when = key.bound.empty() ? key.status : key.bound;
            in.action = "when " + imp.op_class + " is " + when + ", the " + imp.expert +
                        " expert helped: median gain " + format_gain(median);
        }
        // Evidence always tracks the group; the status (a user's decision) is left alone.
        in.evidence.applications = g.records;
        in.evidence.successes = g.successes;
        in.evidence.gains = g.gains;
        in.provenance.run_ids = g.run_ids;
        in.provenance.candidate_ids = g.candidate_ids;
        in.updated.clear();
        store_insight(db, in);
    }
    if (g.records >= kFailingRecords && g.rate() < kFailingRate) {
        // Other insights whose condition covers this group count the new record against them.
        auto s = db.prepare(
            "SELECT id FROM insights WHERE op_class IN ('', ?1) AND cond_expert IN ('', ?2) "
            "AND bound IN ('', ?3) AND diag_status IN ('', ?4) "
            "AND NOT (op_class = ?1 AND cond_expert = ?2 AND bound = ?3 AND diag_status = ?4)");
        s.bind(1, key.op_class).bind(2, key.expert).bind(3, key.bound).bind(4, key.status);
        std::vector<std::int64_t> ids;
        while (s.step()) ids.push_back(s.column_int(0));
        for (auto id : ids) {
            auto in = insight(id);
            ++in->evidence.failures;
            in->updated.clear();
            store_insight(db, *in);
        }
    }
    tx.commit();
}

std::vector<Improvement> ExperienceLibrary::improvements() const {
    auto s = impl_->db->prepare(
        "SELECT op_class, bound_before, status_before, expert, change, gain, run_id, "
        "candidate_id, success FROM improvements ORDER BY id");
    std::vector<Improvement> out;
    while (s.step())
        out.push_back({s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3), s.column_text(4),
                       s.column_double(5), s.column_text(6), s.column_text(7), s.column_int(8) != 0});
    return out;
}

std::int64_t ExperienceLibrary::add_insight(const Insight& in) {
    if (in.action.empty()) throw LibraryError("insight: the action is empty");
    Insight copy = in;
    copy.id = 0;
    return store_insight(*impl_->db, copy);
}

std::vector<Insight> ExperienceLibrary::insights(const InsightQuery& q) const {
    auto s =
        impl_->db->prepare(std::string("SELECT ") + kInsightColumns +
                           " FROM insights WHERE (?1 = '' OR status = ?1) AND (?2 = '' OR op_class = ?2) "
                           "AND (?3 = '' OR bound = ?3) AND (?4 = '' OR cond_expert = ?4 OR expert = ?4) "
                           "AND (?5 = '' OR instr(lower(action), lower(?5)) > 0) ORDER BY weight DESC, id LIMIT ?6");
    s.bind(1, q.status).bind(2, q.op_class).bind(3, q.bound).bind(4, q.expert).bind(5, q.text);
    s.bind(6, q.limit > 0 ? q.limit : -1);
    std::vector<Insight> out;
    while (s.step()) out.push_back(read_insight(s));
    return out;
}

std::optional<Insight> ExperienceLibrary::insight(std::int64_t id) const {
    auto s = impl_->db->prepare(std::string("SELECT ") + kInsightColumns + " FROM insights WHERE id = ?");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_insight(s);
}

void ExperienceLibrary::set_insight_status(std::int64_t id, const std::string& status) {
    check_status(status);
    auto& db = *impl_->db;
    db.prepare("UPDATE insights SET status = ?, updated = ? WHERE id = ?")
        .bind(1, status)
        .bind(2, now_iso())
        .bind(3, id)
        .run();
    if (db.changes() == 0) throw LibraryError("no insight with id " + std::to_string(id));
}

void ExperienceLibrary::update_insight_action(std::int64_t id, const std::string& action) {
    if (action.empty()) throw LibraryError("insight " + std::to_string(id) + ": the action is empty");
    auto& db = *impl_->db;
    db.prepare("UPDATE insights SET action = ?, updated = ? WHERE id = ?")
        .bind(1, action)
        .bind(2, now_iso())
        .bind(3, id)
        .run();
    if (db.changes() == 0) throw LibraryError("no insight with id " + std::to_string(id));
}

void ExperienceLibrary::delete_insight(std::int64_t id) {
    auto& db = *impl_->db;
    db.prepare("DELETE FROM insights WHERE id = ?").bind(1, id).run();
    if (db.changes() == 0) throw LibraryError("no insight with id " + std::to_string(id));
}

nlohmann::json to_json(const Insight& in) {
    return {{"id", in.id},
            {"condition",
             {{"op_class", in.condition.op_class},
              {"bound", in.condition.bound},
              {"status", in.condition.status},
              {"expert", in.condition.expert}}},
            {"action", in.action},
            {"expert", in.expert},
            {"evidence",
             {{"applications", in.evidence.applications},
              {"successes", in.evidence.successes},
              {"failures", in.evidence.failures},
              {"gains", in.evidence.gains},
              {"median_gain", in.evidence.median_gain()}}},
            {"provenance", {{"run_ids", in.provenance.run_ids}, {"candidate_ids", in.provenance.candidate_ids}}},
            {"status", in.status},
            {"weight", in.weight},
            {"created", in.created},
            {"updated", in.updated}};
}

nlohmann::json to_json(const Improvement& imp) {
    return {{"op_class", imp.op_class},
            {"bound_before", imp.bound_before},
            {"status_before", imp.status_before},
            {"expert", imp.expert},
            {"change", imp.change},
            {"gain", imp.gain},
            {"run_id", imp.run_id},
            {"candidate_id", imp.candidate_id},
            {"success", imp.success}};
}

}  // namespace kf
