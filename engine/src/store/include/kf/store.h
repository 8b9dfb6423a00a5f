#pragma once
/**
 * The project store: a project folder holding project.kfproj (JSON) and project.db (SQLite,
 * WAL) with the runs, candidates, lineage, evaluations, events and resumable search state of
 * every run. Every write is committed before the call returns, so a run killed at any point
 * resumes from what is stored. Layout, tables and guarantees: docs/project-store.md.
 */
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"
#include "kf/vocabulary.h"
#include "kf/error.h"

namespace kf {

/** Schema version this build writes; older databases are migrated on open, newer refused. */
inline constexpr int kStoreSchemaVersion = 2;
/** PRAGMA application_id of a project database ("KFDN"). */
inline constexpr std::int32_t kStoreApplicationId = 0x4B46444E;
/** Format number of project.kfproj. */
inline constexpr int kProjectFileFormat = 1;

/** A project file or database that cannot be used: the file and what is wrong with it. */
class StoreError : public Error {
public:
    StoreError(std::string file, std::string reason)
        : Error(file + ": " + reason), file_(std::move(file)), reason_(std::move(reason)) {}
    const std::string& file() const { return file_; }
    const std::string& reason() const { return reason_; }

private:
    std::string file_, reason_;
};

/** One search run over one task. state: stored as to_string(RunState) (running, paused, done, failed, stopped). */
struct RunRecord {
    std::int64_t id = 0;
    std::string task;
    nlohmann::json config = nlohmann::json::object();
    RunState state = RunState::Running;
    std::string stop_reason;  ///< kf::to_string(StopReason), or why the run failed; empty while it runs
    /** The stop reason typed (StopKind::Other for a failure's text). */
    StopReason stop() const { return stop_reason_from_string(stop_reason); }
    std::string created, updated;  ///< ISO-8601 UTC
};

/** One candidate kernel source and where it came from. author: engine | user. */
struct CandidateRecord {
    std::int64_t id = 0, run_id = 0;
    std::string task, source;
    std::string content_hash;  ///< sha256 of source; filled in by add_candidate when empty
    std::string expert, rationale;
    std::string family;  ///< the pattern family it descends from, e.g. "softmax/online"; may be empty
    std::string author = "engine";
    int island = 0, generation = 0;
    nlohmann::json tunables = nlohmann::json::object();
    std::vector<std::int64_t> parents;  ///< candidate ids, first parent first
    std::string created;
    /** The task's reference, as a run's seeds record it (kf::initial_seeds). */
    bool is_reference() const { return expert == "seed" && family == "reference"; }
};

/** The record of a source the user edited from `parent`: expert and author "user", the
    parent's run, task, family, island and tunables, one generation later. */
CandidateRecord user_child(const CandidateRecord& parent, std::string source, std::string rationale);

/** One evaluation of a candidate: status and fitness copied out of the full diagnosis. */
struct EvaluationRecord {
    std::int64_t id = 0, candidate_id = 0;
    std::string status;  ///< kf::to_string(Status), as stored; kf::parse_status() reads it
    /** The status typed; Status::RuntimeError for a word this build does not know. */
    Status status_value() const { return parse_status(status).value_or(Status::RuntimeError); }
    double fitness = 0;
    nlohmann::json diagnosis;  ///< kf::Diagnosis in its JSON form
    std::string created;
    std::string ran_on;  ///< where it ran: a host name, or "slurm:<job>@<node>" (kf::Diagnosis::ran_on)
};

/**
 * Something that happened during a run, for the log and the live views. kind: stored as
 * to_string(EventKind); a word this build does not know (a newer build's) reads as Log.
 */
struct EventRecord {
    std::int64_t id = 0, run_id = 0;
    EventKind kind = EventKind::Log;
    nlohmann::json payload;
    std::string created;
};

/**
 * An open project. Owned and used by one thread; movable, not copyable. Every add_*, set_*
 * and put_* is its own transaction unless called inside transaction(). Errors are thrown as
 * StoreError naming the database file; a file that is not a valid project database of a
 * version this build knows is refused without being modified.
 */
class ProjectStore {
public:
    /** Creates a project in dir (created if missing). Throws when a project is already there. */
    static ProjectStore create(const std::filesystem::path& dir, const std::string& name);
    /** Opens the project in dir; dir may also be the path of its project.kfproj. */
    static ProjectStore open(const std::filesystem::path& dir);
    /** open() when dir holds a project.kfproj, else create(). */
    static ProjectStore open_or_create(const std::filesystem::path& dir, const std::string& name);
    /**
     * Opens the project for reading only (SQLite read-only): every write through it fails.
     * Neither migrates nor changes the file; a project whose schema is older than this
     * build's is refused (open() it once to migrate). What ProjectView::open uses.
     */
    static ProjectStore open_read_only(const std::filesystem::path& dir);

    ProjectStore(ProjectStore&&) noexcept;
    ProjectStore& operator=(ProjectStore&&) noexcept;
    ProjectStore(const ProjectStore&) = delete;
    ProjectStore& operator=(const ProjectStore&) = delete;
    ~ProjectStore();

