#pragma once
/**
 * Where evaluation workers run (docs/cluster.md). The local executor starts the worker as a
 * child process of the engine. The Slurm executor submits it as a Slurm job with sbatch: the
 * engine's child is then a relay (`kfoundry slurm-relay`) that speaks the worker protocol on
 * its stdin/stdout, and the job runs an agent (`kfoundry slurm-agent`) that connects back to
 * the relay over TCP and bridges it to a `kfoundry-worker` started inside the allocation.
 * A job that dies or is pre-empted is resubmitted and the request it was serving is sent
 * again; the engine only sees a slower reply.
 */
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/evaluator.h"

namespace kf {

/** How each worker job is submitted (sbatch options) and reached. */
struct SlurmOptions {
    std::string partition;                 ///< --partition; empty: the cluster's default
    int gpus = -1;                         ///< --gpus per job; -1: one on the CUDA backend, none on the host
    std::string time_limit;                ///< --time (minutes, or [D-]HH:MM:SS); empty: the partition's default
    std::string account;                   ///< --account; empty: the user's default
    std::vector<std::string> sbatch_args;  ///< further sbatch options, passed as given
    /** Job scripts, connection files and the jobs' logs; must be on a filesystem the nodes see. */
    std::filesystem::path spool_dir;
    /** The address jobs connect back to; empty: this host's name and its IPv4 addresses, tried in turn. */
    std::string connect_host;
    int max_requeues = 3;  ///< job losses tolerated while one request is in flight

    nlohmann::json to_json() const;
    static SlurmOptions from_json(const nlohmann::json& j);
};

enum class ExecutorKind { Local, Slurm };

/** local or slurm; nullopt for anything else. */
std::optional<ExecutorKind> executor_from_string(const std::string& s);

struct ExecutorOptions {
    ExecutorKind kind = ExecutorKind::Local;
    SlurmOptions slurm;
};

/**
 * The worker configuration that runs `worker` under the executor: unchanged for the local
 * executor; for Slurm, the command line of a relay that submits the worker as a job (the
 * worker then uses device 0 of its allocation). `kfoundry` is the executable of the relay and
 * agent; default: next to the running executable.
 */
WorkerConfig executor_worker(const ExecutorOptions& ex, const WorkerConfig& worker,
                             const std::filesystem::path& kfoundry = {});

/** The command line of the worker a configuration describes. */
std::vector<std::string> worker_argv(const WorkerConfig& worker);

/** True when sbatch, squeue and scancel are on the PATH; otherwise `why` says which is missing. */
bool slurm_available(std::string* why = nullptr);

/**
 * Submits `script` as one Slurm job array of `count` elements (sbatch --array=0-<count-1>),
 * with the options' partition, account, time limit, GPUs (per element) and extra arguments;
 * each element's output goes to spool_dir/kf-search-<array>_<element>.log. Returns the array's
 * job id; throws kf::Error with sbatch's message when it refuses.
 */
std::string submit_job_array(const SlurmOptions& opt, const std::filesystem::path& script, int count,
                             const std::string& name);

/** `kfoundry slurm-relay CONFIG_JSON`: the engine's end of a Slurm worker. Returns an exit code. */
int slurm_relay_main(const std::string& config_json);
/** `kfoundry slurm-agent CONNECT_FILE`: runs inside the job; starts the worker, bridges it to the relay. */
int slurm_agent_main(const std::filesystem::path& connect_file);

}  // namespace kf
