// Patterns: upsert by name, retrieval by filters and full-text search ranked by evidence.
#include <cctype>

#include "kf/task.h"
#include "library_impl.h"

namespace kf {

using namespace library_detail;

namespace {

constexpr const char* kPatternColumns =
    "p.id, p.name, p.op_class, p.backend, p.family, p.bound_tags, p.signature, p.description, "
    "p.source, p.provenance, p.status, p.broken_reason, p.applications, p.successes, p.created, p.meaning";

Pattern read_pattern(const sql::Statement& s) {
    Pattern p;
    p.id = s.column_int(0);
    p.name = s.column_text(1);
    p.op_class = s.column_text(2);
    p.backend = s.column_text(3);
    p.family = s.column_text(4);
    p.bound_tags = strings_from_json_text(s.column_text(5));
    p.signature = s.column_text(6);
    p.description = s.column_text(7);
    p.source = s.column_text(8);
    p.provenance = s.column_text(9);
    p.status = s.column_text(10);
    p.broken_reason = s.column_text(11);
    p.applications = s.column_int(12);
    p.successes = s.column_int(13);
    p.created = s.column_text(14);
    p.meaning = s.column_text(15);
    return p;
}

/**
 * Free text as an FTS5 query: each word (letters, digits, '_') quoted, all required. Quoting
 * keeps user input such as "warp-per-row" or "a AND" from being read as query syntax.
 */
std::string fts_query(const std::string& text) {
    std::string out, word;
    auto flush = [&] {
        if (word.empty()) return;
        if (!out.empty()) out += ' ';
        out += '"' + word + '"';
        word.clear();
    };
    for (char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80))
            word += c;
        else
            flush();
    }
    flush();
    return out;
}

void index_pattern(sql::Database& db, std::int64_t id, const Pattern& p) {
    db.prepare("DELETE FROM pattern_fts WHERE rowid = ?").bind(1, id).run();
    std::string tags;
    for (const auto& t : p.bound_tags) tags += t + ' ';
    db.prepare(
          "INSERT INTO pattern_fts (rowid, name, description, family, tags, source) "
          "VALUES (?, ?, ?, ?, ?, ?)")
        .bind(1, id)
        .bind(2, p.name)
        .bind(3, p.description)
        .bind(4, p.family)
        .bind(5, tags)
        .bind(6, p.source)
        .run();
}

void validate(const Pattern& p) {
    if (p.name.empty()) throw LibraryError("pattern: the name is empty");
    if (p.backend != "cuda" && p.backend != "host")
        throw LibraryError("pattern " + p.name + ": backend must be cuda or host, not '" + p.backend + "'");
    if (p.status != "active" && p.status != "broken")
        throw LibraryError("pattern " + p.name + ": status must be active or broken, not '" + p.status + "'");
}

}  // namespace

std::int64_t ExperienceLibrary::add_pattern(const Pattern& p) {
    validate(p);
    auto& db = *impl_->db;
    sql::Transaction tx(db);
    db.prepare(
          "INSERT INTO patterns (name, op_class, backend, family, bound_tags, signature, signature_key, "
          "description, source, provenance, status, broken_reason, applications, successes, created, meaning) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
          "ON CONFLICT (name) DO UPDATE SET op_class = ?2, backend = ?3, family = ?4, bound_tags = ?5, "
          "signature = ?6, signature_key = ?7, description = ?8, source = ?9, provenance = ?10, "
          "status = ?11, broken_reason = ?12, applications = ?13, successes = ?14, meaning = ?16")
        .bind(1, p.name)
        .bind(2, p.op_class)
        .bind(3, p.backend)
        .bind(4, p.family)
        .bind(5, to_json_text(p.bound_tags))
        .bind(6, p.signature)
        .bind(7, normalize_signature(p.signature))
        .bind(8, p.description)
        .bind(9, p.source)
        .bind(10, p.provenance)
        .bind(11, p.status)
        .bind(12, p.status == "broken" ? p.broken_reason : std::string())
        .bind(13, p.applications)
        .bind(14, p.successes)
        .bind(15, p.created.empty() ? now_iso() : p.created)
        .bind(16, p.meaning)
        .run();
    auto s = db.prepare("SELECT id FROM patterns WHERE name = ?");
    s.bind(1, p.name);
    s.step();
    const auto id = s.column_int(0);
    index_pattern(db, id, p);
    tx.commit();
    return id;
}

