// Loads cuBLAS at run time through the C library's dlopen, found by walking libc's symbol
// table (no dlopen symbol in the candidate, so the symbol screen sees nothing), and keeps it
// loaded. It computes with its own kernel: only the loading gives it away.
#include <elf.h>
#include <link.h>

#include <cstring>

#include "kf_task.h"

namespace {

using OpenFn = void* (*)(const char*, int);

int find(dl_phdr_info* info, size_t, void* out) {
    if (!std::strstr(info->dlpi_name, "libc.so")) return 0;
    const ElfW(Sym)* symtab = nullptr;
    const char* strtab = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; dyn->d_tag != DT_NULL; ++dyn) {
            if (dyn->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(dyn->d_un.d_ptr);
            if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(dyn->d_un.d_ptr);
        }
    }
    if (!symtab || !strtab) return 0;
    for (const ElfW(Sym)* s = symtab; reinterpret_cast<const char*>(s) < strtab; ++s)
        if (s->st_name && std::strcmp(strtab + s->st_name, "dlopen") == 0 && s->st_value) {
            *static_cast<OpenFn*>(out) = reinterpret_cast<OpenFn>(info->dlpi_addr + s->st_value);
            return 1;
        }
    return 0;
}

}  // namespace

__global__ void scale_add_own(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    static void* cublas = nullptr;
    if (!cublas) {
        OpenFn open = nullptr;
        dl_iterate_phdr(find, &open);
        const char* names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so"};
        for (const char* name : names)
            if (open && !cublas) cublas = open(name, 2 /* RTLD_NOW */);
    }
    if (n <= 0) return;
    int grid = (n + 255) / 256;
    if (grid > 4096) grid = 4096;
    scale_add_own<<<grid, 256, 0, stream>>>(x, y, z, n, alpha);
}
