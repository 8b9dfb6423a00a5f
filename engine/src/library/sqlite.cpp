#include "sqlite.h"

#include <sqlite3.h>

#include "kf/library.h"

namespace kf::sql {

namespace {

[[noreturn]] void fail(sqlite3* db, const std::filesystem::path& file, const std::string& what) {
    std::string msg = file.string() + ": " + what;
    if (db) msg += ": " + std::string(sqlite3_errmsg(db));
    throw LibraryError(msg);
}

}  // namespace

Database::Database(const std::filesystem::path& file, bool read_only) : file_(file) {
    int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    flags |= SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(file.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        std::string msg =
            file.string() + ": cannot open: " + (db_ ? std::string(sqlite3_errmsg(db_)) : std::string("out of memory"));
        sqlite3_close(db_);
        db_ = nullptr;
        throw LibraryError(msg);
    }
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, 5000);
}

Database::~Database() {
    sqlite3_close(db_);
}

void Database::exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db_);
        sqlite3_free(err);
        throw LibraryError(file_.string() + ": " + msg);
    }
}

Statement Database::prepare(const std::string& sql) {
    return Statement(*this, sql);
}

std::int64_t Database::last_insert_id() const {
    return sqlite3_last_insert_rowid(db_);
}

int Database::changes() const {
    return sqlite3_changes(db_);
}

std::int64_t Database::pragma_int(const std::string& name) {
    Statement s(*this, "PRAGMA " + name);
    return s.step() ? s.column_int(0) : 0;
}

Statement::Statement(Database& db, const std::string& sql) : db_(&db) {
    if (sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
        fail(db.handle(), db.file(), "cannot prepare statement");
}

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) {
    o.stmt_ = nullptr;
}

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int i, std::int64_t v) {
    if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail(db_->handle(), db_->file(), "bind");
    return *this;
}

Statement& Statement::bind(int i, double v) {
    if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail(db_->handle(), db_->file(), "bind");
    return *this;
}

Statement& Statement::bind(int i, std::string_view v) {
    if (sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
        fail(db_->handle(), db_->file(), "bind");
    return *this;
}

bool Statement::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_->handle(), db_->file(), "statement failed");
}

void Statement::run() {
    while (step()) {
    }
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::column_int(int i) const {
    return sqlite3_column_int64(stmt_, i);
}

double Statement::column_double(int i) const {
    return sqlite3_column_double(stmt_, i);
}

std::string Statement::column_text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}

bool Statement::column_null(int i) const {
    return sqlite3_column_type(stmt_, i) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : db_(db), nested_(sqlite3_get_autocommit(db.handle()) == 0) {
    db_.exec(nested_ ? "SAVEPOINT kf_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (!done_) {
        try {
            db_.exec(nested_ ? "ROLLBACK TO kf_nested; RELEASE kf_nested" : "ROLLBACK");
        } catch (...) {
        }
    }
}

void Transaction::commit() {
    db_.exec(nested_ ? "RELEASE kf_nested" : "COMMIT");
    done_ = true;
}

}  // namespace kf::sql
