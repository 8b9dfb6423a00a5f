// Finds system() in the C library at run time (no symbol of it in the candidate) and runs
// a lingering shell command with it.
#include <elf.h>
#include <link.h>

#include <cstring>

#include "kf_task.h"

namespace {

using SystemFn = int (*)(const char*);

int find(dl_phdr_info* info, size_t, void* out) {
    if (!std::strstr(info->dlpi_name, "libc.so")) return 0;
    const ElfW(Sym)* symtab = nullptr;
    const char* strtab = nullptr;
    const ElfW(Word)* hash = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; dyn->d_tag != DT_NULL; ++dyn) {
            if (dyn->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(dyn->d_un.d_ptr);
            if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(dyn->d_un.d_ptr);
            if (dyn->d_tag == DT_GNU_HASH) hash = reinterpret_cast<const ElfW(Word)*>(dyn->d_un.d_ptr);
        }
    }
    if (!symtab || !strtab) return 0;
    // Walk the symbol table up to the string table (which follows it in practice).
    for (const ElfW(Sym)* s = symtab; reinterpret_cast<const char*>(s) < strtab; ++s) {
        if (s->st_name && std::strcmp(strtab + s->st_name, "system") == 0 && s->st_value) {
            *static_cast<SystemFn*>(out) = reinterpret_cast<SystemFn>(info->dlpi_addr + s->st_value);
            return 1;
        }
    }
    (void)hash;
    return 0;
}

}  // namespace

extern "C" void kf_solve(const float*, float*, int) {
    SystemFn sys = nullptr;
    dl_iterate_phdr(find, &sys);
    if (sys) sys("(exec -a kf-escapee sleep 60) & echo > /tmp/kf-escapee-file");
}
