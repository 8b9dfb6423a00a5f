// A fixed set of threads compiling queued requests. Every future is fulfilled: with the
// compile result, with a failed result when the compile threw, or with a "cancelled" result
// when the pool is destroyed before the request started.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kf/compile.h"

namespace kf {

namespace {

CompileResult failed_result(std::string message) {
    CompileResult r;
    Diagnostic d;
    d.severity = Severity::Error;
    d.message = std::move(message);
    d.tool = "kfoundry";
    r.info.diagnostics.push_back(std::move(d));
    return r;
}

}  // namespace

struct CompilePool::Impl {
    struct Job {
        CompileRequest request;
        std::promise<CompileResult> promise;
    };

    CompileCache& cache;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Job> queue;
    bool stopping = false;
    std::vector<std::thread> workers;

    explicit Impl(CompileCache& c) : cache(c) {}

    void run() {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] { return stopping || !queue.empty(); });
                if (stopping) return;  // the destructor answers what is left in the queue
                job = std::move(queue.front());
                queue.pop_front();
            }
            // Nothing may escape a worker thread: that would call std::terminate.
            try {
                job.promise.set_value(cache.compile(job.request));
            } catch (const std::exception& e) {
                job.promise.set_value(failed_result(std::string("compile failed: ") + e.what()));
            } catch (...) {
                job.promise.set_value(failed_result("compile failed with an unknown exception"));
            }
        }
    }
};

CompilePool::CompilePool(CompileCache& cache, unsigned threads) : impl_(std::make_unique<Impl>(cache)) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    impl_->workers.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) impl_->workers.emplace_back([this] { impl_->run(); });
}

CompilePool::~CompilePool() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->wake.notify_all();
    // Compiles already running finish (a compiler process is never abandoned); queued ones
    // are answered without compiling, so that no caller waits on a broken promise.
    for (auto& t : impl_->workers) t.join();
    for (auto& job : impl_->queue) job.promise.set_value(failed_result("compile cancelled: the compile pool was shut down"));
}

std::future<CompileResult> CompilePool::submit(CompileRequest req) {
    Impl::Job job{std::move(req), {}};
    std::future<CompileResult> result = job.promise.get_future();
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->stopping) {
            job.promise.set_value(failed_result("compile cancelled: the compile pool was shut down"));
            return result;
        }
        impl_->queue.push_back(std::move(job));
    }
    impl_->wake.notify_one();
    return result;
}

unsigned CompilePool::threads() const { return static_cast<unsigned>(impl_->workers.size()); }

}  // namespace kf
