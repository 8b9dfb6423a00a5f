#include "kf/sqlite.h"

#include <exception>

#include <sqlite3.h>

namespace kf::sql {

void Database::Closer::operator()(sqlite3* db) const {
    sqlite3_close_v2(db);
}

void Statement::Finalizer::operator()(sqlite3_stmt* s) const {
    sqlite3_finalize(s);
}

Database::Database(const std::filesystem::path& file, OpenMode mode, Raise raise_error, bool follow_links)
    : file_(file), raise_(raise_error) {
    int flags = mode == OpenMode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if (mode == OpenMode::ReadWriteCreate) flags |= SQLITE_OPEN_CREATE;
    if (!follow_links) flags |= SQLITE_OPEN_NOFOLLOW;
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK)
        raise("cannot open the database: " + std::string(raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, 5000);
}

void Database::raise(const std::string& message) const {
    raise_(file_.string(), message);
    // A Raise that returned broke its contract; never go on with a failed call.
    std::terminate();
}

void Database::fail(const std::string& what) const {
    raise(what + ": " + sqlite3_errmsg(db_.get()));
}

void Database::exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db_.get());
        sqlite3_free(err);
        raise(msg);
    }
}

Statement Database::prepare(std::string_view sql) {
    return Statement(*this, sql);
}

std::optional<std::string> Database::query_text(const std::string& sql) {
    Statement s(*this, sql);
    if (!s.step()) return std::nullopt;
    return s.column_text(0);
}

std::int64_t Database::query_int(const std::string& sql) {
    Statement s(*this, sql);
    if (!s.step()) raise("no result from '" + sql + "'");
    return s.column_int(0);
}

std::int64_t Database::pragma_int(const std::string& name) {
    Statement s(*this, "PRAGMA " + name);
    return s.step() ? s.column_int(0) : 0;
}

std::int64_t Database::last_insert_id() const {
    return sqlite3_last_insert_rowid(db_.get());
}

int Database::changes() const {
    return sqlite3_changes(db_.get());
}

Statement::Statement(Database& db, std::string_view sql) : db_(&db) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK)
        db.fail("cannot prepare '" + std::string(sql) + "'");
    stmt_.reset(raw);
}

Statement& Statement::bind(int i, std::int64_t v) {
    if (sqlite3_bind_int64(stmt_.get(), i, v) != SQLITE_OK) db_->fail("bind");
    return *this;
}

Statement& Statement::bind(int i, double v) {
    if (sqlite3_bind_double(stmt_.get(), i, v) != SQLITE_OK) db_->fail("bind");
    return *this;
}

Statement& Statement::bind(int i, std::string_view v) {
    if (sqlite3_bind_text64(stmt_.get(), i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
        db_->fail("bind");
    return *this;
}

Statement& Statement::bind_null(int i) {
    if (sqlite3_bind_null(stmt_.get(), i) != SQLITE_OK) db_->fail("bind");
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_->fail(std::string("'") + sqlite3_sql(stmt_.get()) + "'");
}

void Statement::run() {
    while (step()) {
    }
}

void Statement::reset() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
}

std::int64_t Statement::column_int(int i) const {
    return sqlite3_column_int64(stmt_.get(), i);
}

double Statement::column_double(int i) const {
    return sqlite3_column_double(stmt_.get(), i);
}

std::string Statement::column_text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), i));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), i))) : std::string();
}

bool Statement::column_null(int i) const {
    return sqlite3_column_type(stmt_.get(), i) == SQLITE_NULL;
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
