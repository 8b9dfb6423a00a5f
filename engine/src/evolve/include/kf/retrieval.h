#pragma once
/**
 * Retrieval-augmented initialisation: the experience library's patterns that fit a task
 * (same op class and backend, an entry point it can be adapted to, and not known to compute
 * another function), those computing the task's own function first, then best evidence
 * first; and the feedback that keeps that evidence honest (uses, successes, templates that
 * no longer compile).
 */
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kf/experts.h"
#include "kf/library.h"
#include "kf/task.h"

namespace kf {

/**
 * What a computation computes, as one line independent of the task's names: its tensors
 * become t0, t1... in the manifest's order, its sizes s0, s1..., its params p0, p1..., its
 * stats a0, a1... (a stencil's neighbour read at(x, di, dj) becomes t0@di,dj); expressions
 * are written as the host's fp32 C (ComputeExpr::to_c). E.g.
 * a running max of |x| over rows x cols:
 *   `row_scan rows=s0 cols=s1; a0 = max(fabsf((t0))); t1 = (a0); in t0:full`
 * Two tasks get the same meaning when they compute the same function of their arguments
 * in the same positions, whatever they call them. Empty for a computation without an op.
 */
std::string computation_meaning(const Task& task, const Computation& computation);

/**
 * The meaning of the task's computation, declared in its manifest or derived from its
 * reference (task_computation); empty when neither is known.
 */
std::string task_meaning(const Task& task, Backend backend);

/** One entry of the seed library file (resources/library/seed.json). */
struct SeedEntry {
    std::string task;     ///< the task it is written for, e.g. "level1/softmax"
    Backend backend = Backend::Cuda;
    std::string name, family, description;
    std::vector<std::string> bound_tags;
    std::string file;       ///< relative to the seed file's folder, or
    std::string task_file;  ///< relative to the task's folder (one of the task's own candidates)
    /** Where its source is, given the task's folder and the seed file's folder. */
    std::filesystem::path source_path(const Task& task, const std::filesystem::path& seed_dir) const;
};

/** The entries of a seed file with a known backend; none when it is missing or malformed. */
std::vector<SeedEntry> read_seed_entries(const std::filesystem::path& seed_json);

/**
 * Adds the bundled seed patterns (resources/library/seed.json) to a library: a pattern
 * missing by name is added with provenance "seed"; one whose source (or meaning: its task's
 * computation) changed is updated with its evidence kept. Tasks named by the seed file are looked up under tasks_dir. Returns how
 * many patterns were added or updated.
 */
int sync_seed_patterns(ExperienceLibrary& library, const std::filesystem::path& seed_json,
                       const std::filesystem::path& tasks_dir);

/**
 * A pattern written for another entry point, adapted to the task's: its kf_solve renamed
 * kf_pattern_solve and a kf_solve with the task's parameters calling it, argument by
 * argument. Only when the parameter types agree position by position (names may differ);
 * nullopt otherwise.
 */
std::optional<std::string> adapt_to_signature(const std::string& source, const std::string& pattern_signature,
                                              const std::string& task_signature);

struct Retrieval {
    std::vector<PatternSource> patterns;          ///< best evidence first
    std::map<std::string, std::int64_t> ids;      ///< pattern source -> library id
    std::set<std::string> adapted;                ///< sources adapted to the task's entry point
    std::string meaning;                          ///< the task's (task_meaning); empty when unknown
    int same_meaning = 0;                         ///< patterns retrieved that compute the task's function
    int other_meaning = 0;                        ///< patterns that fit the entry point, left out: they compute another function
    std::string summary;                          ///< one line for the log, e.g. "3 patterns (...)"
};

/**
 * The active patterns of the task's op class and backend. When the task's meaning and a
 * pattern's are both known and differ, the pattern computes another function and is left
 * out; those of the task's own meaning come first, then those of unknown meaning, each
 * ranked by (successes+1)/(applications+2). Patterns written for the task's entry
 * signature are taken as they are, the others adapted to it when their parameter types
 * agree by position (adapt_to_signature), the rest left out.
 */
Retrieval retrieve_patterns(const ExperienceLibrary& library, const Task& task, Backend backend, int limit = 12);

}  // namespace kf