    int schema_version() const;
    const std::filesystem::path& dir() const;
    std::filesystem::path db_path() const;
    std::string name() const;
    /** How many migrations the last open applied (0 when the schema was already current). */
    int migrations_applied() const;
    /** The database's PRAGMA journal_mode ("wal"). */
    std::string journal_mode();

    // Runs.
    std::int64_t add_run(const std::string& task, const nlohmann::json& config);
    /** Throws StoreError for an unknown run. */
    void set_run_state(std::int64_t run, RunState state, const std::string& reason = {});
    std::optional<RunRecord> run(std::int64_t id);
    std::vector<RunRecord> runs();
    /** The most recent run, of the given task when one is named. */
    std::optional<RunRecord> latest_run(const std::string& task = {});

    // Candidates and lineage.
    /**
     * Stores a candidate and its lineage rows: kind "migration" when expert is "migration",
     * "crossover" with 2+ parents, "seed" with none, else "mutation". Returns its id.
     */
    std::int64_t add_candidate(CandidateRecord c);
    std::vector<CandidateRecord> candidates(std::int64_t run);
    std::optional<CandidateRecord> candidate(std::int64_t id);
    /** The chain of first parents back to a seed, starting with candidate itself. */
    std::vector<std::int64_t> lineage(std::int64_t candidate);
    /** Candidates of the run without any evaluation, by id (to re-queue on resume). */
    std::vector<std::int64_t> unevaluated(std::int64_t run);

    // Evaluations.
    /** Stores d for candidate; status and fitness come from d. Returns the evaluation id. */
    std::int64_t add_evaluation(std::int64_t candidate, const Diagnosis& d);
    /** Every evaluation of the run's candidates, by id. */
    std::vector<EvaluationRecord> evaluations(std::int64_t run);
    /** The latest evaluation of candidate. */
    std::optional<EvaluationRecord> evaluation_of(std::int64_t candidate);
    /** The candidate with the highest fitness among status "ok" (earliest on ties). */
    std::optional<std::pair<CandidateRecord, EvaluationRecord>> best(std::int64_t run);

    // Events.
    std::int64_t add_event(std::int64_t run, EventKind kind, const nlohmann::json& payload);
    /** Events of the run with id > after_id, by id. */
    std::vector<EventRecord> events(std::int64_t run, std::int64_t after_id = 0);

    // Resumable search state (islands, bandit statistics, RNG state), one JSON value per key.
    void put_state(std::int64_t run, const std::string& key, const nlohmann::json& value);
    std::optional<nlohmann::json> get_state(std::int64_t run, const std::string& key);

    /**
     * Runs f in one transaction (BEGIN IMMEDIATE ... COMMIT), rolled back when f throws.
     * Nests: an inner call is a savepoint of the outer one.
     */
    template <class F>
    void transaction(F&& f) {
        begin_transaction();
        try {
            std::forward<F>(f)();
        } catch (...) {
            rollback_transaction();
            throw;
        }
        commit_transaction();
    }

    struct Impl;

private:
    explicit ProjectStore(std::unique_ptr<Impl> impl);
    void begin_transaction();
    void commit_transaction();
    void rollback_transaction() noexcept;

    std::unique_ptr<Impl> impl_;
};

/**
 * Read-only access to a project: what the app's views hold (docs/architecture.md). Either a
 * connection of its own, opened read-only (open()), or the reading side of a connection
 * that the engine owns, e.g. a run's while its events are handled on the run's thread. Like
 * a ProjectStore, used by one thread.
 */
class ProjectView {
public:
    /** A read-only connection of its own (ProjectStore::open_read_only). */
    static ProjectView open(const std::filesystem::path& dir);
    /** The reading side of `store` (not owned; it must outlive the view). */
    explicit ProjectView(ProjectStore& store);
    ProjectView(ProjectView&&) noexcept;
    ProjectView& operator=(ProjectView&&) noexcept;
    ~ProjectView();

    const std::filesystem::path& dir() const;
    std::string name() const;
    int schema_version() const;

    std::optional<RunRecord> run(std::int64_t id) const;
    std::vector<RunRecord> runs() const;
    std::optional<RunRecord> latest_run(const std::string& task = {}) const;
    std::vector<CandidateRecord> candidates(std::int64_t run) const;
    std::optional<CandidateRecord> candidate(std::int64_t id) const;
    std::vector<std::int64_t> lineage(std::int64_t candidate) const;
    std::vector<EvaluationRecord> evaluations(std::int64_t run) const;
    std::optional<EvaluationRecord> evaluation_of(std::int64_t candidate) const;
    std::optional<std::pair<CandidateRecord, EvaluationRecord>> best(std::int64_t run) const;
    std::vector<EventRecord> events(std::int64_t run, std::int64_t after_id = 0) const;
    std::optional<nlohmann::json> get_state(std::int64_t run, const std::string& key) const;

private:
    explicit ProjectView(std::unique_ptr<ProjectStore> owned);
    std::unique_ptr<ProjectStore> owned_;
    ProjectStore* store_ = nullptr;
};

}  // namespace kf
