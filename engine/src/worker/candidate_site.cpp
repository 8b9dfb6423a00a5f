#include "candidate_site.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace kf::worker {

namespace {

class InProcessSite final : public CandidateSite {
public:
    InProcessSite(Device& dev, EntryFn fn, bool blame) : dev_(dev), fn_(fn), blame_(blame) {}

    std::vector<TensorSet*> new_sets(CaseContext& cc, std::size_t count) override {
        cc_ = &cc;
        sets_.clear();
        for (std::size_t i = 0; i < count; ++i) sets_.push_back(&cc.new_set());
        return sets_;
    }

    CallTime call(std::size_t i) override {
        auto fn = cc_->call(fn_, *sets_.at(i));
        if (!blame_) return dev_.timed_call(fn);
        try {
            return dev_.timed_call(fn);
        } catch (const DeviceFault& f) {
            throw CandidateFault{f.what(), f.sticky()};
        }
    }

    LaunchReport account(std::size_t i, int late_work_ms) override {
        try {
            LaunchReport r = dev_.account_launches(cc_->call(fn_, *sets_.at(i)), late_work_ms);
            dev_.synchronize();
            return r;
        } catch (const DeviceFault& f) {
            throw CandidateFault{f.what(), f.sticky()};
        }
    }

private:
    Device& dev_;
    EntryFn fn_;
    bool blame_;
    CaseContext* cc_ = nullptr;
    std::vector<TensorSet*> sets_;
};

class RunnerSite final : public CandidateSite {
public:
    RunnerSite(Device& dev, std::unique_ptr<RunnerProcess> r, bool gpu, RunnerPool* pool)
        : dev_(dev), runner_(std::move(r)), pool_(pool), gpu_(gpu) {}
    ~RunnerSite() override {
        if (pool_) pool_->retire(std::move(runner_));
    }

    std::vector<TensorSet*> new_sets(CaseContext& cc, std::size_t count) override {
        Clock clock(times_.bind_ms);
        const std::size_t need = Arena::kLeadingGuard + count * cc.arena_set_bytes();
        // Making and mapping shared memory (in both processes) costs milliseconds on CUDA: a
        // case that fits the memory the runner already maps is placed there again.
        const bool fits = arena_ && need <= arena_->capacity();
        if (fits) {
            arena_->reset();
        } else {
            arena_.reset();
            arena_ = dev_.new_arena(std::max(need, reserved_));
            ++times_.arenas;
        }
        std::vector<TensorSet*> sets;
        std::vector<std::vector<std::size_t>> offsets;
        for (std::size_t i = 0; i < count; ++i) {
            TensorSet& s = cc.new_set(arena_.get());
            sets.push_back(&s);
            std::vector<std::size_t> o;
            for (const auto& b : s.buffers) o.push_back(arena_->offset_of(b.ptr));
            offsets.push_back(std::move(o));
        }
        arena_->seal();
        runner_->bind(*arena_, cc.sizes(), cc.params(), offsets, !fits);
        return sets;
    }

    void reserve(std::size_t arena_bytes) override { reserved_ = arena_bytes; }

    CallTime call(std::size_t i) override {
        Quiet quiet = quiet_call();
        // The GPU switches from the judge's context to the runner's before the clock starts.
        if (gpu_) {
            Clock clock(times_.arm_ms);
            runner_->arm();
        }
        CallTime t;
        {
            Clock clock(times_.call_ms);
            t = runner_->call(i);
        }
        if (gpu_ && bound_ms_ > 0) t.event_ms = std::max(t.event_ms, t.wall_ms - bound_ms_);
        count_device_memory(quiet.free_before, quiet.others_freeing);
        ++times_.calls;
        return t;
    }

    LaunchReport account(std::size_t i, int late_work_ms) override {
        if (!gpu_) {
            call(i);
            LaunchReport r;
            r.note = "no kernel launches on the host backend";
            return r;
        }
        Quiet quiet = quiet_call();
        LaunchReport r;
        {
            Clock clock(times_.account_ms);
            r = runner_->account(i, late_work_ms);
        }
        r.note += std::string(r.note.empty() ? "" : "; ") + "counted by CUPTI in the candidate's process";
        count_device_memory(quiet.free_before, quiet.others_freeing);
        return r;
    }

    void settle() override {
        Clock clock(times_.settle_ms);
        if (pool_) pool_->settle();
        settled_ = true;
    }

    void freeze() override {
        Clock clock(times_.freeze_ms);
        runner_->freeze();
    }
    void thaw() override {
        Clock clock(times_.freeze_ms);
        runner_->thaw();
    }
    void count() override {
        Clock clock(times_.count_ms);
        runner_->count();
    }

    RunnerActivity activity() const override { return runner_->activity(); }

    MappedFiles mapped() const override {
        Clock clock(times_.mapped_ms);
        return runner_->mapped();
    }

    std::vector<Buffer> guards() const override { return arena_ ? arena_->guards() : std::vector<Buffer>{}; }

    std::vector<std::string> notes() const override { return runner_->warnings(); }

    void bound_by_overhead(double ms) override { bound_ms_ = ms; }

    void cap_device_memory(std::uint64_t bytes) override { memory_.cap_mib = static_cast<double>(bytes) / (1 << 20); }
    DeviceMemoryUse device_memory() const override { return memory_; }

