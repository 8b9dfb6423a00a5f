#pragma once
// The generic expert's parts (kf/generic.h): the reference's loop nest read as a program of
// top-level statements and nests, each nest's loops checked for what may run in parallel
// (generic_plan.cpp), the model printed back as C++ or CUDA (generic_print.cpp), and the
// kernels written from the plan (generic_cuda.cpp, generic_host.cpp).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kf/task.h"
#include "loop_nest.h"

namespace kf::generic {

using nest::Block;
using nest::Expr;
using nest::ExprPtr;
using nest::Stmt;

/** A reduction into a scalar of the row's scope carried by a loop along the row. */
struct Reduction {
    std::string var;      ///< the scalar
    std::string combine;  ///< sum, prod, max, min
    std::string type;     ///< its C type
};

/** A loop of a row (its iteration spread over the row's threads) and the reductions it carries. */
struct SpreadLoop {
    const Stmt* loop = nullptr;
    std::vector<Reduction> reductions;
};

/** One top-level loop of kf_solve and how its iterations may be spread over the device. */
struct NestPlan {
    const Stmt* loop = nullptr;
    /**
     * The perfectly nested loops that may run in parallel, outermost first (1 to 3): each
     * level's body is declarations and the next loop. Empty when even the outermost may not.
     */
    std::vector<const Stmt*> chain;
    std::string serial_why;  ///< why the outermost loop may not run in parallel
    /** A group of threads per outer iteration, the loops along it spread over the group. */
    bool rows = false;
    std::string rows_why;
    std::map<const Stmt*, SpreadLoop> spread;  ///< the row's loops (at any depth of its ifs)
    /**
     * Tensors only added to (+=, -=) at elements other iterations may add to too, and the
     * pointers into them the additions are written through: updated atomically.
     */
    std::set<std::string> atomics;
    /** The same where the rows are spread over groups: also those the group's threads may add to at one element. */
    std::set<std::string> row_atomics;
};

/** kf_solve as statements around the nests. */
struct Program {
    Block body;                      ///< kf_solve's body (owns the statements the plans point to)
    std::vector<NestPlan> nests;     ///< in order, one per top-level loop
    std::string opaque;              ///< the first construct kept as written, if any
    /** The reference's functions the statements kept as written call, in the file's order: copied beside the kernels. */
    std::vector<nest::Helper> helpers;
};

/** Why the generic expert writes nothing: the construct and its line. */
struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** Plans every nest of the body for the task's cases; throws Unsupported for a body it cannot plan at all. */
Program plan_program(const Task& task, Block body, const std::string& opaque);

/** Names of the task's tensors written by the entry point (outputs). */
std::set<std::string> output_names(const Task& task);

// ---- Printing the model back as code ----

enum class Dialect { Host, Cuda };

struct Printer {
    Dialect dialect = Dialect::Host;
    std::map<std::string, std::string> rename;  ///< names printed as others (a reduction's partial)
    std::map<const Expr*, std::string> replace; ///< expressions printed as others (a read from a vector load)
    std::string expr(const ExprPtr& e) const;
    /** Statements at `indent`, each line ending in a newline. */
    std::string block(const Block& b, const std::string& indent) const;
    std::string stmt(const Stmt& s, const std::string& indent) const;
    /** A loop's header: for (long long v = start; v < bound; v += step). */
    std::string loop_header(const Stmt& loop, const std::string& start_override = {},
                            const std::string& step_override = {}) const;
    /** A declaration as C declares it (`const float * p = e;`, `float a[9] = {};`). */
    std::string declaration(const Stmt& s) const;
};

/** The number of iterations of a loop, as a C expression (long long). */
std::string trip_count(const Printer& p, const Stmt& loop);

/** The helper functions every generic instance uses (kf_max, kf_min), for the dialect. */
std::string helpers(Dialect d);

/** The reference's own functions the kept statements call, as written (`__device__` on CUDA); empty when none. */
std::string reference_functions(const Program& prog, Dialect d);

/** The combine's identity for a C type, and `a = a <combine> b` as C. */
std::string identity_of(const std::string& combine, const std::string& type);
std::string combine_into(const std::string& combine, const std::string& a, const std::string& b);

}  // namespace kf::generic
