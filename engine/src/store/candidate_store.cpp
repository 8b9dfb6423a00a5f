// ProjectStore: candidates, their lineage and their evaluations.
#include <set>

#include "kf/sha256.h"
#include "store_impl.h"

namespace kf {

namespace {

const char* kCandidateColumns =
    "c.id, c.run_id, c.task, c.source, c.content_hash, c.expert, c.island, c.generation, c.rationale, c.author, "
    "c.tunables, c.parents, c.created, c.family";
constexpr int kCandidateColumnCount = 14;

const char* kEvaluationColumns = "e.id, e.candidate_id, e.status, e.fitness, e.diagnosis, e.created, e.ran_on";

// Reads the candidate columns starting at column `at`.
CandidateRecord read_candidate(store::Statement& s, const ProjectStore::Impl& impl, int at = 0) {
    CandidateRecord c;
    c.id = s.column_int(at + 0);
    c.run_id = s.column_int(at + 1);
    c.task = s.column_text(at + 2);
    c.source = s.column_text(at + 3);
    c.content_hash = s.column_text(at + 4);
    c.expert = s.column_text(at + 5);
    c.island = static_cast<int>(s.column_int(at + 6));
    c.generation = static_cast<int>(s.column_int(at + 7));
    c.rationale = s.column_text(at + 8);
    c.author = s.column_text(at + 9);
    c.tunables = store::parse_json(impl, s.column_text(at + 10), "candidates.tunables");
    const nlohmann::json parents = store::parse_json(impl, s.column_text(at + 11), "candidates.parents");
    if (parents.is_array())
        for (const auto& p : parents)
            if (p.is_number_integer()) c.parents.push_back(p.get<std::int64_t>());
    c.created = s.column_text(at + 12);
    c.family = s.column_text(at + 13);
    return c;
}

EvaluationRecord read_evaluation(store::Statement& s, const ProjectStore::Impl& impl, int at = 0) {
    EvaluationRecord e;
    e.id = s.column_int(at + 0);
    e.candidate_id = s.column_int(at + 1);
    e.status = s.column_text(at + 2);
    e.fitness = s.column_double(at + 3);
    e.diagnosis = store::parse_json(impl, s.column_text(at + 4), "evaluations.diagnosis");
    e.created = s.column_text(at + 5);
    e.ran_on = s.column_text(at + 6);
    return e;
}

std::string lineage_kind(const CandidateRecord& c) {
    if (c.expert == "migration") return "migration";
    if (c.parents.empty()) return "seed";
    if (c.parents.size() >= 2) return "crossover";
    return "mutation";
}

}  // namespace

std::int64_t ProjectStore::add_candidate(CandidateRecord c) {
    if (c.author != "engine" && c.author != "user")
        throw StoreError(impl_->db.file().string(), "unknown candidate author '" + c.author + "' (engine or user)");
    if (c.content_hash.empty()) c.content_hash = sha256_hex(c.source);
    if (c.created.empty()) c.created = store::iso_now();
    store::WriteScope scope(*impl_);
    store::Statement s(impl_->db,
                       "INSERT INTO candidates (run_id, task, source, content_hash, expert, island, generation, "
                       "rationale, author, tunables, parents, created, family) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    s.bind(1, c.run_id).bind(2, c.task).bind(3, c.source).bind(4, c.content_hash).bind(5, c.expert);
    s.bind(6, c.island).bind(7, c.generation).bind(8, c.rationale).bind(9, c.author);
    s.bind(10, c.tunables.dump()).bind(11, nlohmann::json(c.parents).dump()).bind(12, c.created).bind(13, c.family);
    s.run();
    const std::int64_t id = impl_->db.last_insert_id();

    const std::string kind = lineage_kind(c);
    store::Statement l(impl_->db, "INSERT INTO lineage (child_id, parent_id, position, kind) VALUES (?1, ?2, ?3, ?4)");
    if (c.parents.empty()) l.bind(1, id).bind_null(2).bind(3, 0).bind(4, kind).run();
    for (std::size_t i = 0; i < c.parents.size(); ++i) {
        l.reset();
        l.bind(1, id).bind(2, c.parents[i]).bind(3, static_cast<std::int64_t>(i)).bind(4, kind).run();
    }
    scope.done();
    return id;
}

std::vector<CandidateRecord> ProjectStore::candidates(std::int64_t run) {
    store::Statement s(
        impl_->db, std::string("SELECT ") + kCandidateColumns + " FROM candidates c WHERE c.run_id = ?1 ORDER BY c.id");
    s.bind(1, run);
    std::vector<CandidateRecord> out;
    while (s.step()) out.push_back(read_candidate(s, *impl_));
    return out;
}

std::optional<CandidateRecord> ProjectStore::candidate(std::int64_t id) {
    store::Statement s(impl_->db, std::string("SELECT ") + kCandidateColumns + " FROM candidates c WHERE c.id = ?1");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_candidate(s, *impl_);
}

std::vector<std::int64_t> ProjectStore::lineage(std::int64_t candidate) {
    std::vector<std::int64_t> chain;
    std::set<std::int64_t> seen;
    store::Statement exists(impl_->db, "SELECT 1 FROM candidates WHERE id = ?1");
    exists.bind(1, candidate);
    if (!exists.step()) return chain;
    for (std::int64_t at = candidate; seen.insert(at).second;) {
        chain.push_back(at);
        store::Statement s(impl_->db,
                           "SELECT parent_id FROM lineage WHERE child_id = ?1 AND parent_id IS NOT NULL "
                           "ORDER BY position LIMIT 1");
        s.bind(1, at);
        if (!s.step()) break;
        at = s.column_int(0);
    }
    return chain;
}

std::vector<std::int64_t> ProjectStore::unevaluated(std::int64_t run) {
    store::Statement s(impl_->db,
                       "SELECT c.id FROM candidates c WHERE c.run_id = ?1 AND NOT EXISTS "
                       "(SELECT 1 FROM evaluations e WHERE e.candidate_id = c.id) ORDER BY c.id");
    s.bind(1, run);
    std::vector<std::int64_t> out;
    while (s.step()) out.push_back(s.column_int(0));
    return out;
}

std::int64_t ProjectStore::add_evaluation(std::int64_t candidate, const Diagnosis& d) {
    nlohmann::json j;
    to_json(j, d);
    store::WriteScope scope(*impl_);
    store::Statement s(impl_->db,
                       "INSERT INTO evaluations (candidate_id, status, fitness, diagnosis, created, ran_on) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    s.bind(1, candidate).bind(2, std::string_view(to_string(d.status))).bind(3, d.fitness());
    s.bind(4, j.dump()).bind(5, store::iso_now()).bind(6, d.ran_on).run();
    const std::int64_t id = impl_->db.last_insert_id();
    scope.done();
    return id;
}

std::vector<EvaluationRecord> ProjectStore::evaluations(std::int64_t run) {
    store::Statement s(impl_->db, std::string("SELECT ") + kEvaluationColumns +
                                      " FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
                                      "WHERE c.run_id = ?1 ORDER BY e.id");
    s.bind(1, run);
    std::vector<EvaluationRecord> out;
    while (s.step()) out.push_back(read_evaluation(s, *impl_));
    return out;
}

std::optional<EvaluationRecord> ProjectStore::evaluation_of(std::int64_t candidate) {
    store::Statement s(impl_->db, std::string("SELECT ") + kEvaluationColumns +
                                      " FROM evaluations e WHERE e.candidate_id = ?1 ORDER BY e.id DESC LIMIT 1");
    s.bind(1, candidate);
    if (!s.step()) return std::nullopt;
    return read_evaluation(s, *impl_);
}

std::optional<std::pair<CandidateRecord, EvaluationRecord>> ProjectStore::best(std::int64_t run) {
    store::Statement s(impl_->db, std::string("SELECT ") + kCandidateColumns + ", " + kEvaluationColumns +
                                      " FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
                                      "WHERE c.run_id = ?1 AND e.status = 'ok' ORDER BY e.fitness DESC, e.id LIMIT 1");
    s.bind(1, run);
    if (!s.step()) return std::nullopt;
    return std::make_pair(read_candidate(s, *impl_), read_evaluation(s, *impl_, kCandidateColumnCount));
}

CandidateRecord user_child(const CandidateRecord& parent, std::string source, std::string rationale) {
    CandidateRecord child;
    child.run_id = parent.run_id;
    child.task = parent.task;
    child.source = std::move(source);
    child.expert = "user";  // the origin word of every kernel the user wrote
    child.author = "user";
    child.rationale = std::move(rationale);
    child.family = parent.family;
    child.island = parent.island;
    child.generation = parent.generation + 1;
    child.tunables = parent.tunables;
    child.parents = {parent.id};
    return child;
}

}  // namespace kf
