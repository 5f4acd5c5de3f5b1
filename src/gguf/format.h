#pragma once
// GGUF layout constants shared by the reader and the writer.
#include <cstdint>

namespace parley::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint64_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;

// general.alignment must be a power of two (ggml's rule; the spec asks for a
// multiple of 8, which every power of two from 8 up satisfies).
constexpr bool valid_alignment(uint64_t a) { return a != 0 && (a & (a - 1)) == 0; }

}  // namespace parley::gguf
