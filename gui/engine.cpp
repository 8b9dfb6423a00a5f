#include "engine.h"

namespace kfgui {

kf::Engine& engine() {
    static kf::Engine instance;
    return instance;
}

}  // namespace kfgui
