#include "kf/engine.h"

namespace kf {

Engine::Engine() = default;
Engine::~Engine() = default;

std::shared_ptr<Evaluator> Engine::evaluator(const EvaluatorConfig& cfg) {
    std::string command;
    for (const auto& a : cfg.worker.command) command += a + '\0';
    Key key{cfg.worker.backend, cfg.worker.device, cfg.worker.worker.string(), command};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = evaluators_.find(key);
    if (it == evaluators_.end()) it = evaluators_.emplace(key, std::make_shared<Evaluator>(cfg)).first;
    return it->second;
}

std::size_t Engine::evaluators() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return evaluators_.size();
}

}  // namespace kf
