#pragma once
// Vendor libraries a task does not allow, found among the files a runner has mapped
// (/proc/<pid>/maps, read by the judge): the symbol screen (eval/screening.cpp) sees only
// what a candidate references by name, not what it loads at run time through a dlopen it
// found itself or the driver's entry-point table.
#include <string>
#include <vector>

#include "kf/task.h"

namespace kf::worker {

/** The shared objects mapped in process `pid` (`readable` false where its maps cannot be read). */
struct MappedFiles {
    bool readable = false;
    std::vector<std::string> paths;
};
MappedFiles mapped_files(int pid);

/** Of `paths`, those of vendor libraries `rules` do not allow, each with the library's name. */
std::vector<std::string> forbidden_libraries(const std::vector<std::string>& paths, const Rules& rules);

}  // namespace kf::worker
