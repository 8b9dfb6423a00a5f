#pragma once
/**
 * The experience library: reusable kernel patterns (templates with tunables) and insights
 * (condition → action, with evidence) in one SQLite file with full-text search. The
 * librarian turns raw improvement records into proposed insights the user approves, edits
 * or rejects. Schema, ranking, librarian rules and the JSON format: docs/library.md.
 *
 * One ExperienceLibrary object is not thread-safe; open one per thread (the file is in WAL
 * mode, so several connections may share it).
 */
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/error.h"

namespace kf {

/** A library file that cannot be used: foreign, corrupt, too new, or a failed statement. */
class LibraryError : public Error {
public:
    using Error::Error;
};

/** The newest schema version this build reads and writes (PRAGMA user_version). */
inline constexpr int kLibrarySchemaVersion = 2;
/** PRAGMA application_id of a Kernel Foundry library file ('KFLB'). */
inline constexpr std::int32_t kLibraryApplicationId = 0x4B464C42;

/** A reusable kernel template: a full candidate source with `// @kf tunable` annotations. */
struct Pattern {
    std::int64_t id = 0;  ///< 0 until stored
    std::string name;     ///< unique
    std::string op_class;
    std::string backend = "cuda";         ///< "cuda" or "host"
    std::string family;                   ///< e.g. "softmax/warp-per-row"
    std::vector<std::string> bound_tags;  ///< memory, compute, latency, occupancy, ...
    std::string signature;                ///< the `extern "C" void kf_solve(...)` declaration it implements
    /**
     * What it computes, independent of names (computation_meaning, kf/retrieval.h); empty
     * when unknown. Retrieval leaves a pattern out when its meaning is known and differs from
     * the task's.
     */
    std::string meaning;
    std::string description;
    std::string source;
    std::string provenance = "user";  ///< "seed", "run:<id>" or "user"
    std::string status = "active";    ///< "active" or "broken"
    std::string broken_reason;
    std::int64_t applications = 0;
    std::int64_t successes = 0;
    std::string created;  ///< ISO 8601 UTC; set on first store when empty

    bool operator==(const Pattern&) const = default;
};

/** Filters for ExperienceLibrary::patterns; empty fields do not filter. */
struct PatternQuery {
    std::string op_class;
    std::string backend;
    std::string bound;              ///< one of the pattern's bound_tags
    std::string signature;          ///< compared with whitespace collapsed
    std::string status = "active";  ///< "" for any status
    std::string text;               ///< free text: every word must occur in name/description/family/tags/source
    int limit = 50;
};

/** When an insight applies. Empty fields match anything. */
struct InsightCondition {
    std::string op_class;
    std::string bound;   ///< bottleneck class from the diagnosis (memory, compute, ...)
    std::string status;  ///< diagnosis status (compile_error, incorrect, ...) when no bound applies
    std::string expert;

    bool operator==(const InsightCondition&) const = default;
};

/** How often an insight's action was tried and what it brought. */
struct InsightEvidence {
    std::int64_t applications = 0;
    std::int64_t successes = 0;
    std::vector<double> gains;   ///< child/parent fitness of the successful applications
    std::int64_t failures = 0;   ///< records of matching failing groups counted against it
    double median_gain() const;  ///< 1 when there are no gains

    bool operator==(const InsightEvidence&) const = default;
};

struct InsightProvenance {
    std::vector<std::string> run_ids;
    std::vector<std::string> candidate_ids;

    bool operator==(const InsightProvenance&) const = default;
};

/** Condition → action, backed by evidence. The weight is derived, see insight_weight(). */
struct Insight {
    std::int64_t id = 0;
    InsightCondition condition;
    std::string action;
    std::string expert;
    InsightEvidence evidence;
    InsightProvenance provenance;
    std::string status = "proposed";  ///< "proposed", "approved" or "rejected"
    double weight = 0;                ///< output only; recomputed on every store
    std::string created, updated;     ///< ISO 8601 UTC

