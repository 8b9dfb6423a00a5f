#include "evolve_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>

#include "kf/engine.h"
#include "kf/error.h"
#include "kf/library.h"
#include "kf/llm.h"
#include "kf/paths.h"
#include "kf/run_summary.h"
#include "kf/task.h"

namespace kf::cli {

using nlohmann::json;

namespace {

std::atomic<bool> g_stop{false};

void on_interrupt(int) { g_stop = true; }

/** The live display: one redrawn status line on a terminal, plain lines otherwise. */
class ProgressDisplay {
public:
    ProgressDisplay(std::string task, int budget, int islands, std::ostream& out, int fd)
        : task_(std::move(task)), budget_(budget), best_(static_cast<std::size_t>(islands), 0.0), out_(out),
          tty_(isatty(fd) != 0), start_(std::chrono::steady_clock::now()) {}

    void handle(const SearchEvent& e) {
        if (e.kind == EventKind::Seeded || e.kind == EventKind::Evaluated) {
            ++evaluations_;
            if (e.status && *e.status != Status::Ok) ++failures_[std::string(to_string(*e.status))];
            double fit = e.data.value("fitness", 0.0);
            if (e.island >= 0 && static_cast<std::size_t>(e.island) < best_.size())
                best_[static_cast<std::size_t>(e.island)] = std::max(best_[static_cast<std::size_t>(e.island)], fit);
        }
        if (e.kind == EventKind::Log) line(e.message);
        else if (e.kind == EventKind::Improved || e.kind == EventKind::Migrated || e.kind == EventKind::Stopped)
            line(std::string(to_string(e.kind)) + ": " + e.message);
        if (e.kind == EventKind::Stopped) device_lines(e.data.value("pipeline", nlohmann::json::object()));
        if (tty_) redraw();
        else if (evaluations_ % 10 == 0 && (e.kind == EventKind::Seeded || e.kind == EventKind::Evaluated))
            out_ << status() << "\n" << std::flush;
    }
    void finish() {
        if (tty_) out_ << "\n";
        out_ << status() << "\n" << std::flush;
    }

private:
    /** How busy the devices were (evaluating) and how long they stood idle waiting for
     *  compiles; throughput per device, where the run used more than one. */
    void device_lines(const nlohmann::json& pipeline) {
        const double wall = pipeline.value("wall_s", 0.0);
        if (wall > 0) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "device busy %.1f s of %.1f s (%.0f%%), idle waiting for compiles %.1f s; %d evaluations, %.1f/min",
                          pipeline.value("device_busy_s", 0.0), wall, 100 * pipeline.value("device_busy_s", 0.0) / wall,
                          pipeline.value("device_starved_s", 0.0), pipeline.value("evaluations", 0),
                          60.0 * pipeline.value("evaluations", 0) / wall);
            line(buf);
        }
        const nlohmann::json devices = pipeline.value("devices", nlohmann::json::array());
        if (devices.size() < 2) return;
        for (const auto& d : devices) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "device %d: %d evaluations, %.1f/min, busy %.0f s%s", d.value("device", 0),
                          d.value("evaluations", 0), d.value("per_minute", 0.0), d.value("busy_s", 0.0),
                          d.value("out", false) ? " (taken out)" : "");
            line(buf + (d.value("out", false) ? ": " + d.value("reason", std::string()) : std::string()));
        }
    }

    std::string status() const {
        double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() / 60.0;
        char head[160];
        std::snprintf(head, sizeof head, "%s %d/%s evals, %.1f evals/min, best per island:", task_.c_str(), evaluations_,
                      budget_ > 0 ? std::to_string(budget_).c_str() : "-", minutes > 0 ? evaluations_ / minutes : 0.0);
        std::string s = head;
        for (double b : best_) {
            char buf[32];
            std::snprintf(buf, sizeof buf, " %.2fx", b);
            s += buf;
        }
        if (!failures_.empty()) {
            s += ", failures:";
            for (const auto& [k, v] : failures_) s += " " + k + " " + std::to_string(v);
        }
        return s;
    }
    void redraw() const {
        int width = 24;
        int filled = budget_ > 0 ? std::min(width, evaluations_ * width / budget_) : 0;
        out_ << "\r\033[K[" << std::string(static_cast<std::size_t>(filled), '#')
                  << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << status() << std::flush;
    }
    void line(const std::string& text) const {
        if (tty_) out_ << "\r\033[K";
        out_ << "  " << text << "\n";
    }

    std::string task_;
    int budget_;
    std::vector<double> best_;
    std::ostream& out_;
    bool tty_;
    int evaluations_ = 0;
    std::map<std::string, int> failures_;
    std::chrono::steady_clock::time_point start_;
};

