#include "shared_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kf::worker {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::size_t Arena::needed(std::size_t bytes) { return round_up(bytes + kCanaryBytes); }

Buffer Arena::alloc(std::size_t bytes) {
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

SharedArena::SharedArena(std::size_t capacity) {
    capacity_ = std::max<std::size_t>(round_up(capacity), kAlign);
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
