#pragma once
// A thin RAII layer over the SQLite C API for the experience library: one connection, and
// prepared statements that finalize themselves. Every failure becomes a kf::LibraryError.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kf::sql {

class Statement;

/** An open connection; closed on destruction. */
class Database {
public:
    /** Opens read-only when `read_only`, else read-write, creating the file when missing. */
    Database(const std::filesystem::path& file, bool read_only);
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    /** Runs one or more statements without results. */
    void exec(const std::string& sql);
    Statement prepare(const std::string& sql);
    std::int64_t last_insert_id() const;
    int changes() const;
    /** The integer result of a pragma such as "user_version". */
    std::int64_t pragma_int(const std::string& name);
    sqlite3* handle() const { return db_; }
    const std::filesystem::path& file() const { return file_; }

private:
    sqlite3* db_ = nullptr;
    std::filesystem::path file_;
};

/** A prepared statement. Bind with 1-based indices, step, read 0-based columns. */
class Statement {
public:
    Statement(Database& db, const std::string& sql);
    Statement(Statement&& o) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind(int i, std::int64_t v);
    Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Statement& bind(int i, double v);
    Statement& bind(int i, std::string_view v);
    Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
    Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
    /** True while a row is available. */
    bool step();
    /** Steps a statement that returns no rows. */
    void run();
    void reset();

    std::int64_t column_int(int i) const;
    double column_double(int i) const;
    std::string column_text(int i) const;
    bool column_null(int i) const;

private:
    Database* db_;
    sqlite3_stmt* stmt_ = nullptr;
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
