#include "schema.h"

#include <cstdio>
#include <map>

#include <sqlite3.h>

namespace kf::store {

namespace {

// Migration 1: everything. JSON columns hold text; times are ISO-8601 UTC text.
const char* kMigration1 = R"sql(
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    task        TEXT NOT NULL,
    config      TEXT NOT NULL DEFAULT '{}',
    state       TEXT NOT NULL DEFAULT 'running'
                CHECK (state IN ('running', 'paused', 'done', 'failed', 'stopped')),
    stop_reason TEXT NOT NULL DEFAULT '',
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL
);
CREATE INDEX runs_task ON runs(task);

CREATE TABLE candidates (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task         TEXT NOT NULL,
    source       TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    expert       TEXT NOT NULL DEFAULT '',
    family       TEXT NOT NULL DEFAULT '',
    island       INTEGER NOT NULL DEFAULT 0,
    generation   INTEGER NOT NULL DEFAULT 0,
    rationale    TEXT NOT NULL DEFAULT '',
    author       TEXT NOT NULL DEFAULT 'engine' CHECK (author IN ('engine', 'user')),
    tunables     TEXT NOT NULL DEFAULT '{}',
    parents      TEXT NOT NULL DEFAULT '[]',
    created      TEXT NOT NULL
);
CREATE INDEX candidates_run ON candidates(run_id);
CREATE INDEX candidates_hash ON candidates(content_hash);

CREATE TABLE lineage (
    child_id  INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES candidates(id) ON DELETE CASCADE,
    position  INTEGER NOT NULL DEFAULT 0,
    kind      TEXT NOT NULL CHECK (kind IN ('mutation', 'crossover', 'migration', 'seed'))
);
CREATE INDEX lineage_child ON lineage(child_id);
CREATE INDEX lineage_parent ON lineage(parent_id);

CREATE TABLE evaluations (
    id           INTEGER PRIMARY KEY,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    status       TEXT NOT NULL,
    fitness      REAL NOT NULL DEFAULT 0,
    diagnosis    TEXT NOT NULL,
    created      TEXT NOT NULL
);
CREATE INDEX evaluations_candidate ON evaluations(candidate_id);

CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    kind    TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT 'null',
    created TEXT NOT NULL
);
CREATE INDEX events_run ON events(run_id, id);

CREATE TABLE run_state (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
)sql";

// Migration 2: where each evaluation ran (docs/cluster.md): the host name of a local worker,
// "slurm:<job>@<node>" for a worker that ran as a Slurm job; '' for evaluations recorded before.
const char* kMigration2 = R"sql(
ALTER TABLE evaluations ADD COLUMN ran_on TEXT NOT NULL DEFAULT '';
)sql";

// What a schema looks like: every table and index by name, with its columns (tables) or
// its table (indexes). Compared by name and shape, not by SQL text.
using Shape = std::map<std::string, std::vector<std::string>>;

