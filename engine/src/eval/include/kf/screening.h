#pragma once
/**
 * Static screening of a compiled candidate before it runs: the dynamic symbols it needs
 * tell whether it calls a library the task forbids, loads code at run time, or starts
 * threads or processes.
 */
#include <filesystem>
#include <string>
#include <vector>

#include "kf/task.h"

namespace kf {

struct SymbolScreen {
    bool ran = false;                    ///< false when the symbol table could not be read
    std::string error;                   ///< why it did not run
    std::size_t undefined_symbols = 0;   ///< symbols screened
    std::vector<std::string> forbidden;  ///< "cublasSgemm_v2 (cuBLAS is not allowed by the task)"
};

/** Reads the undefined dynamic symbols of `library` (with nm) and screens them against the task's rules. */
SymbolScreen screen_symbols(const std::filesystem::path& library, const Rules& rules);

/** Screens a list of symbol names (exposed for tests). */
std::vector<std::string> forbidden_symbols(const std::vector<std::string>& symbols, const Rules& rules);

}  // namespace kf
