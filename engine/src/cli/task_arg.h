#pragma once
// The command line's TASK argument and its usage errors, shared by kfoundry's commands.
#include <string>

#include "kf/error.h"
#include "kf/paths.h"
#include "kf/task.h"

namespace kf::cli {

/** A bad command line: kfoundry prints "kfoundry: <what>" and exits with code 2. */
struct UsageError : Error {
    using Error::Error;
};

/** The task a TASK argument names (a task folder or a bundled task name); UsageError when none. */
inline Task load_task_arg(const std::string& arg) {
    auto dir = resolve_task(arg);
    if (!dir) throw UsageError("no task '" + arg + "' (give a task folder, or a bundled task name; see `kfoundry tasks list`)");
    return load_task(*dir);
}

}  // namespace kf::cli
