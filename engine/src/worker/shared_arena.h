#pragma once
// Host memory shared between the judge and a runner: one memfd mapped in both processes at
// the same offsets. The judge fills inputs, poisons outputs and reads results here; the
// reference's outputs never live here.
#include <cstddef>

#include "device.h"

namespace kf::worker {

class SharedArena {
public:
    /** Creates and maps `capacity` bytes. Throws DeviceFault when the memory is not there. */
    explicit SharedArena(std::size_t capacity);
    ~SharedArena();
    SharedArena(const SharedArena&) = delete;
    SharedArena& operator=(const SharedArena&) = delete;

    /** The next `bytes` (64-byte aligned) followed by the canary, filled. Throws DeviceFault when full. */
    Buffer alloc(std::size_t bytes);
    /** Bytes needed for buffers of these sizes, canaries and alignment included. */
    static std::size_t needed(std::size_t bytes);

    int fd() const { return fd_; }
    std::size_t capacity() const { return capacity_; }
    std::size_t offset_of(const void* p) const { return static_cast<std::size_t>(static_cast<const char*>(p) - base_); }

private:
    int fd_ = -1;
    char* base_ = nullptr;
    std::size_t capacity_ = 0;
    std::size_t used_ = 0;
};

}  // namespace kf::worker
