#pragma once
// `kfoundry evolve T1 T2 ... --executor slurm --slurm-array`: several searches as one Slurm
// job array (docs/cluster.md).
#include "evolve_command.h"

namespace kf::cli {

/**
 * Submits one job array with an element per task; each element runs the whole search of its
 * task (engine and a local worker on its node) in its own project, <project>/<task name>.
 * Returns once the array is queued, after printing its job id and where the results go.
 */
int submit_search_array(const EvolveArgs& args);

}  // namespace kf::cli
