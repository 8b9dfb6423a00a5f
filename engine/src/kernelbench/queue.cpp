// The search's evaluation queue over the Python worker: children compiled in parallel
// while those already built are evaluated one at a time on the worker's GPU.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <future>
#include <mutex>

#include "kf/kernelbench_search.h"
#include "kf/tunables.h"

namespace kf::kb {

namespace fs = std::filesystem;

namespace {

/**
 * Children compile as soon as they are submitted, `jobs` at a time, each in a process of its
 * own (`kb_worker.py --compile`), while the search's thread evaluates those already compiled
 * on the worker, earliest submitted first: the GPU is not idle while a build runs.
 */
class WorkerQueue final : public EvaluationQueue {
public:
    WorkerQueue(Evaluator& ev, Problem p, EvalOptions opt, int jobs, fs::path files, int capacity,
                std::function<void(const Child&, const Result&)> on_evaluated)
        : ev_(ev),
          p_(std::move(p)),
          opt_(std::move(opt)),
          jobs_(std::max(1, jobs)),
          files_(std::move(files)),
          capacity_(std::max(1, capacity)),
          on_evaluated_(std::move(on_evaluated)) {}
    ~WorkerQueue() override {
        for (auto& c : compiling_) c.info.wait();
    }

    int capacity() const override { return capacity_; }

    void submit(const Child& c) override {
        std::error_code ec;
        fs::create_directories(files_, ec);
        const Proposal& pr = c.proposal;
        std::string src = pr.tunables.empty() ? pr.source : apply_tunables(pr.source, pr.tunables);
        fs::path f = files_ / ("candidate_" + std::to_string(c.id) + ".py");
        std::ofstream(f, std::ios::binary) << src;
        Compiling job{c, f, {}};
        job.info = std::async(std::launch::async, [this, f] {
            Slot slot(*this);
            return ev_.compile_all({f}, 1, opt_.compile_timeout_s).front();
        });
        compiling_.push_back(std::move(job));
    }

    std::optional<std::pair<Child, Diagnosis>> next(std::chrono::milliseconds wait) override {
        if (compiling_.empty()) return std::nullopt;
        auto ready = std::find_if(compiling_.begin(), compiling_.end(), [](const Compiling& c) {
            return c.info.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        });
        if (ready == compiling_.end()) {
            if (compiling_.front().info.wait_for(wait) != std::future_status::ready) return std::nullopt;
            ready = compiling_.begin();
        }
        Compiling c = std::move(*ready);
        compiling_.erase(ready);
        CompileInfo info = c.info.get();
        Result r = ev_.evaluate(p_, c.file, opt_);
        if (info.ok && r.diagnosis.compile.seconds <= 0) r.diagnosis.compile.seconds = info.seconds;
        ++evaluated_;
        if (on_evaluated_) on_evaluated_(c.child, r);
        return std::make_pair(c.child, std::move(r.diagnosis));
    }

    std::vector<Child> cancel_waiting() override {
        std::vector<Child> out;
        for (auto& c : compiling_) {
            c.info.wait();
            out.push_back(c.child);
        }
        compiling_.clear();
        return out;
    }

    nlohmann::json stats() const override { return {{"evaluated", evaluated_}, {"compile_jobs", jobs_}}; }

private:
    struct Compiling {
        Child child;
        fs::path file;
        std::future<CompileInfo> info;
    };
    /** One of the `jobs` compile slots, held for one build. */
    class Slot {
    public:
        explicit Slot(WorkerQueue& q) : q_(q) {
            std::unique_lock lock(q_.mu_);
            q_.cv_.wait(lock, [this] { return q_.busy_ < q_.jobs_; });
            ++q_.busy_;
        }
        ~Slot() {
            {
                std::lock_guard lock(q_.mu_);
                --q_.busy_;
            }
            q_.cv_.notify_one();
        }
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;

    private:
        WorkerQueue& q_;
    };

    Evaluator& ev_;
    Problem p_;
    EvalOptions opt_;
    int jobs_;
    fs::path files_;
    int capacity_;
    std::function<void(const Child&, const Result&)> on_evaluated_;
    std::deque<Compiling> compiling_;
    std::mutex mu_;
    std::condition_variable cv_;
    int busy_ = 0;
    int evaluated_ = 0;
};

}  // namespace

std::shared_ptr<EvaluationQueue> make_queue(Evaluator& ev, const Problem& p, const EvalOptions& opt, int jobs, fs::path files_dir,
                                            int capacity, std::function<void(const Child&, const Result&)> on_evaluated) {
    return std::make_shared<WorkerQueue>(ev, p, opt, jobs, std::move(files_dir), capacity, std::move(on_evaluated));
}

}  // namespace kf::kb
