#include "slurm_jobs.h"

#include <chrono>

#include "kf/error.h"
#include "kf/process.h"
#include "kf/text.h"

namespace kf::exec {

namespace {

using util::trim;

}  // namespace

Submission submit_job(const SlurmOptions& opt, const std::filesystem::path& script, const std::string& name,
                      const std::vector<std::string>& extra, const std::string& output) {
    std::vector<std::string> argv = {"sbatch",
                                     "--parsable",
                                     "--no-requeue",
                                     "--job-name=" + name,
                                     "--chdir=" + opt.spool_dir.string(),
                                     "--output=" + (opt.spool_dir / output).string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (!opt.partition.empty()) argv.push_back("--partition=" + opt.partition);
    if (!opt.account.empty()) argv.push_back("--account=" + opt.account);
    if (!opt.time_limit.empty()) argv.push_back("--time=" + opt.time_limit);
    if (opt.gpus > 0) argv.push_back("--gpus=" + std::to_string(opt.gpus));
    for (const auto& a : opt.sbatch_args) argv.push_back(a);
    argv.push_back(script.string());
    ProcessResult r = run_process(argv, std::chrono::seconds(60));
    Submission s;
    std::string out = trim(r.output);
    if (r.exit_code != 0 || out.empty()) {
        s.error = r.start_failed ? "sbatch could not be started" : (out.empty() ? "sbatch failed" : out);
        return s;
    }
    // --parsable prints "<job>" or "<job>;<cluster>", possibly after warnings on other lines.
    auto nl = out.find_last_of('\n');
    std::string last = nl == std::string::npos ? out : out.substr(nl + 1);
    s.job = last.substr(0, last.find(';'));
    if (s.job.empty() || s.job.find_first_not_of("0123456789_") != std::string::npos) {
        s.error = "unexpected sbatch output: " + out;
        s.job.clear();
    }
    return s;
}

std::string job_state(const std::string& job) {
    ProcessResult r =
        run_process({"squeue", "--noheader", "--states=all", "--jobs=" + job, "--format=%T"}, std::chrono::seconds(30));
    std::string out = trim(r.output);
    if (r.exit_code == 0) return out.empty() ? "GONE" : out.substr(0, out.find('\n'));
    if (out.find("Invalid job id") != std::string::npos) return "GONE";
    return "UNKNOWN";
}

bool job_alive(const std::string& state) {
    for (const char* s : {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
                          "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", "UNKNOWN"})
        if (state == s) return true;
    return false;
}

void cancel_job(const std::string& job) {
    if (!job.empty()) run_process({"scancel", "--quiet", job}, std::chrono::seconds(30));
}

}  // namespace kf::exec

namespace kf {

std::string submit_job_array(const SlurmOptions& opt, const std::filesystem::path& script, int count,
                             const std::string& name) {
    exec::Submission s =
        exec::submit_job(opt, script, name, {"--array=0-" + std::to_string(count - 1)}, "kf-search-%A_%a.log");
    if (s.job.empty()) throw Error("sbatch refused the job array: " + s.error);
    return s.job;
}

}  // namespace kf
