// Opening a library file: refusing foreign, corrupt or newer files without touching them,
// then migrating ours through the list below, one PRAGMA user_version step at a time.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>

#include "library_impl.h"

namespace kf {

namespace {

namespace fs = std::filesystem;

/** Migration i takes user_version i to i+1. Never edit a shipped entry; append a new one. */
const std::array<const char*, kLibrarySchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE patterns (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  op_class TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL CHECK (backend IN ('cuda', 'host')),
  family TEXT NOT NULL DEFAULT '',
  bound_tags TEXT NOT NULL DEFAULT '[]',
  signature TEXT NOT NULL DEFAULT '',
  signature_key TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  provenance TEXT NOT NULL DEFAULT 'user',
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'broken')),
  broken_reason TEXT NOT NULL DEFAULT '',
  applications INTEGER NOT NULL DEFAULT 0,
  successes INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL
);
CREATE INDEX patterns_by_class ON patterns (op_class, backend, status);
CREATE VIRTUAL TABLE pattern_fts USING fts5 (name, description, family, tags, source);
CREATE TABLE insights (
  id INTEGER PRIMARY KEY,
  op_class TEXT NOT NULL DEFAULT '',
  bound TEXT NOT NULL DEFAULT '',
  diag_status TEXT NOT NULL DEFAULT '',
  cond_expert TEXT NOT NULL DEFAULT '',
  action TEXT NOT NULL,
  expert TEXT NOT NULL DEFAULT '',
  applications INTEGER NOT NULL DEFAULT 0,
  successes INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  gains TEXT NOT NULL DEFAULT '[]',
  run_ids TEXT NOT NULL DEFAULT '[]',
  candidate_ids TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'approved', 'rejected')),
  weight REAL NOT NULL DEFAULT 0,
  created TEXT NOT NULL,
  updated TEXT NOT NULL
);
CREATE INDEX insights_by_condition ON insights (op_class, bound, diag_status, cond_expert);
CREATE TABLE improvements (
  id INTEGER PRIMARY KEY,
  op_class TEXT NOT NULL DEFAULT '',
  bound_before TEXT NOT NULL DEFAULT '',
  status_before TEXT NOT NULL DEFAULT '',
  expert TEXT NOT NULL DEFAULT '',
  change TEXT NOT NULL DEFAULT '',
  gain REAL NOT NULL,
  run_id TEXT NOT NULL DEFAULT '',
  candidate_id TEXT NOT NULL DEFAULT '',
  success INTEGER NOT NULL,
  created TEXT NOT NULL
);
CREATE INDEX improvements_by_group ON improvements (op_class, bound_before, status_before, expert);
)sql",
    // 1 -> 2: what each pattern computes, independent of names ('' where unknown).
    R"sql(
ALTER TABLE patterns ADD COLUMN meaning TEXT NOT NULL DEFAULT '';
)sql",
};

/**
 * Checks an existing file without writing to it: it starts with the SQLite header, and a
 * read-only connection finds our application id, a schema we know, and intact pages.
 */
void check_existing(const fs::path& file) {
    const std::string where = file.string() + ": ";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) throw LibraryError(where + "not a regular file");
    auto size = fs::file_size(file, ec);
    if (ec) throw LibraryError(where + "cannot read: " + ec.message());
    if (size == 0) return;  // an empty file is a new database
    std::array<unsigned char, 100> header{};
    {
        std::ifstream in(file, std::ios::binary);
        if (!in.read(reinterpret_cast<char*>(header.data()), header.size()))
            throw LibraryError(where + "not a Kernel Foundry library (too short to be a SQLite database)");
    }
    static const char kMagic[] = "SQLite format 3";
    if (!std::equal(kMagic, kMagic + sizeof kMagic, header.begin()))
        throw LibraryError(where + "not a Kernel Foundry library (not a SQLite database)");
    // application_id and user_version come through SQLite rather than from the header bytes:
    // in WAL mode a writer that is still open may hold newer header pages in the -wal file.
    sql::Database probe(file, sql::OpenMode::ReadOnly, library_detail::raise_library_error);
    std::int64_t tables = 0, version = 0, app_id = 0;
    std::string check;
    try {
        app_id = probe.pragma_int("application_id");
        version = probe.pragma_int("user_version");
        auto s = probe.prepare("SELECT count(*) FROM sqlite_master");
        if (s.step()) tables = s.column_int(0);
        auto q = probe.prepare("PRAGMA quick_check(1)");
        if (q.step()) check = q.column_text(0);
    } catch (const LibraryError& e) {
        throw LibraryError(where + "corrupt library (" + e.what() + ")");
    }
    if (app_id != kLibraryApplicationId) {
        if (app_id == 0 && version == 0 && tables == 0) return;  // an empty SQLite database
        throw LibraryError(where + "not a Kernel Foundry library (application_id " + std::to_string(app_id) +
                           ", another program's database)");
    }
    if (version > kLibrarySchemaVersion)
        throw LibraryError(where + "library schema version " + std::to_string(version) +
                           " is newer than this build reads (" + std::to_string(kLibrarySchemaVersion) +
                           "); update Kernel Foundry");
    if (check != "ok") throw LibraryError(where + "corrupt library (integrity check: " + check + ")");
}

}  // namespace

namespace library_detail {

void raise_library_error(const std::string& file, const std::string& message) {
    throw LibraryError(file + ": " + message);
}

void migrate(sql::Database& db) {
    // The version is read inside the write transaction, so that two processes creating the
    // same file at once do not both run a step.
    for (;;) {
        sql::Transaction tx(db);
        const auto v = db.pragma_int("user_version");
        if (v >= kLibrarySchemaVersion) {
            tx.commit();
            return;
        }
        db.exec(kMigrations[static_cast<std::size_t>(v)]);
        db.exec("PRAGMA user_version = " + std::to_string(v + 1));
        db.exec("PRAGMA application_id = " + std::to_string(kLibraryApplicationId));
        tx.commit();
    }
}

}  // namespace library_detail

fs::path ExperienceLibrary::user_library_path() {
    fs::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg && fs::path(xdg).is_absolute())
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".local" / "share";
    else
        base = fs::temp_directory_path();
    return base / "kernel-foundry" / "library.db";
}

ExperienceLibrary ExperienceLibrary::open(const fs::path& file) {
    std::error_code ec;
    if (fs::exists(file, ec)) {
        check_existing(file);
    } else if (file.has_parent_path()) {
        fs::create_directories(file.parent_path(), ec);
        if (ec) throw LibraryError(file.string() + ": cannot create folder: " + ec.message());
    }
    auto impl = std::make_unique<Impl>();
    impl->path = file;
    impl->db =
        std::make_unique<sql::Database>(file, sql::OpenMode::ReadWriteCreate, library_detail::raise_library_error);
    impl->db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    library_detail::migrate(*impl->db);
    return ExperienceLibrary(std::move(impl));
}

ExperienceLibrary::ExperienceLibrary(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExperienceLibrary::ExperienceLibrary(ExperienceLibrary&&) noexcept = default;
ExperienceLibrary& ExperienceLibrary::operator=(ExperienceLibrary&&) noexcept = default;
ExperienceLibrary::~ExperienceLibrary() = default;

const fs::path& ExperienceLibrary::path() const {
    return impl_->path;
}

}  // namespace kf
