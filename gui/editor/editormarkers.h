#pragma once

namespace kfgui {

/** Margin markers and indicators of CodeEditor; tests and views refer to them by name. */
namespace editor {
inline constexpr int kErrorMarker = 1;
inline constexpr int kWarningMarker = 2;
inline constexpr int kNoteMarker = 3;
/** `// @kf tunable` and `// @kf constraint` annotations. */
inline constexpr int kTunableIndicator = 8;
/** The margin holding the diagnostic markers (margin 0 holds line numbers). */
inline constexpr int kMarkerMargin = 1;
}  // namespace editor

}  // namespace kfgui
