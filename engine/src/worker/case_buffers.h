#pragma once
// The tensors of one task case on a device: sets of input/output buffers in manifest order,
// filled, poisoned, checksummed and passed to an entry point.
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "device.h"
#include "kf/task.h"
#include "rng.h"
#include "shared_arena.h"

namespace kf::worker {

/** Thrown when the candidate itself faults (as opposed to the worker's own device work). */
struct CandidateFault {
    std::string message;
    bool sticky;
    bool integrity = false;  ///< it attacked the evaluation itself (e.g. forged a reply)
    std::string check = "runner_channel";  ///< the integrity check that failed, when `integrity`
};

/** One set of tensors (inputs and outputs) for one case, in manifest order. */
struct TensorSet {
    std::vector<Buffer> buffers;
    std::vector<void*> ptrs;
};

/** Buffers and arguments of one task case; owns its allocations. */
class CaseContext {
public:
    CaseContext(Device& dev, const Task& task, const TaskCase& c) : dev_(dev), task_(task), case_(c) {
        for (const auto& name : task.size_names) sizes_.push_back(static_cast<long long>(c.sizes.at(name)));
        for (const auto& p : task.params) params_.push_back(task.param_value(p, c));
        for (const auto& t : task.tensors) {
            counts_.push_back(task.elements_of(t, c));
            bytes_.push_back(static_cast<std::size_t>(counts_.back()) * size_of(t.dtype));
        }
    }
    CaseContext(const CaseContext&) = delete;
    CaseContext& operator=(const CaseContext&) = delete;
    ~CaseContext() {
        for (auto& s : sets_)
            for (auto& b : s.buffers)
                if (b.ptr && !b.external) dev_.release(b);
    }

    /** Arena bytes one set takes (canaries and alignment included). */
    std::size_t arena_set_bytes() const {
        std::size_t total = 0;
        for (auto b : bytes_) total += Arena::needed(b);
        return total;
    }

    std::size_t set_bytes() const {
        std::size_t total = 0;
        for (auto b : bytes_) total += b;
        return total;
    }

    /** A new set in the device's memory, or in `arena` (shared with a runner) when given. */
    TensorSet& new_set(Arena* arena = nullptr) {
        sets_.emplace_back();
        TensorSet& s = sets_.back();
        for (std::size_t i = 0; i < task_.tensors.size(); ++i) {
            s.buffers.push_back(arena ? arena->alloc(bytes_[i]) : dev_.alloc(bytes_[i]));
            s.ptrs.push_back(s.buffers.back().ptr);
        }
        return s;
    }

    /** Draws every input of `s` from `seed` (one stream per tensor). */
    void fill_inputs(TensorSet& s, std::uint64_t seed) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i) {
            const auto& t = task_.tensors[i];
            if (t.role == TensorRole::Input)
                dev_.fill_random(s.buffers[i], t.dtype, counts_[i], t.init, splitmix64(seed + i));
        }
    }

    void poison_outputs(TensorSet& s, std::uint8_t byte) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            if (task_.tensors[i].role == TensorRole::Output) dev_.fill_bytes(s.buffers[i], 0, bytes_[i], byte);
    }

    /** Copies the inputs of `from` into `to` (the reference and candidate see identical inputs). */
    void copy_inputs(TensorSet& to, const TensorSet& from) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            if (task_.tensors[i].role == TensorRole::Input) dev_.copy(to.buffers[i], from.buffers[i], bytes_[i]);
    }

    std::vector<std::uint64_t> input_checksums(TensorSet& s) {
        std::vector<std::uint64_t> out;
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            out.push_back(task_.tensors[i].role == TensorRole::Input ? dev_.checksum(s.buffers[i]) : 0);
        return out;
    }

    /** The first tensor whose canary was overwritten, or empty. */
    std::string overwritten_canary(TensorSet& s) {
        for (std::size_t i = 0; i < task_.tensors.size(); ++i)
            if (!dev_.bytes_equal(s.buffers[i], bytes_[i], kCanaryBytes, kCanaryByte)) return task_.tensors[i].name;
        return {};
    }

    std::function<void()> call(EntryFn fn, TensorSet& s) {
        void* stream = dev_.stream();
        return [this, fn, &s, stream] { fn(s.ptrs.data(), sizes_.data(), params_.data(), stream); };
    }

    const std::vector<long long>& sizes() const { return sizes_; }
    const std::vector<double>& params() const { return params_; }
    const std::vector<std::int64_t>& counts() const { return counts_; }
    const std::vector<std::size_t>& bytes() const { return bytes_; }
    const TaskCase& task_case() const { return case_; }

private:
    Device& dev_;
    const Task& task_;
    const TaskCase& case_;
    std::vector<long long> sizes_;
    std::vector<double> params_;
    std::vector<std::int64_t> counts_;
    std::vector<std::size_t> bytes_;
    std::deque<TensorSet> sets_;
};

/** Runs fn (a candidate call) and synchronises; a device fault becomes a CandidateFault. */
void run_candidate(Device& dev, const std::function<void()>& fn);

}  // namespace kf::worker
