#include "sqlite.h"

namespace kf::store {

Database::Database(const std::string& path, bool create) : path_(path) {
    sqlite3* raw = nullptr;
    const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOFOLLOW;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK) {
        std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        throw StoreError(path_, "cannot open the database: " + msg);
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, 5000);
}

void Database::fail(const std::string& what) const {
    throw StoreError(path_, what + ": " + sqlite3_errmsg(db_.get()));
}

void Database::exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db_.get());
        sqlite3_free(err);
        throw StoreError(path_, msg);
    }
}

std::optional<std::string> Database::query_text(const std::string& sql) {
    Statement s(*this, sql);
    if (!s.step()) return std::nullopt;
    return s.column_text(0);
}

std::int64_t Database::query_int(const std::string& sql) {
    Statement s(*this, sql);
    if (!s.step()) fail("no result from '" + sql + "'");
    return s.column_int(0);
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
bool Statement::column_null(int i) const {
    return sqlite3_column_type(stmt_.get(), i) == SQLITE_NULL;
}

std::string Statement::column_text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), i));
    if (!p) return {};
    return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), i)));
}

}  // namespace kf::store
