#include "shared_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <string>

namespace kf::worker {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::size_t Arena::needed(std::size_t bytes) { return round_up(bytes + kCanaryBytes); }

Buffer Arena::alloc(std::size_t bytes) {
    if (used_ == 0) {
        if (capacity_ < kLeadingGuard) throw DeviceFault("shared memory too small for its guard", false);
        fill_canary(base_, kLeadingGuard);
        used_ = kLeadingGuard;
    }
    std::size_t need = needed(bytes);
    if (used_ + need > capacity_)
        throw DeviceFault("shared memory exhausted allocating " + std::to_string(bytes) + " bytes", false);
    char* p = base_ + used_;
    used_ += need;
    fill_canary(p + bytes, kCanaryBytes);
    Buffer b{p, bytes};
    b.external = true;
    return b;
}

void Arena::seal() {
    if (sealed_ || used_ >= capacity_) return;
    fill_canary(base_ + used_, capacity_ - used_);
    sealed_ = true;
}

std::vector<Buffer> Arena::guards() const {
    std::vector<Buffer> out;
    auto guard = [&](std::size_t from, std::size_t to) {
        if (to <= from) return;
        Buffer b{base_ + from, to - from};
        b.external = true;
        out.push_back(b);
    };
    guard(0, std::min(used_, kLeadingGuard));
    if (sealed_) guard(used_, capacity_);
    return out;
}

SharedArena::SharedArena(std::size_t capacity) {
    // Whole pages: the runner maps the arena between two inaccessible pages (runner_main.cpp),
    // so a write beyond the last page faults, and one before it is in the sealed tail.
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    capacity_ = std::max<std::size_t>((capacity + page - 1) / page * page, page);
    fd_ = memfd_create("kf-arena", MFD_CLOEXEC);
    if (fd_ < 0) throw DeviceFault(std::string("memfd_create: ") + std::strerror(errno), false);
    if (ftruncate(fd_, static_cast<off_t>(capacity_)) != 0) {
        int e = errno;
        close(fd_);
        throw DeviceFault("cannot size shared memory of " + std::to_string(capacity_) + " bytes: " + std::strerror(e), false);
    }
    void* p = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd_);
        throw DeviceFault("cannot map shared memory of " + std::to_string(capacity_) + " bytes: " + std::strerror(e), false);
    }
    base_ = static_cast<char*>(p);
}

SharedArena::~SharedArena() {
    if (base_) munmap(base_, capacity_);
    if (fd_ >= 0) close(fd_);
}

void SharedArena::fill_canary(char* p, std::size_t n) { std::memset(p, kCanaryByte, n); }

}  // namespace kf::worker