/** The LLM experts of a configuration file; null when none is given (the run's log says so). Throws ConfigError / Error. */
std::shared_ptr<llm::LlmEnsemble> load_llm(const std::string& file) {
    if (file.empty()) return nullptr;
    return llm::LlmEnsemble::create(llm::load_llm_config(file), resources_dir() / "prompts");
}

void print_llm_usage(const llm::LlmEnsemble& ens) {
    llm::UsageTotals t = ens.accounting().totals();
    std::printf("LLM usage: %lld calls, %lld input + %lld output tokens, cost %.4f\n", static_cast<long long>(t.calls),
                static_cast<long long>(t.input_tokens), static_cast<long long>(t.output_tokens), t.cost);
    for (const auto& [expert, u] : ens.accounting().per_expert())
        std::printf("  %-16s %3lld calls, %8lld tokens, cost %.4f\n", expert.c_str(), static_cast<long long>(u.calls),
                    static_cast<long long>(u.tokens()), u.cost);
    std::string why;
    if (ens.budget_spent(&why)) std::cout << why << "\n";
}

}  // namespace

int run_evolve(const EvolveArgs& args) {
    auto backend = backend_from_string(args.backend);
    if (!backend) {
        std::cerr << "kfoundry: unknown backend '" << args.backend << "' (cuda or host)\n";
        return kExitUsage;
    }
    std::vector<Task> tasks;
    for (const auto& t : args.tasks) {
        auto dir = resolve_task(t);
        if (!dir) {
            std::cerr << "kfoundry: no task '" << t << "'\n";
            return kExitUsage;
        }
        tasks.push_back(load_task(*dir));
        if (!tasks.back().supports(*backend)) {
            std::cerr << "kfoundry: task " << tasks.back().name << " has no " << args.backend << " reference\n";
            return kExitUsage;
        }
    }
    std::shared_ptr<llm::LlmEnsemble> ensemble;
    try {
        ensemble = load_llm(args.llm_config);
    } catch (const Error& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitUsage;
    }
    EvaluatorConfig cfg;
    cfg.worker.backend = *backend;
    if (!args.worker.empty()) cfg.worker.worker = args.worker;
    cfg.worker = executor_worker(args.executor.options, cfg.worker);
    std::vector<int> devices = args.devices.empty() ? std::vector<int>{0} : args.devices;
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    cfg.worker.device = devices.front();
    // The engine owns the runs: their devices' workers, the project's store connection, and
    // each run's life from its creation to done, stopped or failed.
    Engine engine;
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    // With --json the progress goes to stderr and stdout carries the summary alone.
    std::ostream& out = args.as_json ? std::cerr : std::cout;
    const int out_fd = args.as_json ? STDERR_FILENO : STDOUT_FILENO;
    json summaries = json::array();
    bool all_improved = true, any_without_correct = false;
    for (const Task& task : tasks) {
        ProgressDisplay display(task.name, args.options.search.budget, args.options.search.islands.islands, out, out_fd);
        out << (args.options.resume ? "resuming " : "evolving ") << task.name << " on the " << args.backend
            << " backend, project " << args.project.string() << "\n";
        SearchRequest request;
        request.project = args.project;
        request.create_project = true;
        request.task = task;
        request.evaluator = cfg;
        request.more_devices.assign(devices.begin() + 1, devices.end());
        request.options = args.options;
        // The engine adds the LLM experts, feeds their bandit, asks for insights, keeps their
        // accounting in the run state and stops the run when a budget is spent.
        request.options.llm = ensemble;
        SearchCallbacks callbacks;
        callbacks.on_event = [&](const SearchEvent& e, const ProjectView&) { display.handle(e); };
        callbacks.should_stop = [] { return g_stop.load(); };
        EvolveOutcome result;
        try {
            result = engine.run_search(request, callbacks);
        } catch (const NoDevice& e) {
            std::cerr << "kfoundry: " << e.what() << "\n";
            return kExitNoDevice;
        }
        display.finish();
        out << "run " << result.run_id << ": " << to_string(result.result.stop_reason) << "\n";
        if (ensemble) print_llm_usage(*ensemble);
        RunSummary summary = summarize_run(ProjectView::open(args.project), result.run_id, args.min_gain);
        out << summary.line() << "\n" << std::flush;
        json sj = summary.to_json();
        sj["stop_reason"] = to_string(result.result.stop_reason);
        summaries.push_back(sj);
        all_improved = all_improved && summary.outcome == RunOutcome::Improved;
        any_without_correct = any_without_correct || summary.outcome == RunOutcome::NoCorrect;
        if ((ensemble && ensemble->budget_spent()) || g_stop) break;
    }
    if (args.as_json) std::cout << (summaries.size() == 1 ? summaries[0] : summaries).dump(2) << "\n";
    if (any_without_correct) return kExitCandidateFailed;
    return all_improved ? kExitOk : kExitNoImprovement;
}

