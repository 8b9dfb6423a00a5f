#pragma once
#include "kf/engine.h"

namespace kfgui {

/** The app's engine (kf::Engine): one evaluator, and so one worker process, per device,
 *  shared by every search, hand evaluation and device probe the app starts. Thread-safe. */
kf::Engine& engine();

}  // namespace kfgui
