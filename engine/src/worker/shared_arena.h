#pragma once
// Memory shared between the judge and a runner, mapped in both processes at the same
// offsets: host memory (a memfd) on the host backend, device memory exported as a POSIX file
// descriptor (CUDA virtual memory management) on CUDA. The judge fills inputs, poisons
// outputs and reads results there; the reference's outputs never live there.
#include <cstddef>
#include <vector>

#include "device.h"

namespace kf::worker {

class Arena {
public:
    virtual ~Arena() = default;
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    /** The next `bytes` (64-byte aligned) followed by the canary, filled. Throws DeviceFault when full.
     *  The first buffer follows a guard of kCanaryBytes at the arena's start. */
    Buffer alloc(std::size_t bytes);
    /** Bytes needed for buffers of these sizes, canaries and alignment included. */
    static std::size_t needed(std::size_t bytes);
    /** Extra bytes an arena needs besides its buffers: the guard at its start. */
    static constexpr std::size_t kLeadingGuard = kCanaryBytes;
    /** Fills what no buffer took, up to the capacity, with the canary byte: a write past the
     *  last buffer's canary lands there and is caught. Call after the last alloc(). */
    void seal();
    /** The guards that belong to no buffer (the start's, and what seal() filled), as buffers
     *  whose `bytes` bytes must all equal kCanaryByte. */
    std::vector<Buffer> guards() const;
    /** Empties the arena for buffers of another case: the next alloc() starts again at its
     *  start (refilling the guard there), and seal() fills the new unused end. The memory
     *  stays mapped, here and in the runner. */
    void reset() {
        used_ = 0;
        sealed_ = false;
    }

    /** The descriptor a runner maps (passed over the runner's socket). */
    int fd() const { return fd_; }
    /** Bytes the runner maps: the capacity, rounded up to what the memory's kind requires. */
    std::size_t capacity() const { return capacity_; }
    std::size_t offset_of(const void* p) const { return static_cast<std::size_t>(static_cast<const char*>(p) - base_); }

protected:
    Arena() = default;
    /** Sets `n` bytes at `p` (in this arena) to the canary byte. */
    virtual void fill_canary(char* p, std::size_t n) = 0;

    int fd_ = -1;
    char* base_ = nullptr;
    std::size_t capacity_ = 0;

private:
    std::size_t used_ = 0;
    bool sealed_ = false;
};

/** Host memory: one memfd, mapped here and passed to the runner. */
class SharedArena final : public Arena {
public:
    /** Creates and maps `capacity` bytes. Throws DeviceFault when the memory is not there. */
    explicit SharedArena(std::size_t capacity);
    ~SharedArena() override;

private:
    void fill_canary(char* p, std::size_t n) override;
};

}  // namespace kf::worker
