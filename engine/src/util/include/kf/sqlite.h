#pragma once
// A thin RAII layer over the SQLite C API, shared by the project store and the experience
// library: one connection, prepared statements that finalize themselves, and transactions
// that roll back unless committed. Every failure is handed to the owner's Raise function,
// which throws the owner's own error type (kf::StoreError, kf::LibraryError) naming the file.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kf::sql {

/** Throws the owner's error for `file` and `message`; must not return. */
using Raise = void (*)(const std::string& file, const std::string& message);

enum class OpenMode {
    ReadOnly,
    ReadWrite,        ///< the file must exist
    ReadWriteCreate,  ///< created when missing
};

class Statement;

/** One connection; movable, closed on destruction. Extended result codes, 5 s busy timeout. */
class Database {
public:
    /** `follow_links` false refuses a path that is a symbolic link. */
    Database(const std::filesystem::path& file, OpenMode mode, Raise raise_error, bool follow_links = true);

    /** Runs one or more statements without results. */
    void exec(const std::string& sql);
    Statement prepare(std::string_view sql);
    /** The first column of the first row of a one-statement query, as text (nullopt: no row). */
    std::optional<std::string> query_text(const std::string& sql);
    /** The first column of the first row, as an integer; no row is a failure. */
    std::int64_t query_int(const std::string& sql);
    /** `PRAGMA name` as an integer (0 when it gives no row), e.g. "user_version". */
    std::int64_t pragma_int(const std::string& name);
    std::int64_t last_insert_id() const;
    /** Rows changed by the last INSERT, UPDATE or DELETE. */
    int changes() const;

    sqlite3* handle() const { return db_.get(); }
    const std::filesystem::path& file() const { return file_; }
    /** Raises "<what>: <SQLite's last message>". */
    [[noreturn]] void fail(const std::string& what) const;
    /** Raises `message` as it is. */
    [[noreturn]] void raise(const std::string& message) const;

private:
    struct Closer {
        void operator()(sqlite3* db) const;
    };
    std::filesystem::path file_;
    Raise raise_;
    std::unique_ptr<sqlite3, Closer> db_;
};

/** A prepared statement: bind by 1-based index, step, read columns by 0-based index. */
class Statement {
public:
    Statement(Database& db, std::string_view sql);

    Statement& bind(int i, std::int64_t v);
    Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Statement& bind(int i, double v);
    Statement& bind(int i, std::string_view v);
    Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
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
        void operator()(sqlite3_stmt* s) const;
    };
    Database* db_;
    std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

/**
 * BEGIN IMMEDIATE on construction (a savepoint when a transaction is already open, so that
 * calls nest); rolled back unless commit() was called.
 */
class Transaction {
public:
    explicit Transaction(Database& db);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    void commit();

private:
    Database& db_;
    bool nested_;
    bool done_ = false;
};

}  // namespace kf::sql
