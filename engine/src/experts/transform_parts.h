#pragma once
// Text pieces shared by the named rewrites of CUDA sources (kf/transforms.h), and the rewrites
// that live in files of their own.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "kf/transforms.h"

namespace kf::rewrites {

/** A refusal with its reason: the source is left alone. */
inline TransformResult refuse(std::string why) {
    return {std::nullopt, std::move(why)};
}

/** The position just past the first #include block, where helpers and macros go. */
std::size_t after_includes(const std::string& src);

/** The index of the bracket closing the one at `open` ('(', '{' or '['); npos when unmatched. */
std::size_t closing(const std::string& s, std::size_t open);

/** The end of the first statement (up to its ';' outside brackets) or braced block from `from`; npos when none. */
std::size_t statement_end(const std::string& s, std::size_t from, std::size_t end);

/** smem-tile (transform_smem_tile.cpp): neighbour reads of a one-element-per-thread kernel from a shared-memory tile.
 */
TransformResult smem_tile(const std::string& src);

}  // namespace kf::rewrites