    nlohmann::json phase_times() const override {
        return {{"calls", times_.calls},         {"arenas", times_.arenas},   {"bind_ms", times_.bind_ms},
                {"hush_ms", times_.hush_ms},     {"hold_ms", times_.hold_ms}, {"holds", times_.holds},
                {"settled_holds", times_.settled_holds},
                {"sync_ms", times_.sync_ms},     {"settle_ms", times_.settle_ms}, {"account_ms", times_.account_ms},
                {"freeze_ms", times_.freeze_ms}, {"mapped_ms", times_.mapped_ms},
                {"memory_ms", times_.memory_ms}, {"arm_ms", times_.arm_ms},   {"call_ms", times_.call_ms},
                {"count_ms", times_.count_ms}};
    }

private:
    struct Times {
        int calls = 0;
        int arenas = 0;  ///< shared memory made (new_sets that did not fit the last)
        int holds = 0;   ///< calls before which the runner started ahead was still setting up
        int settled_holds = 0;  ///< of them, after settle() (the timed calls and the check after them)
        double hold_ms = 0, sync_ms = 0;  ///< of hush_ms: stopping that runner; the judge's device sync
        double bind_ms = 0, hush_ms = 0, memory_ms = 0, arm_ms = 0, call_ms = 0, count_ms = 0;
        double settle_ms = 0, account_ms = 0, freeze_ms = 0, mapped_ms = 0;
    };
    /** Adds the wall time of its scope to a total of Times. */
    struct Clock {
        explicit Clock(double& into) : total(into), t0(std::chrono::steady_clock::now()) {}
        ~Clock() { total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
        Clock(const Clock&) = delete;
        Clock& operator=(const Clock&) = delete;
        double& total;
        std::chrono::steady_clock::time_point t0;
    };

    std::int64_t free_memory() {
        Clock clock(times_.memory_ms);
        return dev_.free_device_memory();
    }

    /** A call the judge measures: the runner started ahead stays out of it (runner_pool.h)
     *  until the call's scope ends; the device's free memory is read before it. */
    struct Quiet {
        explicit Quiet(RunnerPool* p) : pool(p) {}
        Quiet(Quiet&& o) noexcept : pool(std::exchange(o.pool, nullptr)), others_freeing(o.others_freeing), free_before(o.free_before) {}
        ~Quiet() {
            if (pool) pool->unhush();
        }
        Quiet(const Quiet&) = delete;
        Quiet& operator=(const Quiet&) = delete;
        Quiet& operator=(Quiet&&) = delete;
        RunnerPool* pool;
        bool others_freeing = false;  ///< runners of earlier candidates were being ended
        std::int64_t free_before = -1;
    };

    /** Before a call or an accounted call: the runners started ahead held where they are still
     *  setting up, and (once settled) runners being ended gone; what the judge wrote (inputs,
     *  poison, the cache flush) complete before the runner's context starts reading it; then
     *  the device's free memory. */
    Quiet quiet_call() {
        Quiet q(pool_);
        {
            Clock clock(times_.hush_ms);
            if (pool_) {
                const RunnerPool::Hushed held = pool_->hush(settled_);
                times_.hold_ms += held.ms;
                if (held.runners > 0) ++times_.holds;
                if (held.runners > 0 && settled_) ++times_.settled_holds;
            }
            Clock sync(times_.sync_ms);
            dev_.synchronize();
        }
        // Asked first: once false it stays false until the next retire(), so memory that comes
        // back after free_before is read is this call's own.
        q.others_freeing = retiring();
        q.free_before = gpu_ ? free_memory() : -1;
        return q;
    }

    /** Runners of earlier candidates are still being ended (before settle()). */
    bool retiring() { return !settled_ && pool_ && pool_->retiring(); }

    /** What the call just made took of the device's memory. The judge does no device work of
     *  its own during a call, so the difference is the runner's (or another process's on a
     *  shared device: a worker owns its GPU). While `others_freeing` (runners of earlier
     *  candidates were being ended), memory that came back is theirs as likely as this one's:
     *  the call is taken to have given back nothing. */
    void count_device_memory(std::int64_t free_before, bool others_freeing) {
        if (free_before < 0) return;
        const std::int64_t free_after = free_memory();
        if (free_after < 0) return;
        held_ += others_freeing ? std::max<std::int64_t>(free_before - free_after, 0) : free_before - free_after;
        const double held_mib = static_cast<double>(held_) / (1 << 20);
        memory_.measured = true;
        if (++memory_.calls == 1) first_held_mib_ = held_mib;
        memory_.peak_mib = std::max(memory_.peak_mib, held_mib);
        memory_.growth_mib = held_mib - first_held_mib_;
        if (memory_.cap_mib > 0 && held_mib > memory_.cap_mib)
            throw CandidateFault{"the candidate holds " + std::to_string(static_cast<long long>(held_mib)) +
                                     " MiB of device memory after a call, over the cap of " +
                                     std::to_string(static_cast<long long>(memory_.cap_mib)) + " MiB (memory_mb)",
                                 false, true, "device_memory"};
    }

    mutable Times times_;  // mapped() is const and timed
    bool settled_ = false;
    std::int64_t held_ = 0;
    double first_held_mib_ = 0;
    DeviceMemoryUse memory_;
    Device& dev_;
    std::unique_ptr<RunnerProcess> runner_;
    RunnerPool* pool_;
    std::unique_ptr<Arena> arena_;
    std::size_t reserved_ = 0;
    bool gpu_;
    double bound_ms_ = 0;
};

}  // namespace

std::unique_ptr<CandidateSite> in_process_site(Device& dev, EntryFn fn, bool blame_library) {
    return std::make_unique<InProcessSite>(dev, fn, blame_library);
}

std::unique_ptr<CandidateSite> runner_site(Device& dev, std::unique_ptr<RunnerProcess> runner, bool gpu, RunnerPool* pool) {
    return std::make_unique<RunnerSite>(dev, std::move(runner), gpu, pool);
}

}  // namespace kf::worker
