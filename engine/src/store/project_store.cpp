// ProjectStore: creating and opening a project folder, transactions, runs, events and the
// per-run search state. Candidates and evaluations live in candidate_store.cpp.
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>

#include <sqlite3.h>

#include "schema.h"
#include "store_impl.h"

namespace fs = std::filesystem;

namespace kf {

namespace store {

std::string iso_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[80];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

void begin(ProjectStore::Impl& impl) {
    impl.db.exec(impl.tx_depth == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT kf_nested");
    ++impl.tx_depth;
}

void commit(ProjectStore::Impl& impl) {
    --impl.tx_depth;
    try {
        impl.db.exec(impl.tx_depth == 0 ? "COMMIT" : "RELEASE kf_nested");
    } catch (...) {
        // A COMMIT that failed (busy, disk full) leaves the transaction open: end it.
        sqlite3_exec(impl.db.handle(), impl.tx_depth == 0 ? "ROLLBACK" : "ROLLBACK TO kf_nested; RELEASE kf_nested",
                     nullptr, nullptr, nullptr);
        throw;
    }
}

void rollback(ProjectStore::Impl& impl) noexcept {
    --impl.tx_depth;
    sqlite3_exec(impl.db.handle(), impl.tx_depth == 0 ? "ROLLBACK" : "ROLLBACK TO kf_nested; RELEASE kf_nested",
                 nullptr, nullptr, nullptr);
}

nlohmann::json parse_json(const ProjectStore::Impl& impl, const std::string& text, const char* what) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw StoreError(impl.db.file().string(), std::string("corrupt JSON in ") + what + ": " + e.what());
    }
}

}  // namespace store

namespace {

const char* kProjectFile = "project.kfproj";
const char* kDatabaseFile = "project.db";

std::string read_project_name(const fs::path& file) {
    std::ifstream in(file);
    if (!in) throw StoreError(file.string(), "cannot read the project file");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw StoreError(file.string(), std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("format") || !j["format"].is_number_integer())
        throw StoreError(file.string(), "not a Kernel Foundry project file (no integer \"format\")");
    const int format = j["format"].get<int>();
    if (format > kProjectFileFormat)
        throw StoreError(file.string(), "project format " + std::to_string(format) +
                                            " is newer than this build supports (" +
                                            std::to_string(kProjectFileFormat) + ")");
    if (j.contains("name") && j["name"].is_string()) return j["name"].get<std::string>();
    return file.parent_path().filename().string();
}

void write_project_file(const fs::path& file, const std::string& name) {
    const nlohmann::json j = {{"format", kProjectFileFormat}, {"name", name}, {"created", store::iso_now()}};
    const fs::path tmp = fs::path(file).concat(".tmp");
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << j.dump(2) << "\n";
        out.flush();
        if (!out) throw StoreError(file.string(), "cannot write the project file");
    }
    std::error_code ec;
    fs::rename(tmp, file, ec);
    if (ec) throw StoreError(file.string(), "cannot write the project file: " + ec.message());
}

// Refuses, by reading its first bytes, a file SQLite would reject anyway; the message is clearer.
void check_header(const fs::path& db) {
    std::error_code ec;
    const auto size = fs::file_size(db, ec);
    if (ec) throw StoreError(db.string(), "cannot read: " + ec.message());
    if (size == 0) return;  // an empty database: a create that was interrupted
    char magic[16] = {};
    std::ifstream in(db, std::ios::binary);
    in.read(magic, sizeof magic);
    if (!in || std::memcmp(magic, "SQLite format 3", 16) != 0)
        throw StoreError(db.string(), "not an SQLite database (the file header is wrong)");
    if (size < 512) throw StoreError(db.string(), "the database is truncated (" + std::to_string(size) + " bytes)");
}

// Connection settings; only after the database has been checked, since WAL writes the header.
void configure(store::Database& db) {
    const std::string mode = db.query_text("PRAGMA journal_mode = WAL").value_or("");
    if (mode != "wal")
        throw StoreError(db.file().string(), "cannot switch to WAL mode (journal_mode is '" + mode + "')");
    db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
}

RunRecord read_run(store::Statement& s, const ProjectStore::Impl& impl) {
    RunRecord r;
    r.id = s.column_int(0);
    r.task = s.column_text(1);
    r.config = store::parse_json(impl, s.column_text(2), "runs.config");
    // The schema's CHECK allows only the five spellings.
    r.state = parse_run_state(s.column_text(3)).value_or(RunState::Failed);
    r.stop_reason = s.column_text(4);
    r.created = s.column_text(5);
    r.updated = s.column_text(6);
    return r;
}

const char* kRunColumns = "SELECT id, task, config, state, stop_reason, created, updated FROM runs ";

}  // namespace

ProjectStore::ProjectStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProjectStore::ProjectStore(ProjectStore&&) noexcept = default;
ProjectStore& ProjectStore::operator=(ProjectStore&&) noexcept = default;
ProjectStore::~ProjectStore() = default;

