#pragma once

namespace kf::worker {

/** Entry of `kfoundry-worker --runner --library PATH [--memory BYTES] [--file-size BYTES]`. */
int runner_main(int argc, char** argv);

}  // namespace kf::worker
