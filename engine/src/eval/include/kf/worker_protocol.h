#pragma once
// What the engine and a worker say to each other (docs/worker-protocol.md): one JSON object a
// line on the worker's stdin and stdout. Spelled once here for both sides: the engine's
// client (kf::WorkerClient, the evaluators, the Slurm relay) and kfoundry-worker.
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kf {

/** The protocol's version, in the worker's reply to `hello`. */
inline constexpr int kWorkerProtocolVersion = 1;

/** A request's `cmd`. */
enum class WorkerCommand { Hello, DeviceInfo, Evaluate, Shutdown };

/** The spelling on the wire: "hello", "device_info", "evaluate", "shutdown". */
std::string_view to_string(WorkerCommand c);
/** The command spelled `s`; nullopt for a word the protocol does not have. */
std::optional<WorkerCommand> parse_worker_command(std::string_view s);

/**
 * How the worker evaluates a candidate: an `evaluate` request's `options`. The engine's
 * kf::EvalOptions adds what stays on its side (its time limit, tunables, a cancel).
 */
struct EvalSettings {
    int trials = 3;            ///< correctness trials per case, each on fresh inputs
    bool time = true;          ///< time the primary case (and the reference)
    int warmup = 3;
    double min_time_ms = 100;  ///< the timed calls stop when they total this, if not before
    int min_reps = 10;
    int max_reps = 1000;
    /** The timed calls stop, after 20 of them (and min_reps), once the median's 95% interval is within this
     *  fraction of it (0: they always run to min_time_ms). */
    double precision = 0.005;
    int rotate_buffers = 3;          ///< input/output sets rotated between timed repetitions
    std::uint64_t seed = 0;          ///< base seed of the trials (0: a fresh one each evaluation)
    std::uint64_t memory_mb = 4096;  ///< address-space limit of the process a host candidate runs in

    nlohmann::json to_json() const;
    /** The settings a request names, each clamped to what the worker accepts; the defaults
     *  for those it does not name. */
    static EvalSettings from_json(const nlohmann::json& j);
};

}  // namespace kf
