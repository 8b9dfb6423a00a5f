#include "kf/dtype.h"

namespace kf {

namespace {
struct DTypeInfo {
    DType type;
    std::string_view name;
    std::size_t size;
    bool floating;
    std::string_view cuda;
    std::string_view host;
};
constexpr DTypeInfo kInfo[] = {
    {DType::F32, "f32", 4, true, "float", "float"},
    {DType::F64, "f64", 8, true, "double", "double"},
    {DType::F16, "f16", 2, true, "__half", "kf_half"},
    {DType::BF16, "bf16", 2, true, "__nv_bfloat16", "kf_bfloat16"},
    {DType::I32, "i32", 4, false, "int32_t", "int32_t"},
    {DType::I64, "i64", 8, false, "int64_t", "int64_t"},
    {DType::U8, "u8", 1, false, "uint8_t", "uint8_t"},
    {DType::Bool, "bool", 1, false, "bool", "bool"},
};
const DTypeInfo& info(DType t) {
    for (const auto& i : kInfo)
        if (i.type == t) return i;
    return kInfo[0];
}
}  // namespace

std::optional<DType> dtype_from_string(std::string_view s) {
    for (const auto& i : kInfo)
        if (i.name == s) return i.type;
    return std::nullopt;
}
std::string_view to_string(DType t) { return info(t).name; }
std::size_t size_of(DType t) { return info(t).size; }
bool is_floating(DType t) { return info(t).floating; }
std::string_view cuda_type_name(DType t) { return info(t).cuda; }
std::string_view host_type_name(DType t) { return info(t).host; }

}  // namespace kf
