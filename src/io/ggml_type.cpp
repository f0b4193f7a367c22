#include "luminal/io/ggml_type.hpp"

#include <array>
#include <cstring>
#include <string>

#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"

namespace luminal {
namespace {

constexpr size_t kQK = 256;  // elements per K-quant super-block

// Sizes follow ggml's block structs (ggml-common.h); the comment after each
// quantized entry is its layout.
constexpr std::array<GGMLTypeInfo, 31> kTypes{{
    {GGMLType::F32, "F32", 1, 4, DType::F32, true},
    {GGMLType::F16, "F16", 1, 2, DType::F16, true},
    {GGMLType::Q4_0, "Q4_0", 32, 18, DType::Q4_0, true},   // d, qs[16]
    {GGMLType::Q4_1, "Q4_1", 32, 20, DType::Q4_1, true},   // d, m, qs[16]
    {GGMLType::Q5_0, "Q5_0", 32, 22, std::nullopt, true},  // d, qh[4], qs[16]
    {GGMLType::Q5_1, "Q5_1", 32, 24, std::nullopt, true},  // d, m, qh[4], qs[16]
    {GGMLType::Q8_0, "Q8_0", 32, 34, DType::Q8_0, true},   // d, qs[32]
    {GGMLType::Q8_1, "Q8_1", 32, 36, std::nullopt, false},
    {GGMLType::Q2_K, "Q2_K", kQK, 84, std::nullopt, true},   // scales[16], qs[64], d, dmin
    {GGMLType::Q3_K, "Q3_K", kQK, 110, std::nullopt, true},  // hmask[32], qs[64], scales[12], d
    {GGMLType::Q4_K, "Q4_K", kQK, 144, std::nullopt, true},  // d, dmin, scales[12], qs[128]
    {GGMLType::Q5_K, "Q5_K", kQK, 176, std::nullopt, true},  // d, dmin, scales[12], qh[32], qs[128]
    {GGMLType::Q6_K, "Q6_K", kQK, 210, std::nullopt, true},  // ql[128], qh[64], scales[16], d
    {GGMLType::Q8_K, "Q8_K", kQK, 292, std::nullopt, false},
    {GGMLType::IQ2_XXS, "IQ2_XXS", kQK, 66, std::nullopt, false},
    {GGMLType::IQ2_XS, "IQ2_XS", kQK, 74, std::nullopt, false},
    {GGMLType::IQ3_XXS, "IQ3_XXS", kQK, 98, std::nullopt, false},
    {GGMLType::IQ1_S, "IQ1_S", kQK, 50, std::nullopt, false},
    {GGMLType::IQ4_NL, "IQ4_NL", 32, 18, std::nullopt, true},  // d, qs[16] (table codes)
    {GGMLType::IQ3_S, "IQ3_S", kQK, 110, std::nullopt, false},
    {GGMLType::IQ2_S, "IQ2_S", kQK, 82, std::nullopt, false},
    {GGMLType::IQ4_XS, "IQ4_XS", kQK, 136, std::nullopt, false},
    {GGMLType::I8, "I8", 1, 1, DType::I8, false},
    {GGMLType::I16, "I16", 1, 2, std::nullopt, false},
    {GGMLType::I32, "I32", 1, 4, DType::I32, false},
    {GGMLType::I64, "I64", 1, 8, DType::I64, false},
    {GGMLType::F64, "F64", 1, 8, DType::F64, true},
    {GGMLType::IQ1_M, "IQ1_M", kQK, 56, std::nullopt, false},
    {GGMLType::BF16, "BF16", 1, 2, DType::BF16, true},
    {GGMLType::TQ1_0, "TQ1_0", kQK, 54, std::nullopt, false},
    {GGMLType::TQ2_0, "TQ2_0", kQK, 66, std::nullopt, false},
}};
constexpr GGMLTypeInfo kMXFP4{GGMLType::MXFP4, "MXFP4", 32, 17, std::nullopt, false};

using Block = const std::byte*;

uint8_t u8(Block b, size_t i) {
  return static_cast<uint8_t>(b[i]);
}
float f16_at(Block b, size_t i) {
  return f16_bits_to_float(static_cast<uint16_t>(u8(b, i) | (u8(b, i + 1) << 8)));
}
// 4-bit codes of the 32-element formats: byte j's low nibble is element j,
// its high nibble element j + 16.
int nibble32(Block qs, size_t e) {
  return e < 16 ? (u8(qs, e) & 0xF) : (u8(qs, e - 16) >> 4);
}
// Products and sums are separate statements so no compiler contracts them
// into an FMA (ggml's reference rounds each one).
float mul_add(float a, float b, float c) {
  const float p = a * b;
  return p + c;
}
float mul_sub(float a, float b, float c) {
  const float p = a * b;
  return p - c;
}

void q4_0(Block b, float* y) {
  const float d = f16_at(b, 0);
  for (size_t e = 0; e < 32; ++e) y[e] = static_cast<float>(nibble32(b + 2, e) - 8) * d;
}
void q4_1(Block b, float* y) {
  const float d = f16_at(b, 0), m = f16_at(b, 2);
  for (size_t e = 0; e < 32; ++e) y[e] = mul_add(static_cast<float>(nibble32(b + 4, e)), d, m);
}
// Q5: the fifth bit of element e is bit e of the little-endian u32 qh.
int five_bit(Block qh, Block qs, size_t e) {
  const int high = (u8(qh, e / 8) >> (e % 8)) & 1;
  return nibble32(qs, e) | (high << 4);
}
void q5_0(Block b, float* y) {
  const float d = f16_at(b, 0);
  for (size_t e = 0; e < 32; ++e) y[e] = static_cast<float>(five_bit(b + 2, b + 6, e) - 16) * d;
}
void q5_1(Block b, float* y) {
  const float d = f16_at(b, 0), m = f16_at(b, 2);
  for (size_t e = 0; e < 32; ++e) {
    y[e] = mul_add(static_cast<float>(five_bit(b + 4, b + 8, e)), d, m);
  }
}
void q8_0(Block b, float* y) {
  const float d = f16_at(b, 0);
  for (size_t e = 0; e < 32; ++e) y[e] = static_cast<float>(static_cast<int8_t>(u8(b, 2 + e))) * d;
}
void iq4_nl(Block b, float* y) {
  static constexpr std::array<int8_t, 16> kValues{-127, -104, -83, -65, -49, -35, -22, -10,
                                                  1,    13,   25,  38,  53,  69,  89,  113};
  const float d = f16_at(b, 0);
  for (size_t e = 0; e < 32; ++e) {
    y[e] = d * static_cast<float>(kValues[static_cast<size_t>(nibble32(b + 2, e))]);
  }
}

// K-quants: a 256-element super-block of 16 or 8 sub-blocks with their own
// 4/6-bit scales. 2-bit and 3-bit codes: element e lives in byte
// (e / 128) * 32 + e % 32 of qs, at bit offset 2 * ((e / 32) % 4).
int two_bit(Block qs, size_t e) {
  return (u8(qs, (e / 128) * 32 + e % 32) >> (2 * ((e / 32) % 4))) & 3;
}
void q2_k(Block b, float* y) {
  Block scales = b, qs = b + 16;
  const float d = f16_at(b, 80), dmin = f16_at(b, 82);
  for (size_t e = 0; e < kQK; ++e) {
    const uint8_t sc = u8(scales, e / 16);
    const float dl = d * static_cast<float>(sc & 0xF);
    const float ml = dmin * static_cast<float>(sc >> 4);
    y[e] = mul_sub(dl, static_cast<float>(two_bit(qs, e)), ml);
  }
}
void q3_k(Block b, float* y) {
  Block hmask = b, qs = b + 32, sc = b + 96;
  const float d = f16_at(b, 108);
  for (size_t e = 0; e < kQK; ++e) {
    // 16 six-bit scales: low 4 bits in bytes 0-7 (nibble i / 8), high 2 bits in bytes 8-11.
    const size_t i = e / 16;
    const int low = (u8(sc, i % 8) >> (4 * (i / 8))) & 0xF;
    const int high = (u8(sc, 8 + i % 4) >> (2 * (i / 4))) & 3;
    const float dl = d * static_cast<float>((low | (high << 4)) - 32);
    // A clear hmask bit (bit e / 32 of byte e % 32) subtracts 4.
    const int h = (u8(hmask, e % 32) >> (e / 32)) & 1;
    y[e] = dl * static_cast<float>(two_bit(qs, e) - (h ? 0 : 4));
  }
}
// Six-bit scale and min of sub-block j (0-7) of Q4_K / Q5_K, packed in 12 bytes.
void scale_min_k4(Block q, size_t j, int& sc, int& m) {
  if (j < 4) {
    sc = u8(q, j) & 63;
    m = u8(q, j + 4) & 63;
  } else {
    sc = (u8(q, j + 4) & 0xF) | ((u8(q, j - 4) >> 6) << 4);
    m = (u8(q, j + 4) >> 4) | ((u8(q, j) >> 6) << 4);
  }
}
// 4-bit codes of Q4_K / Q5_K: sub-blocks 2c and 2c + 1 share the 32 bytes
// c * 32 ..: low nibbles for the first, high nibbles for the second.
int nibble_k(Block qs, size_t e) {
  const uint8_t byte = u8(qs, (e / 64) * 32 + e % 32);
  return ((e / 32) % 2 == 0) ? (byte & 0xF) : (byte >> 4);
}
template <bool kFifthBit>
void q45_k(Block b, float* y) {
  const float d = f16_at(b, 0), dmin = f16_at(b, 2);
  Block scales = b + 4, qh = b + 16, qs = kFifthBit ? b + 48 : b + 16;
  for (size_t j = 0; j < 8; ++j) {
    int sc = 0, m = 0;
    scale_min_k4(scales, j, sc, m);
    const float d1 = d * static_cast<float>(sc);
    const float m1 = dmin * static_cast<float>(m);
    for (size_t l = 0; l < 32; ++l) {
      const size_t e = j * 32 + l;
      int q = nibble_k(qs, e);
      if constexpr (kFifthBit) q |= ((u8(qh, l) >> j) & 1) << 4;
      y[e] = mul_sub(d1, static_cast<float>(q), m1);
    }
  }
}
void q6_k(Block b, float* y) {
  Block ql = b, qh = b + 128, scales = b + 192;
  const float d = f16_at(b, 208);
  for (size_t e = 0; e < kQK; ++e) {
    // Two halves of 128; within one, row r (0-3) of 32: low 4 bits from
    // ql[half * 64 + (r % 2) * 32 + l] (low nibble for r < 2, else high),
    // high 2 bits from qh[half * 32 + l] at bit 2r.
    const size_t half = e / 128, r = (e % 128) / 32, l = e % 32;
    const uint8_t lo_byte = u8(ql, half * 64 + (r % 2) * 32 + l);
    const int lo = r < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
    const int hi = (u8(qh, half * 32 + l) >> (2 * r)) & 3;
    const float ds = d * static_cast<float>(static_cast<int8_t>(u8(scales, e / 16)));
    y[e] = ds * static_cast<float>((lo | (hi << 4)) - 32);
  }
}

void plain(GGMLType type, Block b, float* y) {
  switch (type) {
    case GGMLType::F32:
      std::memcpy(y, b, 4);
      return;
    case GGMLType::F16:
      *y = f16_at(b, 0);
      return;
    case GGMLType::BF16:
      *y = bf16_bits_to_float(static_cast<uint16_t>(u8(b, 0) | (u8(b, 1) << 8)));
      return;
    case GGMLType::F64: {
      double v;
      std::memcpy(&v, b, 8);
      *y = static_cast<float>(v);
      return;
    }
    default:
      return;
  }
}

using BlockFn = void (*)(Block, float*);
BlockFn block_fn(GGMLType type) {
  switch (type) {
    case GGMLType::Q4_0:
      return q4_0;
    case GGMLType::Q4_1:
      return q4_1;
    case GGMLType::Q5_0:
      return q5_0;
    case GGMLType::Q5_1:
      return q5_1;
    case GGMLType::Q8_0:
      return q8_0;
    case GGMLType::Q2_K:
      return q2_k;
    case GGMLType::Q3_K:
      return q3_k;
    case GGMLType::Q4_K:
      return q45_k<false>;
    case GGMLType::Q5_K:
      return q45_k<true>;
    case GGMLType::Q6_K:
      return q6_k;
    case GGMLType::IQ4_NL:
      return iq4_nl;
    default:
      return nullptr;
  }
}

}  // namespace

const GGMLTypeInfo* find_ggml_type(uint32_t id) {
  if (id == static_cast<uint32_t>(GGMLType::MXFP4)) return &kMXFP4;
  for (const auto& info : kTypes) {
    if (static_cast<uint32_t>(info.type) == id) return &info;
  }
  return nullptr;
}

const GGMLTypeInfo& ggml_type_info(GGMLType type) {
  const GGMLTypeInfo* info = find_ggml_type(static_cast<uint32_t>(type));
  if (info == nullptr) {
    throw DTypeError("unknown ggml type id " + std::to_string(static_cast<uint32_t>(type)));
  }
  return *info;
}

std::optional<GGMLType> ggml_type_for(DType dtype) {
  for (const auto& info : kTypes) {
    if (info.dtype == dtype) return info.type;
  }
  return std::nullopt;
}

std::vector<GGMLType> dequantizable_ggml_types() {
  std::vector<GGMLType> out;
  for (const auto& info : kTypes) {
    if (info.dequantizable) out.push_back(info.type);
  }
  return out;
}

void dequantize(GGMLType type, std::span<const std::byte> src, std::span<float> dst) {
  const GGMLTypeInfo& info = ggml_type_info(type);
  if (!info.dequantizable) {
    throw DTypeError("dequantize: ggml type " + std::string(info.name) + " is not supported");
  }
  const size_t blocks = src.size() / info.block_bytes;
  if (src.size() % info.block_bytes != 0 || dst.size() / info.block_elems != blocks ||
      dst.size() % info.block_elems != 0) {
    throw ShapeError("dequantize: " + std::string(info.name) + " input of " +
                     std::to_string(src.size()) + " bytes (blocks of " +
                     std::to_string(info.block_bytes) +
                     " bytes = " + std::to_string(info.block_elems) + " elements) does not fill " +
                     std::to_string(dst.size()) + " floats");
  }
  const BlockFn fn = block_fn(type);
  for (size_t i = 0; i < blocks; ++i) {
    Block b = src.data() + i * info.block_bytes;
    float* y = dst.data() + i * info.block_elems;
    if (fn != nullptr) {
      fn(b, y);
    } else {
      plain(type, b, y);
    }
  }
}

std::vector<float> dequantize(GGMLType type, std::span<const std::byte> src) {
  const GGMLTypeInfo& info = ggml_type_info(type);
  std::vector<float> out(src.size() / info.block_bytes * info.block_elems);
  dequantize(type, src, out);
  return out;
}

}  // namespace luminal
