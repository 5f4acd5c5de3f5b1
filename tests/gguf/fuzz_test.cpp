// Hundreds of truncated and corrupted copies of a real file: each must either
// load or raise parley::Error (never crash, read out of bounds or bad_alloc).
#include <algorithm>
#include <random>

#include "gguf/describe.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

namespace parley::gguf {
namespace {

constexpr int kTruncations = 300;
constexpr int kCorruptions = 300;

// The real model when present, else a writer-built stand-in.
std::vector<uint8_t> seed_bytes(const test::TempDir& dir) {
  const auto real = test::stories_path();
  if (test::exists(real)) return test::read_bytes(real);
  Writer w;
  w.set("general.architecture", Value::str("llama"));
  std::vector<std::string> tokens;
  for (int i = 0; i < 200; ++i) tokens.push_back("tok" + std::to_string(i));
  w.set("tokenizer.ggml.tokens", Value::strings(tokens));
  w.set("tokenizer.ggml.scores", Value::floats(std::vector<float>(200, 0.5f)));
  w.set("nested", Value::array(ValueType::ARRAY, {Value::strings({"a", "b"}), Value::ints({1, 2})}));
  w.add_tensor("a", DType::F32, {64, 4}, test::random_bytes(1024, 1));
  w.add_tensor("b", DType::Q8_0, {64, 2}, test::random_bytes(136, 2));
  w.add_tensor("c", DType::Q4_K, {256}, test::random_bytes(144, 3));
  w.write(dir.file("seed.gguf"));
  return test::read_bytes(dir.file("seed.gguf"));
}

struct Outcomes {
  int loaded = 0;
  int errors = 0;
};

// Opens `path` and touches everything it exposes, so that ASan sees any
// pointer into the mapping that is out of bounds.
void open_and_touch(const std::string& path, Outcomes& out) {
  try {
    const auto f = File::open(path);
    uint64_t sum = 0;
    for (const auto& t : f->tensors()) {
      const auto* p = static_cast<const uint8_t*>(t.data);
      sum += p[0] + p[t.n_bytes() - 1];
    }
    EXPECT_LE(sum, 510 * f->tensors().size());
    EXPECT_FALSE(describe(*f).empty());
    ++out.loaded;
  } catch (const Error&) {
    ++out.errors;
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << ": unexpected exception type: " << e.what();
  }
}

// Truncation lengths: every header length, the edges of the data section,
// and random cuts (mostly inside the metadata, where parsing happens).
std::vector<size_t> truncation_lengths(size_t size, size_t data_offset, std::mt19937& rng) {
  std::vector<size_t> lens;
  for (size_t n = 0; n < 64; ++n) lens.push_back(n);
  for (size_t d = 0; d < 8; ++d) lens.insert(lens.end(), {data_offset - d - 1, data_offset + d, size - d - 1});
  while (lens.size() < kTruncations) {
    const size_t limit = lens.size() % 4 == 0 ? size : data_offset;
    lens.push_back(std::uniform_int_distribution<size_t>(0, limit - 1)(rng));
  }
  return lens;
}

struct Seed {
  std::vector<uint8_t> bytes;
  size_t data_offset = 0;
  size_t data_end = 0;  // end of the last tensor's data
};

Seed load_seed(const test::TempDir& dir) {
  Seed s{seed_bytes(dir)};
  test::write_bytes(dir.file("seed.gguf"), s.bytes);
  const auto f = File::open(dir.file("seed.gguf"));
  s.data_offset = f->data_offset();
  for (const auto& t : f->tensors()) s.data_end = std::max<size_t>(s.data_end, s.data_offset + t.offset + t.n_bytes());
  return s;
}

TEST(Fuzz, TruncatedCopiesLoadOrRaiseError) {
  test::TempDir dir;
  const Seed seed = load_seed(dir);
  std::mt19937 rng(1234);
  Outcomes out;
  for (const size_t len : truncation_lengths(seed.bytes.size(), seed.data_offset, rng)) {
    SCOPED_TRACE("truncated to " + std::to_string(len));
    const auto path = dir.file("cut.gguf");
    test::write_bytes(path, std::vector<uint8_t>(seed.bytes.begin(), seed.bytes.begin() + std::ptrdiff_t(len)));
    const int errors = out.errors;
    open_and_touch(path, out);
    if (len < seed.data_end) {
      EXPECT_EQ(out.errors, errors + 1) << "a cut before the end of the tensor data loaded";
    }
  }
  EXPECT_EQ(out.loaded + out.errors, kTruncations);
}

TEST(Fuzz, CorruptedCopiesLoadOrRaiseError) {
  test::TempDir dir;
  const Seed seed = load_seed(dir);
  std::mt19937 rng(5678);
  Outcomes out;
  for (int i = 0; i < kCorruptions; ++i) {
    auto bytes = seed.bytes;
    const int n_flips = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int k = 0; k < n_flips; ++k) {
      // Three flips in four hit the parsed part (header, metadata, tensor infos).
      const size_t limit = rng() % 4 == 0 ? bytes.size() : seed.data_offset;
      const size_t pos = std::uniform_int_distribution<size_t>(0, limit - 1)(rng);
      bytes[pos] ^= uint8_t(std::uniform_int_distribution<int>(1, 255)(rng));
    }
    test::write_bytes(dir.file("flip.gguf"), bytes);
    SCOPED_TRACE("corruption #" + std::to_string(i));
    open_and_touch(dir.file("flip.gguf"), out);
  }
  EXPECT_EQ(out.loaded + out.errors, kCorruptions);
  // Both outcomes occur, or the mutations would not be exercising anything.
  EXPECT_GT(out.errors, kCorruptions / 10);
  EXPECT_GT(out.loaded, 0);
  RecordProperty("loaded", out.loaded);
}

}  // namespace
}  // namespace parley::gguf
