#include "executor_options.h"

#include <iostream>

#include <CLI/CLI.hpp>

namespace kf::cli {

void add_executor_options(CLI::App* c, ExecutorArgs& a) {
    SlurmOptions& s = a.options.slurm;
    c->add_option("--executor", a.executor, "Where evaluation workers run: local, or slurm (one Slurm job per worker)")
        ->capture_default_str()
        ->check(CLI::IsMember({"local", "slurm"}));
    c->add_option("--slurm-partition", s.partition, "Slurm partition of the worker jobs (default: the cluster's)");
    c->add_option("--slurm-gpus", s.gpus, "GPUs per worker job (default: 1 on the CUDA backend, 0 on the host)")
        ->check(CLI::Range(0, 64));
    c->add_option("--slurm-time", s.time_limit, "Time limit of each worker job (minutes, or [D-]HH:MM:SS)");
    c->add_option("--slurm-account", s.account, "Slurm account charged for the worker jobs");
    c->add_option("--slurm-spool", s.spool_dir,
                  "Folder for job scripts and logs, on a filesystem the nodes share (default: <project>/slurm)");
    c->add_option("--slurm-connect-host", s.connect_host,
                  "Address the jobs connect back to (default: this host's name and addresses, tried in turn)");
    c->add_option("--slurm-sbatch-arg", s.sbatch_args,
                  "A further sbatch option, e.g. --slurm-sbatch-arg=--qos=low (repeatable)");
    c->add_option("--slurm-max-requeues", s.max_requeues, "Lost jobs tolerated in a row before an evaluation fails")
        ->capture_default_str()
        ->check(CLI::Range(0, 1000));
    c->add_flag("--slurm-array", a.array,
                "With --executor slurm: submit the searches (one per task) as one job array, each in <project>/<task>, "
                "and return");
}

int resolve_executor(ExecutorArgs& a, const std::filesystem::path& project) {
    auto kind = executor_from_string(a.executor);
    if (!kind) {
        std::cerr << "kfoundry: unknown executor '" << a.executor << "' (local or slurm)\n";
        return kExitUsage;
    }
    a.options.kind = *kind;
    if (a.array && *kind != ExecutorKind::Slurm) {
        std::cerr << "kfoundry: --slurm-array needs --executor slurm\n";
        return kExitUsage;
    }
    if (*kind != ExecutorKind::Slurm) return kExitOk;
    std::string why;
    if (!slurm_available(&why)) {
        std::cerr << "kfoundry: --executor slurm: " << why << "\n";
        return kExitNoDevice;
    }
    if (a.options.slurm.spool_dir.empty()) a.options.slurm.spool_dir = project / "slurm";
    a.options.slurm.spool_dir = std::filesystem::absolute(a.options.slurm.spool_dir);
    return kExitOk;
}

}  // namespace kf::cli