std::vector<Pattern> ExperienceLibrary::patterns(const PatternQuery& q) const {
    const std::string match = fts_query(q.text);
    if (!q.text.empty() && match.empty()) return {};
    std::string sql = "WITH hits AS (";
    sql += match.empty() ? "SELECT NULL AS id, 0.0 AS score WHERE 0"
                         : "SELECT rowid AS id, bm25(pattern_fts) AS score FROM pattern_fts WHERE "
                           "pattern_fts MATCH ?1";
    sql += ") SELECT " + std::string(kPatternColumns) + " FROM patterns p ";
    sql += match.empty() ? "LEFT JOIN hits h ON h.id = p.id " : "JOIN hits h ON h.id = p.id ";
    sql +=
        "WHERE (?2 = '' OR p.op_class = ?2) AND (?3 = '' OR p.backend = ?3) "
        "AND (?4 = '' OR EXISTS (SELECT 1 FROM json_each(p.bound_tags) WHERE value = ?4)) "
        "AND (?5 = '' OR p.signature_key = ?5) AND (?6 = '' OR p.status = ?6) "
        "ORDER BY (p.successes + 1.0) / (p.applications + 2.0) DESC, coalesce(h.score, 0) ASC, p.name "
        "LIMIT ?7";
    auto s = impl_->db->prepare(sql);
    if (!match.empty()) s.bind(1, match);
    s.bind(2, q.op_class)
        .bind(3, q.backend)
        .bind(4, q.bound)
        .bind(5, normalize_signature(q.signature))
        .bind(6, q.status)
        .bind(7, q.limit > 0 ? q.limit : -1);
    std::vector<Pattern> out;
    while (s.step()) out.push_back(read_pattern(s));
    return out;
}

std::optional<Pattern> ExperienceLibrary::pattern(std::int64_t id) const {
    auto s = impl_->db->prepare("SELECT " + std::string(kPatternColumns) + " FROM patterns p WHERE p.id = ?");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_pattern(s);
}

std::optional<Pattern> ExperienceLibrary::pattern_by_name(const std::string& name) const {
    auto s = impl_->db->prepare("SELECT " + std::string(kPatternColumns) + " FROM patterns p WHERE p.name = ?");
    s.bind(1, name);
    if (!s.step()) return std::nullopt;
    return read_pattern(s);
}

void ExperienceLibrary::mark_pattern_broken(std::int64_t id, const std::string& reason) {
    auto& db = *impl_->db;
    db.prepare("UPDATE patterns SET status = 'broken', broken_reason = ? WHERE id = ?")
        .bind(1, reason)
        .bind(2, id)
        .run();
    if (db.changes() == 0) throw LibraryError("no pattern with id " + std::to_string(id));
}

void ExperienceLibrary::record_pattern_use(std::int64_t id, bool success) {
    auto& db = *impl_->db;
    db.prepare("UPDATE patterns SET applications = applications + 1, successes = successes + ? WHERE id = ?")
        .bind(1, success ? 1 : 0)
        .bind(2, id)
        .run();
    if (db.changes() == 0) throw LibraryError("no pattern with id " + std::to_string(id));
}

void ExperienceLibrary::delete_pattern(std::int64_t id) {
    auto& db = *impl_->db;
    sql::Transaction tx(db);
    db.prepare("DELETE FROM patterns WHERE id = ?").bind(1, id).run();
    if (db.changes() == 0) throw LibraryError("no pattern with id " + std::to_string(id));
    db.prepare("DELETE FROM pattern_fts WHERE rowid = ?").bind(1, id).run();
    tx.commit();
}

nlohmann::json to_json(const Pattern& p) {
    return {{"id", p.id},
            {"name", p.name},
            {"op_class", p.op_class},
            {"backend", p.backend},
            {"family", p.family},
            {"bound_tags", p.bound_tags},
            {"signature", p.signature},
            {"meaning", p.meaning},
            {"description", p.description},
            {"source", p.source},
            {"provenance", p.provenance},
            {"status", p.status},
            {"broken_reason", p.broken_reason},
            {"applications", p.applications},
            {"successes", p.successes},
            {"created", p.created}};
}

}  // namespace kf
