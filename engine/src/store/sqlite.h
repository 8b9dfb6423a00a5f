#pragma once
// Thin RAII over the SQLite C API: a connection and a prepared statement. Every failure is
// thrown as kf::StoreError naming the database file.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "kf/store.h"

namespace kf::store {

/** One SQLite connection. Movable; closes on destruction. */
class Database {
public:
    /** Opens path; create=false refuses a missing file. Sets the busy timeout. */
    Database(const std::string& path, bool create);

    sqlite3* handle() const { return db_.get(); }
    const std::string& path() const { return path_; }

    /** Runs one or more statements without results. */
    void exec(const std::string& sql);
    /** The first column of the first row of a one-statement query, as text (nullopt: no row). */
    std::optional<std::string> query_text(const std::string& sql);
    std::int64_t query_int(const std::string& sql);

    /** Throws StoreError "<path>: <what>: <sqlite message>". */
    [[noreturn]] void fail(const std::string& what) const;

private:
    struct Closer {
        void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
    };
    std::string path_;
    std::unique_ptr<sqlite3, Closer> db_;
};

/** A prepared statement; bind by 1-based index, step, read columns by 0-based index. */
class Statement {
public:
    Statement(Database& db, std::string_view sql);

    Statement& bind(int i, std::int64_t v);
    Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Statement& bind(int i, double v);
    Statement& bind(int i, std::string_view v);
    Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
    Statement& bind_null(int i);

    /** True while a row is available. */
    bool step();
    /** Steps a statement that returns no rows. */
    void run();
    /** Makes the statement ready to be bound and run again. */
    void reset();

    std::int64_t column_int(int i) const;
    double column_double(int i) const;
    std::string column_text(int i) const;
    bool column_null(int i) const;

private:
    struct Finalizer {
        void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
    };
    Database* db_;
    std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

}  // namespace kf::store
