#pragma once
// Internals shared by the experience library's source files.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kf/sqlite.h"
#include "kf/library.h"

namespace kf {

struct ExperienceLibrary::Impl {
    std::filesystem::path path;
    std::unique_ptr<sql::Database> db;
};

namespace library_detail {

/** The current time as ISO 8601 UTC, e.g. "2026-11-29T23:05:11Z". */
std::string now_iso();
/** Stores one librarian record (the improvements table). */
void insert_improvement(sql::Database& db, const Improvement& imp);
std::string to_json_text(const std::vector<std::string>& v);
std::string to_json_text(const std::vector<double>& v);
std::vector<std::string> strings_from_json_text(const std::string& s);
std::vector<double> doubles_from_json_text(const std::string& s);
/** Throws kf::LibraryError "<file>: <message>" (the sql layer's Raise for the library). */
[[noreturn]] void raise_library_error(const std::string& file, const std::string& message);
/** Brings a freshly opened read-write connection to kLibrarySchemaVersion. */
void migrate(sql::Database& db);
/** Stores an insight row (insert when id is 0, else update) with its weight recomputed. */
std::int64_t store_insight(sql::Database& db, const Insight& in);

}  // namespace library_detail
}  // namespace kf
