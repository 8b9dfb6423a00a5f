#include "kf/worker_protocol.h"

#include <algorithm>
#include <array>
#include <utility>

namespace kf {

namespace {

constexpr std::array<std::pair<WorkerCommand, std::string_view>, 4> kCommands{{
    {WorkerCommand::Hello, "hello"},
    {WorkerCommand::DeviceInfo, "device_info"},
    {WorkerCommand::Evaluate, "evaluate"},
    {WorkerCommand::Shutdown, "shutdown"},
}};

}  // namespace

std::string_view to_string(WorkerCommand c) {
    for (const auto& [cmd, word] : kCommands)
        if (cmd == c) return word;
    return "hello";  // not reached: every command is in the table
}

std::optional<WorkerCommand> parse_worker_command(std::string_view s) {
    for (const auto& [cmd, word] : kCommands)
        if (word == s) return cmd;
    return std::nullopt;
}

nlohmann::json EvalSettings::to_json() const {
    return {{"trials", trials},           {"time", time},         {"warmup", warmup},
            {"min_time_ms", min_time_ms}, {"min_reps", min_reps}, {"max_reps", max_reps},
            {"precision", precision},     {"rotate_buffers", rotate_buffers}, {"seed", seed},
            {"memory_mb", memory_mb}};
}

EvalSettings EvalSettings::from_json(const nlohmann::json& j) {
    EvalSettings s;
    s.trials = std::clamp(j.value("trials", s.trials), 1, 100);
    s.time = j.value("time", s.time);
    s.warmup = std::clamp(j.value("warmup", s.warmup), 0, 1000);
    s.min_time_ms = std::clamp(j.value("min_time_ms", s.min_time_ms), 0.0, 60000.0);
    s.min_reps = std::clamp(j.value("min_reps", s.min_reps), 1, 100000);
    s.max_reps = std::clamp(j.value("max_reps", s.max_reps), s.min_reps, 1000000);
    s.precision = std::clamp(j.value("precision", s.precision), 0.0, 1.0);
    s.rotate_buffers = std::clamp(j.value("rotate_buffers", s.rotate_buffers), 1, 16);
    s.seed = j.value("seed", std::uint64_t{0});
    s.memory_mb = std::clamp<std::uint64_t>(j.value("memory_mb", s.memory_mb), 64, 1ull << 20);
    return s;
}

}  // namespace kf
