#pragma once
// The worker's one-shot profile mode (kfoundry-worker --profile-request FILE), run under
// Nsight Compute by the engine; see profile_mode.cpp and docs/worker-protocol.md.
#include <string>

namespace kf::worker {

/** Serves one profile request file and exits the process with 0 (ok), 3 (the candidate
 *  failed to load or faulted), 2 (unreadable request) or 1 (anything else). */
[[noreturn]] void run_profile_request(const std::string& backend, int ordinal, const std::string& request_file);

}  // namespace kf::worker
