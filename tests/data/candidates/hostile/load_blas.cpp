// Loads the BLAS library at run time through the C library's dlopen, found by walking libc's
// symbol table (no symbol of dlopen in the candidate, so the symbol screen sees nothing), and
// keeps it loaded. It computes the answer itself, so that only the loading gives it away.
#include <elf.h>
#include <link.h>

#include <cmath>
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

extern "C" void kf_solve(const float* x, float* y, int n) {
    static void* blas = nullptr;
    if (!blas) {
        OpenFn open = nullptr;
        dl_iterate_phdr(find, &open);
        if (open) {
            blas = open("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", 2 /* RTLD_NOW */);
            if (!blas) blas = open("libblas.so.3", 2);
        }
    }
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) {
        float s = 0;
        for (int k = 1; k <= 32; ++k) s += std::sin(static_cast<float>(k) * x[i]) / static_cast<float>(k);
        y[i] = s;
    }
}
