#pragma once
// The project database schema: the ordered list of migrations, the checks that refuse a
// database that is not ours (before anything is written to it) and the migration runner.
#include <filesystem>
#include <string>
#include <vector>

#include "kf/sqlite.h"
#include "kf/store.h"

namespace kf::store {

using sql::Database;
using sql::Statement;

/** Opens the project database (created when `create`) with failures as kf::StoreError; a
 * symbolic link in place of the file is refused. */
Database open_database(const std::filesystem::path& file, bool create, bool read_only = false);

/** Migration n (1-based) takes a database from user_version n-1 to n. Append only. */
const std::vector<std::string>& migrations();

/**
 * Reads, and only reads, an existing database: application id, schema version, integrity,
 * and tables/indexes/columns against those the migrations up to its version create.
 * Throws StoreError naming what is wrong. Returns the database's schema version.
 */
int check_database(Database& db);

/** Applies the migrations after the database's version, each in its own transaction, and
 * returns how many ran. A fresh (empty) database gets its application id here too. */
int migrate(Database& db);

}  // namespace kf::store
