#include "search_array.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "kf/error.h"
#include "kf/exec.h"
#include "kf/paths.h"
#include "kf/process.h"
#include "kf/task.h"

namespace kf::cli {

namespace {

std::string quote(const std::string& word) {
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

/** The options of one element's `kfoundry evolve`: the same search, the local executor. */
std::vector<std::string> element_options(const EvolveArgs& a) {
    const EvolveOptions& o = a.options;
    std::vector<std::string> out = {"--backend",    a.backend,
                                    "--islands",    std::to_string(o.search.islands.islands),
                                    "--population", std::to_string(o.search.islands.population),
                                    "--budget",     std::to_string(o.search.budget),
                                    "--seed",       std::to_string(o.search.seed),
                                    "--trials",     std::to_string(o.eval.trials),
                                    "--timeout",    number(o.eval.timeout_s),
                                    "--min-time",   number(o.eval.min_time_ms),
                                    "--precision",  number(o.eval.precision),
                                    "--min-gain",   number(a.min_gain),
                                    "--confirm-rounds", std::to_string(o.confirm_rounds)};
    if (o.search.time_limit_s > 0) out.insert(out.end(), {"--time", number(o.search.time_limit_s)});
    if (o.search.stagnation_stop > 0) out.insert(out.end(), {"--stagnation", std::to_string(o.search.stagnation_stop)});
    if (o.resume) out.push_back("--resume");
    if (o.experience_library.empty()) out.push_back("--no-library");
    if (!o.profile) out.push_back("--no-profile");
    if (!a.llm_config.empty())
        out.insert(out.end(), {"--llm-config", std::filesystem::absolute(a.llm_config).string()});
    return out;
}

}  // namespace

int submit_search_array(const EvolveArgs& args) {
    const std::filesystem::path project = std::filesystem::absolute(args.project);
    const SlurmOptions& slurm = args.executor.options.slurm;
    std::vector<std::pair<std::string, std::filesystem::path>> searches;  // project name, task folder
    std::set<std::string> names;
    for (const auto& t : args.tasks) {
        auto dir = resolve_task(t);
        if (!dir) {
            std::cerr << "kfoundry: no task '" << t << "'\n";
            return kExitUsage;
        }
        std::string name = load_task(*dir).name;
        for (int i = 2; names.count(name); ++i) name = load_task(*dir).name + "-" + std::to_string(i);
        names.insert(name);
        searches.emplace_back(name, std::filesystem::absolute(*dir));
    }
    std::filesystem::create_directories(slurm.spool_dir);
    const std::filesystem::path kfoundry = executable_dir() / "kfoundry";
    std::vector<std::string> common;
    if (!args.worker.empty()) common = {"--worker", std::filesystem::absolute(args.worker).string()};
    const auto options = element_options(args);
    const std::filesystem::path script = slurm.spool_dir / ("kf-search-array-" + std::to_string(::getpid()) + ".sh");
    {
        std::ofstream out(script);
        out << "#!/bin/sh\n# Kernel Foundry: one search per element of this job array (docs/cluster.md).\n"
            << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
        for (std::size_t i = 0; i < searches.size(); ++i) {
            out << i << ") exec " << quote(kfoundry.string());
            for (const auto& c : common) out << " " << quote(c);
            out << " evolve " << quote(searches[i].second.string()) << " --project "
                << quote((project / searches[i].first).string());
            for (const auto& o : options) out << " " << quote(o);
            out << " ;;\n";
        }
        out << "*) echo \"no search for array element $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n";
        if (!out) {
            std::cerr << "kfoundry: cannot write " << script.string() << "\n";
            return kExitError;
        }
    }
    ::chmod(script.c_str(), 0700);
    SlurmOptions opt = slurm;
    if (opt.gpus < 0) opt.gpus = args.backend == "cuda" ? 1 : 0;
    std::string job;
    try {
        job = submit_job_array(opt, script, static_cast<int>(searches.size()), "kf-search");
    } catch (const Error& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitNoDevice;
    }
    std::cout << "submitted job array " << job << ": " << searches.size() << " searches\n";
    for (std::size_t i = 0; i < searches.size(); ++i)
        std::cout << "  " << job << "_" << i << "  " << searches[i].first << "  project "
                  << (project / searches[i].first).string() << "\n";
    std::cout << "logs: " << (slurm.spool_dir / ("kf-search-" + job + "_<element>.log")).string() << "\n"
              << "follow with: squeue --jobs=" << job << "; results: kfoundry runs --project " << project.string()
              << "/<task>\n";
    return kExitOk;
}

}  // namespace kf::cli