std::optional<std::pair<CandidateRecord, EvaluationRecord>> best_in_project(ProjectStore& store, const std::string& task) {
    std::optional<std::pair<CandidateRecord, EvaluationRecord>> best;
    for (const auto& r : store.runs()) {
        if (!task.empty() && r.task != task) continue;
        auto b = store.best(r.id);
        if (b && (!best || b->second.fitness > best->second.fitness)) best = b;
    }
    return best;
}

int list_runs(const std::filesystem::path& project, bool as_json) {
    ProjectStore store = ProjectStore::open(project);
    json out = json::array();
    for (const auto& r : store.runs()) {
        auto best = store.best(r.id);
        const auto evaluations = store.evaluations(r.id);
        int evals = static_cast<int>(evaluations.size());
        double fit = best ? best->second.fitness : 0.0;
        // Where the evaluations ran (docs/cluster.md), in the order each place first appears.
        std::vector<std::pair<std::string, int>> places;
        for (const auto& e : evaluations) {
            if (e.ran_on.empty()) continue;
            auto it = std::find_if(places.begin(), places.end(), [&](const auto& p) { return p.first == e.ran_on; });
            if (it == places.end()) places.emplace_back(e.ran_on, 1);
            else ++it->second;
        }
        if (as_json) {
            json ran_on = json::array();
            for (const auto& [where, n] : places) ran_on.push_back({{"where", where}, {"evaluations", n}});
            out.push_back({{"run", r.id}, {"task", r.task}, {"state", std::string(to_string(r.state))}, {"evaluations", evals}, {"best", fit},
                           {"stop_reason", r.stop_reason}, {"created", r.created}, {"ran_on", ran_on}});
        } else {
            std::string where;
            for (std::size_t i = 0; i < places.size() && i < 3; ++i)
                where += (i ? ", " : "") + places[i].first + " (" + std::to_string(places[i].second) + ")";
            if (places.size() > 3) where += " and " + std::to_string(places.size() - 3) + " more";
            std::printf("%4lld  %-18s %-8s %5d evals  best %6.2fx  %s%s%s\n", static_cast<long long>(r.id), r.task.c_str(),
                        std::string(to_string(r.state)).c_str(), evals, fit, r.stop_reason.c_str(), where.empty() ? "" : "  ran on ",
                        where.c_str());
        }
    }
    if (as_json) std::cout << out.dump(2) << "\n";
    return kExitOk;
}

int show_best(const std::filesystem::path& project, const std::string& task, bool as_json) {
    ProjectStore store = ProjectStore::open(project);
    auto best = best_in_project(store, task);
    if (!best) {
        std::cerr << "kfoundry: no correct candidate in " << project.string() << (task.empty() ? "" : " for " + task) << "\n";
        return kExitCandidateFailed;
    }
    const auto& [c, e] = *best;
    if (as_json) {
        std::cout << json{{"candidate", c.id}, {"run", c.run_id}, {"task", c.task}, {"fitness", e.fitness},
                          {"expert", c.expert}, {"tunables", c.tunables}, {"lineage", store.lineage(c.id)},
                          {"diagnosis", e.diagnosis}}.dump(2)
                  << "\n";
    } else {
        std::cout << "candidate " << c.id << " of run " << c.run_id << " (" << c.task << "): " << e.fitness
                  << "x the reference, by " << c.expert << ", tunables " << c.tunables.dump() << "\n";
        std::cout << "lineage:";
        for (auto id : store.lineage(c.id)) std::cout << " " << id;
        std::cout << "\n";
    }
    return kExitOk;
}

}  // namespace kf::cli
