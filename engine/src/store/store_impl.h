#pragma once
// ProjectStore's private state, shared by the files that implement its parts.
#include <filesystem>
#include <string>

#include "kf/store.h"
#include "schema.h"

namespace kf {

struct ProjectStore::Impl {
    std::filesystem::path dir;
    std::string name;
    int schema_version = 0;
    int migrations_applied = 0;
    int tx_depth = 0;  ///< nesting of transaction(); >0 means writes join the open one
    store::Database db;
};

namespace store {

/** Now as ISO-8601 UTC with milliseconds: 2026-11-29T23:07:00.123Z. */
std::string iso_now();

/** BEGIN IMMEDIATE at the outermost level, a savepoint inside an open transaction. */
void begin(ProjectStore::Impl& impl);
/** COMMIT or RELEASE; a failed COMMIT is rolled back and thrown. */
void commit(ProjectStore::Impl& impl);
void rollback(ProjectStore::Impl& impl) noexcept;

/**
 * Makes the writes of one add_* atomic and durable on return: its own transaction, or a
 * savepoint of an open transaction(). Commit with done(); otherwise rolled back.
 */
class WriteScope {
public:
    explicit WriteScope(ProjectStore::Impl& impl) : impl_(impl) { begin(impl_); }
    ~WriteScope() {
        if (!finished_) rollback(impl_);
    }
    WriteScope(const WriteScope&) = delete;
    WriteScope& operator=(const WriteScope&) = delete;
    void done() {
        finished_ = true;
        commit(impl_);
    }

private:
    ProjectStore::Impl& impl_;
    bool finished_ = false;
};

nlohmann::json parse_json(const ProjectStore::Impl& impl, const std::string& text, const char* what);

}  // namespace store
}  // namespace kf
