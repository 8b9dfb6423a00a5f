#pragma once
/** Where the engine finds bundled things, relative to the running executable (relocatable). */
#include <filesystem>
#include <string>

namespace kf {

/**
 * The bundled tasks folder: $KF_TASKS_DIR, else <exe>/../../tasks (build tree), else
 * <exe>/../share/kernel-foundry/tasks (installed). Empty when none exists.
 */
std::filesystem::path bundled_tasks_dir();

/** A file's whole content; empty when it cannot be read. */
std::string read_text_file(const std::filesystem::path& p);

}  // namespace kf
