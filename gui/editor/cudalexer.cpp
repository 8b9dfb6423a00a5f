#include "editor/cudalexer.h"

#include <QColor>

namespace kfgui {

namespace {

// QsciLexerCPP's own set 1 with the CUDA qualifiers and launch keywords appended.
const char* const kKeywords =
    "and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t class "
    "compl const const_cast consteval constexpr constinit continue decltype default delete do "
    "double dynamic_cast else enum explicit export extern false float for friend goto if "
    "inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq "
    "private protected public register reinterpret_cast return short signed sizeof static "
    "static_assert static_cast struct switch template this thread_local throw true try typedef "
    "typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq "
    "size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t "
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    "__restrict __launch_bounds__ __forceinline__ __noinline__ __align__ __grid_constant__ "
    "cudaStream_t cudaError_t dim3";

// Built-in variables, intrinsics, atomics, math and vector types.
const char* const kCudaNames =
    "threadIdx blockIdx blockDim gridDim warpSize "
    "__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp "
    "__threadfence __threadfence_block __threadfence_system "
    "__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync "
    "__ballot_sync __all_sync __any_sync __activemask __popc __popcll __clz __ffs "
    "__reduce_add_sync __reduce_max_sync __reduce_min_sync "
    "__ldg __ldcg __ldca __ldcs __stcg __stcs __fmaf_rn __fmul_rn __fadd_rn __fdividef "
    "__expf __exp10f __logf __log2f __powf __sinf __cosf __tanf __saturatef __frcp_rn "
    "__fsqrt_rn __frsqrt_rn rsqrtf sqrtf expf logf tanhf erff fmaxf fminf fabsf fmaf "
    "__float2half __half2float __float2half2_rn __half22float2 __hadd __hmul __hfma "
    "__hadd2 __hmul2 __hfma2 __float2bfloat16 __bfloat162float "
    "atomicAdd atomicSub atomicMax atomicMin atomicExch atomicCAS atomicAnd atomicOr atomicXor "
    "atomicInc atomicDec "
    "half half2 __half __half2 nv_bfloat16 nv_bfloat162 __nv_bfloat16 __nv_bfloat162 "
    "char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short1 short2 short3 short4 "
    "ushort1 ushort2 ushort3 ushort4 int1 int2 int3 int4 uint1 uint2 uint3 uint4 "
    "long1 long2 long3 long4 ulong1 ulong2 ulong3 ulong4 longlong1 longlong2 "
    "float1 float2 float3 float4 double1 double2 double3 double4 "
    "make_float2 make_float4 make_int2 make_int4 make_half2 "
    "wmma mma_sync load_matrix_sync store_matrix_sync fill_fragment fragment "
    "cooperative_groups cudaGetLastError cudaMemsetAsync cudaMemcpyAsync";

}  // namespace

CudaLexer::CudaLexer(QObject* parent) : QsciLexerCPP(parent) {
    // Secondary keywords (CUDA names) stand apart from the C++ keywords.
    setColor(QColor(0x00, 0x80, 0x80), KeywordSet2);
    setColor(QColor(0x80, 0x80, 0x80), Comment);
    setColor(QColor(0x80, 0x80, 0x80), CommentLine);
}

const char* CudaLexer::language() const { return "CUDA"; }

const char* CudaLexer::keywords(int set) const {
    if (set == 1) return kKeywords;
    if (set == 2) return kCudaNames;
    return QsciLexerCPP::keywords(set);
}

}  // namespace kfgui
