#pragma once
// Slurm's own tools, run as child processes: sbatch to submit a worker job, squeue to follow
// it, scancel to end it. No scheduling of our own.
#include <filesystem>
#include <string>
#include <vector>

#include "kf/exec.h"

namespace kf::exec {

struct Submission {
    std::string job;    ///< the job id; empty when sbatch refused
    std::string error;  ///< sbatch's message when it refused
};

/**
 * Submits `script` with the options' partition, account, time, GPUs and extra arguments, plus
 * `extra` (e.g. --array); it runs in `spool_dir`, its output in spool_dir/`output` (sbatch's
 * filename pattern; default kf-worker-%j.log).
 */
Submission submit_job(const SlurmOptions& opt, const std::filesystem::path& script, const std::string& name,
                      const std::vector<std::string>& extra = {}, const std::string& output = "kf-worker-%j.log");

/** The job's state as squeue says it (PENDING, RUNNING, CANCELLED, ...); "GONE" when Slurm no
 *  longer knows the job; "UNKNOWN" when squeue could not be asked (controller unreachable). */
std::string job_state(const std::string& job);

/** States in which a job may still run the worker (queued or running). */
bool job_alive(const std::string& state);

/** Ends the job (scancel); quietly does nothing for a job that has already ended. */
void cancel_job(const std::string& job);

}  // namespace kf::exec