    bool operator==(const Insight&) const = default;
};

/** Filters for ExperienceLibrary::insights; empty fields do not filter. */
struct InsightQuery {
    std::string status;
    std::string op_class;
    std::string bound;
    std::string expert;
    std::string text;  ///< substring of the action (case-insensitive for ASCII)
    int limit = 100;
};

/** One child-versus-parent outcome: the librarian's raw evidence. */
struct Improvement {
    std::string op_class;
    std::string bound_before;   ///< parent's bottleneck class, "" when none
    std::string status_before;  ///< parent's diagnosis status
    std::string expert;
    std::string change;  ///< short summary of what changed
    double gain = 1;     ///< child fitness / parent fitness
    std::string run_id;
    std::string candidate_id;
    bool success = false;  ///< the child beat its parent
};

/** What an import did; skipped entries carry "<section>[<index>]: <reason>". */
struct ImportReport {
    int patterns_imported = 0;
    int insights_imported = 0;
    int improvements_imported = 0;
    std::vector<std::string> skipped;
};

/** (successes+1)/(applications+failures+2) × median gain, never below 0.05. */
double insight_weight(const InsightEvidence& e);

class ExperienceLibrary {
public:
    /** $XDG_DATA_HOME/kernel-foundry/library.db, falling back to ~/.local/share/. */
    static std::filesystem::path user_library_path();
    /**
     * Opens (creating when missing, with its folder) and migrates a library. A file that is
     * not a Kernel Foundry library, is corrupt, or has a newer schema raises LibraryError and
     * is left untouched.
     */
    static ExperienceLibrary open(const std::filesystem::path& db);

    ExperienceLibrary(ExperienceLibrary&&) noexcept;
    ExperienceLibrary& operator=(ExperienceLibrary&&) noexcept;
    ~ExperienceLibrary();

    const std::filesystem::path& path() const;

    // Patterns
    /** Inserts, or updates the pattern of the same name (keeping its id); returns the id. */
    std::int64_t add_pattern(const Pattern& p);
    /** Matching patterns, best evidence (successes+1)/(applications+2) first, then bm25. */
    std::vector<Pattern> patterns(const PatternQuery& q = {}) const;
    std::optional<Pattern> pattern(std::int64_t id) const;
    std::optional<Pattern> pattern_by_name(const std::string& name) const;
    /** A template that no longer compiles: kept, but out of default retrieval. */
    void mark_pattern_broken(std::int64_t id, const std::string& reason);
    void record_pattern_use(std::int64_t id, bool success);
    void delete_pattern(std::int64_t id);

    // Librarian
    /** Stores one outcome and applies the librarian rules to its group (docs/library.md). */
    void record_improvement(const Improvement& imp);
    std::vector<Improvement> improvements() const;
    /** Stores a new insight as given (weight recomputed); returns its id. */
    std::int64_t add_insight(const Insight& in);
    std::vector<Insight> insights(const InsightQuery& q = {}) const;
    std::optional<Insight> insight(std::int64_t id) const;
    /** "proposed", "approved" or "rejected"; the librarian never changes it afterwards. */
    void set_insight_status(std::int64_t id, const std::string& status);
    void update_insight_action(std::int64_t id, const std::string& action);
    void delete_insight(std::int64_t id);

    // Exchange
    nlohmann::json export_json() const;
    /** Validates each entry; bad ones are skipped and reported, good ones stored. */
    ImportReport import_json(const nlohmann::json& j);

    struct Impl;

private:
    explicit ExperienceLibrary(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/**
 * A project library laid over the user library. Reads look in the overlay first, then the
 * user library (a user pattern whose name the overlay also has is hidden); writes go to the
 * layer the caller picks.
 */
class LayeredLibrary {
public:
    enum class Layer { Overlay, User };

    /** `overlay` may be empty: then only the user library is read and written. */
    LayeredLibrary(const std::filesystem::path& overlay, const std::filesystem::path& user);

    bool has_overlay() const { return overlay_.has_value(); }
    /** The library a write goes to; Overlay falls back to User when there is none. */
    ExperienceLibrary& layer(Layer which);

    std::vector<Pattern> patterns(const PatternQuery& q = {}) const;
    std::optional<Pattern> pattern_by_name(const std::string& name) const;
    std::vector<Insight> insights(const InsightQuery& q = {}) const;

private:
    std::optional<ExperienceLibrary> overlay_;
    ExperienceLibrary user_;
};

nlohmann::json to_json(const Pattern& p);
nlohmann::json to_json(const Insight& in);
nlohmann::json to_json(const Improvement& imp);

}  // namespace kf
