#pragma once
// Paths and helpers shared by the test suites. The build passes KF_SOURCE_DIR and
// KF_BIN_DIR through the environment (see tests/CMakeLists.txt).
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kftest {

std::filesystem::path source_dir();
std::filesystem::path bin_dir();
std::filesystem::path worker_path();
std::filesystem::path cli_path();
/** tests/data/<relative> */
std::filesystem::path data(const std::string& relative);
/** tasks/<relative> */
std::filesystem::path task(const std::string& relative);
std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& text);
/** A fresh temporary folder, removed at process exit. */
std::filesystem::path temp_dir(const std::string& tag);
/** True when a CUDA device can be used (nvidia-smi lists one, or KF_FORCE_GPU is set). */
bool gpu_available();
/** Every file (path → contents) and folder (path → "<dir>") under `roots`. */
std::map<std::string, std::string> snapshot(const std::vector<std::filesystem::path>& roots);
/** Processes whose command line or name says "kf-escapee" (what escaping test candidates call their children). */
std::vector<std::string> escapees();
/** Processes descending from this one whose command line holds `arg` as a word and whose
 *  name starts with `name` (e.g. "--runner" and "kfoundry-work": the worker's runner
 *  processes, bubblewrap's left out). */
int descendants_with_arg(const std::string& arg, const std::string& name);
/** Waits until `cond` holds, looking at it every `poll`: true as soon as it does, false when
 *  it still does not once `deadline` has passed. The deadline only bounds a failure: tests
 *  wait on the condition, never on a fixed time. */
bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds deadline,
                std::chrono::milliseconds poll = std::chrono::milliseconds(5));

}  // namespace kftest
