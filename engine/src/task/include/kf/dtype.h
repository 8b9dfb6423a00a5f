#pragma once
/** Element types of task tensors and scalar parameters. */
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kf {

enum class DType { F32, F64, F16, BF16, I32, I64, U8, Bool };

/** Parses "f32", "f64", "f16", "bf16", "i32", "i64", "u8", "bool". */
std::optional<DType> dtype_from_string(std::string_view s);
std::string_view to_string(DType t);
std::size_t size_of(DType t);
bool is_floating(DType t);
/** C type spelled in the CUDA header (e.g. __half) and in the host header (e.g. kf_half). */
std::string_view cuda_type_name(DType t);
std::string_view host_type_name(DType t);

}  // namespace kf
