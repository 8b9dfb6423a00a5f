#pragma once
// The engine's entry point for one process (docs/architecture.md): the evaluators of the
// process's devices, one per device and worker, shared by every search, hand evaluation and
// profile that the CLI or the app starts there. Sharing one Evaluator means one worker
// process per GPU: a hand evaluation made while a search runs waits for the search's
// current evaluation, then runs on the same worker (Evaluator::evaluate_stage).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "kf/evaluator.h"

namespace kf {

class Engine {
public:
    Engine();
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /**
     * The evaluator of cfg's device: the backend, device, worker executable and worker
     * command pick it. Made with `cfg` on first use; later calls get the same one and their
     * other settings (compile threads, cache folder) do not apply. Thread-safe.
     */
    std::shared_ptr<Evaluator> evaluator(const EvaluatorConfig& cfg);
    /** How many evaluators (and so, at most, worker processes) this engine holds. */
    std::size_t evaluators() const;

private:
    using Key = std::tuple<Backend, int, std::string, std::string>;
    mutable std::mutex mutex_;
    std::map<Key, std::shared_ptr<Evaluator>> evaluators_;
};

}  // namespace kf