ProjectStore ProjectStore::create(const fs::path& dir_in, const std::string& name) {
    const fs::path dir = fs::absolute(dir_in);
    const fs::path project = dir / kProjectFile, db_path = dir / kDatabaseFile;
    if (fs::exists(project) || fs::exists(db_path))
        throw StoreError(project.string(), "a project already exists in " + dir.string());
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw StoreError(dir.string(), "cannot create the project folder: " + ec.message());
    write_project_file(project, name);
    store::Database db = store::open_database(db_path, true);
    configure(db);
    const int applied = store::migrate(db);
    return ProjectStore(std::unique_ptr<Impl>(new Impl{dir, name, kStoreSchemaVersion, applied, 0, std::move(db)}));
}

namespace {

/** An existing project's folder, name and database, checked before SQLite opens anything. */
struct FoundProject {
    fs::path dir, db_path;
    std::string name;
};

FoundProject find_project(const fs::path& path) {
    FoundProject f;
    f.dir = fs::absolute(path);
    if (f.dir.extension() == ".kfproj" && fs::is_regular_file(f.dir)) f.dir = f.dir.parent_path();
    const fs::path project = f.dir / kProjectFile;
    f.db_path = f.dir / kDatabaseFile;
    if (!fs::is_directory(f.dir)) throw StoreError(f.dir.string(), "no such project folder");
    if (!fs::exists(project)) throw StoreError(f.dir.string(), "no project here (project.kfproj not found)");
    f.name = read_project_name(project);
    if (!fs::exists(f.db_path)) throw StoreError(f.db_path.string(), "the project database is missing");
    check_header(f.db_path);
    return f;
}

}  // namespace

ProjectStore ProjectStore::open(const fs::path& path) {
    const FoundProject found = find_project(path);
    const fs::path& dir = found.dir;
    const std::string& name = found.name;
    store::Database db = store::open_database(found.db_path, false);
    store::check_database(db);
    configure(db);
    const int applied = store::migrate(db);
    const int version = static_cast<int>(db.query_int("PRAGMA user_version"));
    if (applied > 0) store::check_database(db);  // what the migrations built must match too
    return ProjectStore(std::unique_ptr<Impl>(new Impl{dir, name, version, applied, 0, std::move(db)}));
}

ProjectStore ProjectStore::open_read_only(const fs::path& path) {
    const FoundProject found = find_project(path);
    store::Database db = store::open_database(found.db_path, false, /*read_only=*/true);
    const int version = store::check_database(db);
    if (version < kStoreSchemaVersion)
        throw StoreError(found.db_path.string(), "schema version " + std::to_string(version) + " is older than this build's (" +
                                               std::to_string(kStoreSchemaVersion) +
                                               "); open the project for writing once to migrate it");
    return ProjectStore(std::unique_ptr<Impl>(new Impl{found.dir, found.name, version, 0, 0, std::move(db)}));
}

ProjectStore ProjectStore::open_or_create(const fs::path& dir, const std::string& name) {
    if (fs::exists(fs::absolute(dir) / kProjectFile)) return open(dir);
    return create(dir, name);
}

int ProjectStore::schema_version() const {
    return impl_->schema_version;
}
const fs::path& ProjectStore::dir() const {
    return impl_->dir;
}
fs::path ProjectStore::db_path() const {
    return impl_->dir / kDatabaseFile;
}
std::string ProjectStore::name() const {
    return impl_->name;
}
int ProjectStore::migrations_applied() const {
    return impl_->migrations_applied;
}
std::string ProjectStore::journal_mode() {
    return impl_->db.query_text("PRAGMA journal_mode").value_or("");
}

void ProjectStore::begin_transaction() {
    store::begin(*impl_);
}
void ProjectStore::commit_transaction() {
    store::commit(*impl_);
}
void ProjectStore::rollback_transaction() noexcept {
    store::rollback(*impl_);
}

// ---- Runs

std::int64_t ProjectStore::add_run(const std::string& task, const nlohmann::json& config) {
    store::WriteScope scope(*impl_);
    const std::string now = store::iso_now();
    store::Statement s(impl_->db,
                       "INSERT INTO runs (task, config, state, created, updated) VALUES (?1, ?2, 'running', ?3, ?3)");
    s.bind(1, task).bind(2, config.dump()).bind(3, now).run();
    const std::int64_t id = impl_->db.last_insert_id();
    scope.done();
    return id;
}

void ProjectStore::set_run_state(std::int64_t run, RunState state, const std::string& reason) {
    store::WriteScope scope(*impl_);
    store::Statement s(impl_->db, "UPDATE runs SET state = ?1, stop_reason = ?2, updated = ?3 WHERE id = ?4");
    s.bind(1, std::string(to_string(state))).bind(2, reason).bind(3, store::iso_now()).bind(4, run).run();
    if (impl_->db.changes() == 0) throw StoreError(impl_->db.file().string(), "no run " + std::to_string(run));
    scope.done();
}

