#pragma once
// Shared helpers of the gguf tests: a self-deleting temp dir, paths of the
// shared test data and a little-endian byte builder for hand-made files.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace parley::gguf::test {

inline std::string shared_path(const std::string& rel) { return std::string(PARLEY_SHARED_DIR) + "/" + rel; }
inline bool exists(const std::string& path) { return std::filesystem::exists(path); }

// A real GGUF file: stories260K from ../shared, else the copy bundled in models/.
inline std::string stories_path() {
  const auto shared = shared_path("models/stories260K.gguf");
  return exists(shared) ? shared : std::string(PARLEY_SOURCE_DIR) + "/models/stories260K.gguf";
}
// The shared stories260K exactly as llama.cpp's converter wrote it (the bundled
// copy was rewritten by parley convert): tests of its layout skip without it.
inline std::string shared_stories_path() { return shared_path("models/stories260K.gguf"); }

#define SKIP_IF_ABSENT(path) \
  if (!parley::gguf::test::exists(path)) GTEST_SKIP() << "test data " << (path) << " is absent"

// Passes when `text` contains every one of `parts` (for error messages).
inline ::testing::AssertionResult contains_all(const std::string& text, std::initializer_list<std::string_view> parts) {
  for (const auto part : parts)
    if (text.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "\"" << text << "\" lacks \"" << part << "\"";
  return ::testing::AssertionSuccess();
}

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("parley-gguf-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = uint8_t(rng());
  return out;
}

// Builds GGUF bytes field by field, so tests can write valid and broken files.
struct Bytes {
  std::vector<uint8_t> b;

  template <class T>
  Bytes& put(T x) {
    const auto* p = reinterpret_cast<const uint8_t*>(&x);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& u32(uint32_t x) { return put(x); }
  Bytes& u64(uint64_t x) { return put(x); }
  Bytes& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  Bytes& kv_u32(const std::string& key, uint32_t x) { return str(key).u32(4).u32(x); }
  Bytes& kv_str(const std::string& key, const std::string& s) { return str(key).u32(8).str(s); }
  Bytes& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).u32(uint32_t(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Bytes& pad_to(size_t alignment) {
    b.resize((b.size() + alignment - 1) / alignment * alignment, 0);
    return *this;
  }
  Bytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
};

}  // namespace parley::gguf::test
