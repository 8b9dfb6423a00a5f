#pragma once
// Runners started ahead of need (docs/sandbox.md, Cost): the next candidate's runner is
// started in its sandbox, its device context and confinement set up, before that candidate is
// known, so that its evaluation finds it waiting. A runner still serves one library only; a
// finished one is ended in the background. What a starting runner does on the device (its
// context, its allocations) is kept out of the calls the judge measures. By default it is
// started when the candidate before it is taken (Ahead::WhileEvaluating): it starts its
// process, sandbox and driver during that candidate's correctness calls and then waits before
// its device, with nothing of its own there, so that those calls need not stop it. It makes
// its context (opened) when the worker has no request (open_while_idle(), one runner at a
// time), or once the candidate before it has taken its own runner set up (KF_RUNNER_OPEN=idle:
// not then), or at the latest when its candidate takes it; before timed calls the judge waits
// until no runner is starting its driver or making its context (settle), and a call measured
// while one opened is still making it stops it (hush). Runners are started `depth` at a time
// (KF_RUNNER_AHEAD_DEPTH, default 4), when none is left: as many contexts as the worker's idle
// time allows are then made ahead. Started once an evaluation is over instead
// (Ahead::AfterEvaluation), runners are opened at once and set themselves up while the worker
// waits for its next request.
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "runner_process.h"

namespace kf::worker {

class RunnerPool {
public:
    /** When the next runner is started. */
    enum class Ahead {
        Off,              ///< each when its candidate is known (KF_RUNNER_AHEAD=0)
        AfterEvaluation,  ///< by prepare(), once an evaluation is over (KF_RUNNER_AHEAD=after)
        /** by take(), while the candidate taken is evaluated (the default): stopped around that
         *  candidate's correctness calls, and waited for before its timed calls */
        WhileEvaluating,
    };
    /** The most runners started ahead at once. */
    static constexpr int kMaxDepth = 16;
    /** `open_next`: the runner next in line makes its context while the candidate just taken
     *  is evaluated (the default), not only while the worker is idle (Ahead::WhileEvaluating). */
    explicit RunnerPool(Ahead ahead, int depth = 1, bool open_next = true)
        : ahead_(ahead), depth_(depth < 1 ? 1 : depth > kMaxDepth ? kMaxDepth : depth), open_next_(open_next) {}
    ~RunnerPool();
    RunnerPool(const RunnerPool&) = delete;
    RunnerPool& operator=(const RunnerPool&) = delete;

    /** A runner with `opt.library` loaded: one started ahead where they were started with the
     *  same options, else a new one (Ahead::WhileEvaluating: where none is left ahead, starts
     *  the next `depth`). Throws as RunnerProcess. */
    std::unique_ptr<RunnerProcess> take(const RunnerOptions& opt);
    /** Between evaluations (Ahead::AfterEvaluation): starts the next `depth` runners, with the
     *  options of the last take(), unless one is started already or none was ever taken. */
    void prepare();
    /** take(), retire(), hush() and unhush() are called from one thread.
     *  Ends `r` in the background (its device context takes a while to go). */
    void retire(std::unique_ptr<RunnerProcess> r);
    /** Around a call the judge measures: the runners started ahead stand still while they are
     *  still setting up, and, with `settled`, runners being ended are gone first (a call that is
     *  not timed need not wait for them: what they give back of the device's memory is told
     *  apart by retiring()). Returns the milliseconds spent stopping runners started ahead
     *  and how many were stopped (0 and 0 where all are set up already, or there is none). */
    struct Hushed {
        double ms = 0;
        int runners = 0;
    };
    Hushed hush(bool settled);
    void unhush();
    /** Waits until every runner being ended is gone, and (Ahead::WhileEvaluating) until the
     *  runners started ahead have started their drivers and those opened have made their
     *  contexts. The others wait before their devices (open_while_idle(), or load()). */
    void settle();
    /** While the worker has no request (Ahead::WhileEvaluating): opens the next runner started
     *  ahead that waits before its device, one at a time. Returns false once none is left to
     *  open or to wait for, true while one is making its context. */
    bool open_while_idle();
    /** Runners are being ended now (their device memory may come back at any moment). Until the
     *  next retire(), false stays false. */
    bool retiring();
    /** Ends the runners started ahead and waits for every runner being ended. */
    void clear();
    /** The choice of KF_RUNNER_AHEAD: "0" Off, "after" AfterEvaluation, else WhileEvaluating. */
    static Ahead ahead_from_environment();
    /** KF_RUNNER_AHEAD_DEPTH: how many runners are started ahead at once (1 to kMaxDepth;
     *  default 4; anything else read as the default). */
    static int depth_from_environment();
    /** KF_RUNNER_OPEN: by default the runner next in line is opened as soon as a candidate is
     *  taken (its context is made around that candidate's correctness calls, which stop it, and
     *  is waited for before the timed calls); "idle" opens runners only while the worker is
     *  idle, or when their candidate takes them. */
    static bool open_next_from_environment();

private:
    static bool same(const RunnerOptions& a, const RunnerOptions& b);
    void reap();

    /** Starts `depth_` runners ahead with `opt` (less its library). */
    void start_spares(const RunnerOptions& opt);

    Ahead ahead_;
    int depth_;
    bool open_next_;
    std::deque<std::unique_ptr<RunnerProcess>> spares_;  ///< started ahead, all with spare_opt_
    RunnerOptions spare_opt_;
    std::optional<RunnerOptions> last_;  ///< the options of the last take()
    std::mutex mu_;
    std::vector<std::unique_ptr<RunnerProcess>> retiring_;
    bool reaping_ = false;  ///< the reaper thread runs (guarded by mu_)
    std::thread reaper_;
};

}  // namespace kf::worker
