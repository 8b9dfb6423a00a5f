#pragma once
// Counter-based random numbers and half-precision conversions shared by the host and CUDA
// devices of the worker, so both draw the same values for a given seed and element index.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define KF_HD __host__ __device__ __forceinline__
#else
#define KF_HD inline
#endif

namespace kf::worker {

KF_HD std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/** A 64-bit hash of (seed, index): the stream of one tensor in one trial. */
KF_HD std::uint64_t hash_index(std::uint64_t seed, std::uint64_t index) {
    return splitmix64(splitmix64(seed) ^ (index * 0xD6E8FEB86659FD93ull));
}

/** Uniform in [0, 1) with 24 bits. */
KF_HD float uniform01(std::uint64_t h) { return static_cast<float>(h >> 40) * (1.0f / 16777216.0f); }

/** Draw kinds, matching InitSpec::dist. */
enum DrawKind : int { kUniform = 0, kNormal = 1, kRandInt = 2, kBernoulli = 3, kConstant = 4 };

/** The value of element `index` for a distribution with parameters a and b (as a double). */
KF_HD double draw(int kind, double a, double b, std::uint64_t seed, std::uint64_t index) {
    std::uint64_t h = hash_index(seed, index);
    switch (kind) {
    case kUniform: return a + (b - a) * static_cast<double>(uniform01(h));
    case kNormal: {
        // Box-Muller on two 24-bit uniforms taken from one hash (u1 in (0,1]).
        float u1 = (static_cast<float>(h >> 40) + 1.0f) * (1.0f / 16777216.0f);
        float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
        double r = sqrt(-2.0 * log(static_cast<double>(u1)));
        return a + b * r * cos(6.283185307179586 * static_cast<double>(u2));
    }
    case kRandInt: {
        auto lo = static_cast<long long>(a), hi = static_cast<long long>(b);
        unsigned long long span = hi > lo ? static_cast<unsigned long long>(hi - lo) : 1ull;
        return static_cast<double>(lo + static_cast<long long>((h >> 11) % span));
    }
    case kBernoulli: return static_cast<double>(uniform01(h)) < a ? 1.0 : 0.0;
    default: return a;
    }
}

/** float -> IEEE half bits, round to nearest even. */
KF_HD std::uint16_t float_to_half_bits(float f) {
    union { float f; std::uint32_t u; } v{f};
    std::uint32_t x = v.u;
    std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t mant = x & 0x7FFFFFu;
    int exp = static_cast<int>((x >> 23) & 0xFF);
    if (exp == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0u));
    int e = exp - 127 + 15;
    if (e >= 0x1F) return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (e <= 0) {
        if (e < -10) return static_cast<std::uint16_t>(sign);
        mant |= 0x800000u;
        int shift = 14 - e;
        std::uint32_t half = mant >> shift;
        std::uint32_t rem = mant & ((1u << shift) - 1);
        std::uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) ++half;
        return static_cast<std::uint16_t>(sign | half);
    }
    std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
    std::uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
}

KF_HD float half_bits_to_float(std::uint16_t h) {
    std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1Fu;
    std::uint32_t mant = h & 0x3FFu;
    std::uint32_t out;
    if (exp == 0) {
        if (mant == 0) out = sign;
        else {
            int e = -1;
            do { mant <<= 1; ++e; } while (!(mant & 0x400u));
            out = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
        }
    } else if (exp == 0x1F) {
        out = sign | 0x7F800000u | (mant << 13);
    } else {
        out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    union { std::uint32_t u; float f; } v{out};
    return v.f;
}

/** float -> bfloat16 bits, round to nearest even (NaN kept quiet). */
KF_HD std::uint16_t float_to_bf16_bits(float f) {
    union { float f; std::uint32_t u; } v{f};
    std::uint32_t x = v.u;
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>(x >> 16);
}

KF_HD float bf16_bits_to_float(std::uint16_t h) {
    union { std::uint32_t u; float f; } v{static_cast<std::uint32_t>(h) << 16};
    return v.f;
}

}  // namespace kf::worker
