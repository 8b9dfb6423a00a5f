// The search's evaluation queue over the Python worker: children compiled in parallel,
// then evaluated one at a time on the worker's GPU.
#include <deque>
#include <fstream>

#include "kf/kernelbench_search.h"
#include "kf/tunables.h"

namespace kf::kb {

namespace fs = std::filesystem;

namespace {

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

    int capacity() const override { return capacity_; }
    void submit(const Child& c) override { waiting_.push_back(c); }

    std::optional<std::pair<Child, Diagnosis>> next(std::chrono::milliseconds) override {
        if (compiled_.empty() && !waiting_.empty()) compile_waiting();
        if (compiled_.empty()) return std::nullopt;
        Compiled c = std::move(compiled_.front());
        compiled_.pop_front();
        Result r = ev_.evaluate(p_, c.file, opt_);
        if (c.info.ok && r.diagnosis.compile.seconds <= 0) r.diagnosis.compile.seconds = c.info.seconds;
        ++evaluated_;
        if (on_evaluated_) on_evaluated_(c.child, r);
        return std::make_pair(c.child, std::move(r.diagnosis));
    }

    std::vector<Child> cancel_waiting() override {
        std::vector<Child> out;
        for (auto& c : compiled_) out.push_back(c.child);
        for (auto& c : waiting_) out.push_back(c);
        compiled_.clear();
        waiting_.clear();
        return out;
    }

    nlohmann::json stats() const override { return {{"evaluated", evaluated_}, {"compile_batches", batches_}}; }

private:
    struct Compiled {
        Child child;
        fs::path file;
        CompileInfo info;
    };

    /** Every waiting child written to its file and compiled, in parallel. */
    void compile_waiting() {
        std::vector<fs::path> paths;
        std::vector<Child> batch(waiting_.begin(), waiting_.end());
        waiting_.clear();
        std::error_code ec;
        fs::create_directories(files_, ec);
        for (const auto& c : batch) {
            const Proposal& pr = c.proposal;
            std::string src = pr.tunables.empty() ? pr.source : apply_tunables(pr.source, pr.tunables);
            fs::path f = files_ / ("candidate_" + std::to_string(c.id) + ".py");
            std::ofstream(f, std::ios::binary) << src;
            paths.push_back(f);
        }
        auto infos = ev_.compile_all(paths, jobs_, opt_.compile_timeout_s);
        ++batches_;
        for (std::size_t i = 0; i < batch.size(); ++i)
            compiled_.push_back({batch[i], paths[i], i < infos.size() ? infos[i] : CompileInfo{}});
    }

    Evaluator& ev_;
    Problem p_;
    EvalOptions opt_;
    int jobs_;
    fs::path files_;
    int capacity_;
    std::function<void(const Child&, const Result&)> on_evaluated_;
    std::deque<Child> waiting_;
    std::deque<Compiled> compiled_;
    int evaluated_ = 0, batches_ = 0;
};

}  // namespace

std::shared_ptr<EvaluationQueue> make_queue(Evaluator& ev, const Problem& p, const EvalOptions& opt, int jobs, fs::path files_dir,
                                            int capacity, std::function<void(const Child&, const Result&)> on_evaluated) {
    return std::make_shared<WorkerQueue>(ev, p, opt, jobs, std::move(files_dir), capacity, std::move(on_evaluated));
}

}  // namespace kf::kb