Shape shape_of(Database& db) {
    Shape shape;
    Statement objects(db,
                      "SELECT type, name, tbl_name FROM sqlite_master "
                      "WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
    while (objects.step()) {
        const std::string type = objects.column_text(0), name = objects.column_text(1);
        std::vector<std::string>& entry = shape[type + " " + name];
        if (type == "index") {
            entry.push_back("on " + objects.column_text(2));
            Statement cols(db, "SELECT name FROM pragma_index_info(?1) ORDER BY seqno");
            cols.bind(1, name);
            while (cols.step()) entry.push_back(cols.column_text(0));
        } else if (type == "table") {
            Statement cols(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid");
            cols.bind(1, name);
            while (cols.step())
                entry.push_back(cols.column_text(0) + " " + cols.column_text(1) + " " + cols.column_text(2) + " " +
                                cols.column_text(3));
        }
    }
    return shape;
}

// The shape a database at `version` must have, built by running the migrations in memory.
Shape expected_shape(int version) {
    Database mem = open_database(":memory:", true);
    for (int v = 1; v <= version; ++v) mem.exec(migrations()[static_cast<std::size_t>(v - 1)]);
    return shape_of(mem);
}

std::string describe_difference(const Shape& have, const Shape& want) {
    for (const char* kind : {"table ", "index "})  // a missing table before its indexes
        for (const auto& [name, cols] : want) {
            if (name.rfind(kind, 0) != 0) continue;
            auto it = have.find(name);
            if (it == have.end()) return "missing " + name;
            if (it->second != cols) return name + " has other columns than expected";
        }
    for (const auto& [name, cols] : have)
        if (!want.count(name)) return "unexpected " + name;
    return {};
}

}  // namespace

const std::vector<std::string>& migrations() {
    static const std::vector<std::string> list = {kMigration1, kMigration2};
    return list;
}

namespace {

[[noreturn]] void raise_store_error(const std::string& file, const std::string& message) {
    throw StoreError(file, message);
}

}  // namespace

Database open_database(const std::filesystem::path& file, bool create, bool read_only) {
    std::error_code ec;
    if (std::filesystem::is_symlink(file, ec))
        throw StoreError(file.string(),
                         "the database is a symbolic link; open the project where the file really is "
                         "(SQLite keeps the journal beside the name it was opened with)");
    const sql::OpenMode mode = read_only ? sql::OpenMode::ReadOnly
                               : create  ? sql::OpenMode::ReadWriteCreate
                                         : sql::OpenMode::ReadWrite;
    return Database(file, mode, raise_store_error,
                    /*follow_links=*/false);
}

int check_database(Database& db) {
    std::int64_t app_id = 0, version = 0, objects = 0;
    try {
        app_id = db.query_int("PRAGMA application_id");
        version = db.query_int("PRAGMA user_version");
        objects = db.query_int("SELECT count(*) FROM sqlite_master");
    } catch (const StoreError&) {
        throw StoreError(db.file().string(),
                         std::string("cannot read the database, it is damaged or not a database (") +
                             sqlite3_errmsg(db.handle()) + ")");
    }
    if (app_id == 0 && version == 0 && objects == 0) return 0;  // empty: an interrupted create
    if (app_id != kStoreApplicationId) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "0x%08llX", static_cast<unsigned long long>(app_id & 0xFFFFFFFF));
        throw StoreError(db.file().string(), std::string("not a Kernel Foundry project database (application_id ") +
                                                 buf + ", expected 0x4B46444E)");
    }
    const int known = static_cast<int>(migrations().size());
    if (version > known)
        throw StoreError(db.file().string(), "schema version " + std::to_string(version) +
                                                 " is newer than this build supports (" + std::to_string(known) +
                                                 "); open it with a newer Kernel Foundry");
    if (version < 0) throw StoreError(db.file().string(), "invalid schema version " + std::to_string(version));
    std::string check = db.query_text("PRAGMA quick_check").value_or("no result");
    if (check != "ok") {
        const std::string banner = "*** in database main ***\n";
        if (check.rfind(banner, 0) == 0) check.erase(0, banner.size());
        for (char& ch : check)
            if (ch == '\n') ch = ' ';
        if (check.size() > 200) check = check.substr(0, 200) + "...";
        throw StoreError(db.file().string(), "the database is corrupt (integrity check: " + check + ")");
    }
    const std::string diff = describe_difference(shape_of(db), expected_shape(static_cast<int>(version)));
    if (!diff.empty())
        throw StoreError(db.file().string(), "schema does not match version " + std::to_string(version) + ": " + diff);
    return static_cast<int>(version);
}

int migrate(Database& db) {
    int applied = 0;
    const int known = static_cast<int>(migrations().size());
    for (int v = static_cast<int>(db.query_int("PRAGMA user_version")) + 1; v <= known; ++v) {
        db.exec("BEGIN IMMEDIATE");
        try {
            // Re-read inside the write lock: another process may have migrated meanwhile.
            if (db.query_int("PRAGMA user_version") >= v) {
                db.exec("COMMIT");
                continue;
            }
            if (v == 1) db.exec("PRAGMA application_id = " + std::to_string(kStoreApplicationId));
            db.exec(migrations()[static_cast<std::size_t>(v - 1)]);
            db.exec("PRAGMA user_version = " + std::to_string(v));
            db.exec("COMMIT");
        } catch (const StoreError& e) {
            sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
            throw StoreError(db.file().string(),
                             "migration to schema version " + std::to_string(v) + " failed: " + e.reason());
        }
        ++applied;
    }
    return applied;
}

}  // namespace kf::store
