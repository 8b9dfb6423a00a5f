// The executor's options and the worker command line each executor runs.
#include <unistd.h>

#include <cstdlib>

#include "kf/exec.h"
#include "kf/process.h"

namespace kf {

using nlohmann::json;

json SlurmOptions::to_json() const {
    return {{"partition", partition},       {"gpus", gpus},
            {"time", time_limit},           {"account", account},
            {"sbatch_args", sbatch_args},   {"spool_dir", spool_dir.string()},
            {"connect_host", connect_host}, {"max_requeues", max_requeues}};
}

SlurmOptions SlurmOptions::from_json(const json& j) {
    SlurmOptions o;
    o.partition = j.value("partition", "");
    o.gpus = j.value("gpus", -1);
    o.time_limit = j.value("time", "");
    o.account = j.value("account", "");
    o.sbatch_args = j.value("sbatch_args", std::vector<std::string>{});
    o.spool_dir = j.value("spool_dir", "");
    o.connect_host = j.value("connect_host", "");
    o.max_requeues = j.value("max_requeues", 3);
    return o;
}

std::optional<ExecutorKind> executor_from_string(const std::string& s) {
    if (s == "local") return ExecutorKind::Local;
    if (s == "slurm") return ExecutorKind::Slurm;
    return std::nullopt;
}

std::vector<std::string> worker_argv(const WorkerConfig& w) {
    if (!w.command.empty()) return w.command;
    std::filesystem::path exe = w.worker.empty() ? executable_dir() / "kfoundry-worker" : w.worker;
    return {std::filesystem::absolute(exe).string(), "--backend", std::string(to_string(w.backend)), "--device",
            std::to_string(w.device)};
}

WorkerConfig executor_worker(const ExecutorOptions& ex, const WorkerConfig& worker,
                             const std::filesystem::path& kfoundry) {
    if (ex.kind == ExecutorKind::Local) return worker;
    WorkerConfig inner = worker;
    inner.device = 0;  // inside the allocation, the job's GPU is the first one it sees
    SlurmOptions opt = ex.slurm;
    if (opt.gpus < 0) opt.gpus = worker.backend == Backend::Cuda && worker.command.empty() ? 1 : 0;
    if (opt.spool_dir.empty()) opt.spool_dir = std::filesystem::current_path() / "kfoundry-slurm";
    opt.spool_dir = std::filesystem::absolute(opt.spool_dir);
    std::filesystem::path exe = kfoundry.empty() ? executable_dir() / "kfoundry" : kfoundry;
    json config = {{"slurm", opt.to_json()},
                   {"worker", worker_argv(inner)},
                   {"kfoundry", std::filesystem::absolute(exe).string()}};
    WorkerConfig out = worker;
    out.command = {std::filesystem::absolute(exe).string(), "slurm-relay", config.dump()};
    // The relay's own log (submissions, losses, resubmissions); the worker's goes to its job's log.
    if (out.log.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(opt.spool_dir, ec);
        out.log = opt.spool_dir / "kf-relay.log";
    }
    return out;
}

bool slurm_available(std::string* why) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (const char* tool : {"sbatch", "squeue", "scancel"}) {
        bool found = false;
        std::size_t start = 0;
        while (!found && start <= dirs.size()) {
            std::size_t end = dirs.find(':', start);
            if (end == std::string::npos) end = dirs.size();
            std::filesystem::path p = std::filesystem::path(dirs.substr(start, end - start)) / tool;
            found = ::access(p.c_str(), X_OK) == 0;
            start = end + 1;
        }
        if (!found) {
            if (why) *why = std::string(tool) + " is not on the PATH (install Slurm's client tools)";
            return false;
        }
    }
    return true;
}

}  // namespace kf