std::optional<RunRecord> ProjectStore::run(std::int64_t id) {
    store::Statement s(impl_->db, std::string(kRunColumns) + "WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_run(s, *impl_);
}

std::vector<RunRecord> ProjectStore::runs() {
    store::Statement s(impl_->db, std::string(kRunColumns) + "ORDER BY id");
    std::vector<RunRecord> out;
    while (s.step()) out.push_back(read_run(s, *impl_));
    return out;
}

std::optional<RunRecord> ProjectStore::latest_run(const std::string& task) {
    store::Statement s(impl_->db, std::string(kRunColumns) + "WHERE ?1 = '' OR task = ?1 ORDER BY id DESC LIMIT 1");
    s.bind(1, task);
    if (!s.step()) return std::nullopt;
    return read_run(s, *impl_);
}

// ---- Events

std::int64_t ProjectStore::add_event(std::int64_t run, EventKind kind, const nlohmann::json& payload) {
    store::WriteScope scope(*impl_);
    store::Statement s(impl_->db, "INSERT INTO events (run_id, kind, payload, created) VALUES (?1, ?2, ?3, ?4)");
    s.bind(1, run).bind(2, to_string(kind)).bind(3, payload.dump()).bind(4, store::iso_now()).run();
    const std::int64_t id = impl_->db.last_insert_id();
    scope.done();
    return id;
}

std::vector<EventRecord> ProjectStore::events(std::int64_t run, std::int64_t after_id) {
    store::Statement s(
        impl_->db, "SELECT id, run_id, kind, payload, created FROM events WHERE run_id = ?1 AND id > ?2 ORDER BY id");
    s.bind(1, run).bind(2, after_id);
    std::vector<EventRecord> out;
    while (s.step())
        out.push_back({s.column_int(0), s.column_int(1), parse_event_kind(s.column_text(2)).value_or(EventKind::Log),
                       store::parse_json(*impl_, s.column_text(3), "events.payload"), s.column_text(4)});
    return out;
}

// ---- Search state

void ProjectStore::put_state(std::int64_t run, const std::string& key, const nlohmann::json& value) {
    store::WriteScope scope(*impl_);
    store::Statement s(impl_->db,
                       "INSERT INTO run_state (run_id, key, value) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value");
    s.bind(1, run).bind(2, key).bind(3, value.dump()).run();
    scope.done();
}

std::optional<nlohmann::json> ProjectStore::get_state(std::int64_t run, const std::string& key) {
    store::Statement s(impl_->db, "SELECT value FROM run_state WHERE run_id = ?1 AND key = ?2");
    s.bind(1, run).bind(2, key);
    if (!s.step()) return std::nullopt;
    return store::parse_json(*impl_, s.column_text(0), "run_state.value");
}

ProjectView ProjectView::open(const fs::path& dir) {
    return ProjectView(std::make_unique<ProjectStore>(ProjectStore::open_read_only(dir)));
}
ProjectView::ProjectView(std::unique_ptr<ProjectStore> owned) : owned_(std::move(owned)), store_(owned_.get()) {}
ProjectView::ProjectView(ProjectStore& store) : store_(&store) {}
ProjectView::ProjectView(ProjectView&&) noexcept = default;
ProjectView& ProjectView::operator=(ProjectView&&) noexcept = default;
ProjectView::~ProjectView() = default;

const fs::path& ProjectView::dir() const { return store_->dir(); }
std::string ProjectView::name() const { return store_->name(); }
int ProjectView::schema_version() const { return store_->schema_version(); }
std::optional<RunRecord> ProjectView::run(std::int64_t id) const { return store_->run(id); }
std::vector<RunRecord> ProjectView::runs() const { return store_->runs(); }
std::optional<RunRecord> ProjectView::latest_run(const std::string& task) const { return store_->latest_run(task); }
std::vector<CandidateRecord> ProjectView::candidates(std::int64_t run) const { return store_->candidates(run); }
std::optional<CandidateRecord> ProjectView::candidate(std::int64_t id) const { return store_->candidate(id); }
std::vector<std::int64_t> ProjectView::lineage(std::int64_t candidate) const { return store_->lineage(candidate); }
std::vector<EvaluationRecord> ProjectView::evaluations(std::int64_t run) const { return store_->evaluations(run); }
std::optional<EvaluationRecord> ProjectView::evaluation_of(std::int64_t candidate) const {
    return store_->evaluation_of(candidate);
}
std::optional<std::pair<CandidateRecord, EvaluationRecord>> ProjectView::best(std::int64_t run) const {
    return store_->best(run);
}
std::vector<EventRecord> ProjectView::events(std::int64_t run, std::int64_t after_id) const {
    return store_->events(run, after_id);
}
std::optional<nlohmann::json> ProjectView::get_state(std::int64_t run, const std::string& key) const {
    return store_->get_state(run, key);
}

}  // namespace kf
