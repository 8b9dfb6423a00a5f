#include "case_buffers.h"

namespace kf::worker {

void run_candidate(Device& dev, const std::function<void()>& fn) {
    try {
        fn();
        dev.synchronize();
    } catch (const DeviceFault& f) {
        throw CandidateFault{f.what(), f.sticky()};
    }
}

}  // namespace kf::worker
