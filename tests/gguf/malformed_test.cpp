// Hand-built broken files: each must raise parley::Error naming the file, the
// field or tensor at fault, and what was expected.
#include "gguf/gguf.h"
#include "test_util.h"

namespace parley::gguf {
namespace {

using test::Bytes;

constexpr uint32_t kF32 = 0, kQ8_0 = 8, kQ2_K = 10, kQ3_K = 11, kIQ4_NL = 20, kIQ4_XS = 23;
constexpr uint64_t kHuge = uint64_t(1) << 60;

// A v3 header: the start of every case.
Bytes valid_prefix(uint64_t n_tensors, uint64_t n_kv) {
  Bytes b;
  b.header(3, n_tensors, n_kv);
  return b;
}

Bytes with_data(Bytes b, size_t data_bytes) {
  b.pad_to(32).zeros(data_bytes);
  return b;
}

struct Case {
  const char* name;
  Bytes bytes;
  std::vector<std::string_view> expected;  // substrings of the message
};

std::vector<Case> cases() {
  std::vector<Case> cs;
  const auto add = [&](const char* name, Bytes b, std::vector<std::string_view> expected) {
    cs.push_back({name, std::move(b), std::move(expected)});
  };
  add("empty file", Bytes{}, {"magic", "needs 4 bytes"});
  add("truncated header", Bytes{}.u32(0x46554747).u32(3).u32(0), {"header", "tensor_count", "truncated"});
  add("bad magic", Bytes{}.u32(0x4c4d4747).u32(3).u64(0).u64(0), {"magic", "0x4c4d4747", "GGUF"});
  add("version 1", Bytes{}.header(1, 0, 0), {"version 1", "expected 2 or 3"});
  add("version 4", Bytes{}.header(4, 0, 0), {"version 4", "expected 2 or 3"});
  add("big-endian", Bytes{}.header(0x03000000, 0, 0), {"version", "big-endian"});
  add("truncated key", valid_prefix(0, 1).u64(20).zeros(10), {"metadata entry #0", "key length 20", "10 bytes left"});
  add("truncated value", valid_prefix(0, 1).str("a.b").u32(10),
      {"metadata key 'a.b'", "UINT64", "needs 8 bytes"});
  add("unknown value type", valid_prefix(0, 1).str("k").u32(13).u32(0), {"metadata key 'k'", "value type 13", "0 to 12"});
  add("bad bool", valid_prefix(0, 1).str("flag").u32(7).put<uint8_t>(2), {"metadata key 'flag'", "BOOL", "0 or 1"});
  add("duplicate key", valid_prefix(0, 2).kv_u32("k", 1).kv_u32("k", 2), {"metadata key 'k'", "duplicate key"});
  add("absurd kv count", valid_prefix(0, kHuge), {"metadata_kv_count", "1152921504606846976", "bytes are left"});
  add("absurd tensor count", valid_prefix(kHuge, 0), {"tensor_count", "1152921504606846976", "bytes are left"});
  add("absurd string length", valid_prefix(0, 1).str("s").u32(8).u64(kHuge).u64(0),
      {"metadata key 's'", "length 1152921504606846976", "bytes left"});
  add("absurd array length", valid_prefix(0, 1).str("arr").u32(9).u32(8).u64(kHuge).u64(0),
      {"metadata key 'arr'", "array length 1152921504606846976"});
  {
    Bytes big = valid_prefix(0, 1).str("big").u32(9).u32(0).u64((1 << 24) + 1);
    add("array over the length limit", big.zeros((1 << 24) + 1), {"metadata key 'big'", "16777217", "limit"});
  }
  add("absurd element string", valid_prefix(0, 1).str("arr").u32(9).u32(8).u64(2).str("ok").u64(kHuge),
      {"metadata key 'arr'[1]", "length 1152921504606846976"});
  {
    Bytes deep = valid_prefix(0, 1).str("deep").u32(9);
    for (int i = 0; i < 40; ++i) deep.u32(9).u64(1);
    deep.u32(4).u64(0);
    add("nesting too deep", deep, {"metadata key 'deep'[0][0]", "nested deeper"});
  }
  add("alignment not u32", valid_prefix(0, 1).str("general.alignment").u32(10).u64(32),
      {"general.alignment", "UINT64", "expected UINT32"});
  add("alignment not power of two", valid_prefix(0, 1).kv_u32("general.alignment", 48), {"general.alignment", "48", "power of two"});
  add("truncated tensor info", valid_prefix(1, 0).str("wwwwwwwwwwwwwwww").u32(2).u64(4),
      {"tensor 'wwwwwwwwwwwwwwww'", "dims", "truncated"});
  add("unknown tensor type", with_data(valid_prefix(1, 0).tensor("w", {4}, 99, 0), 16), {"tensor 'w'", "type id 99"});
  add("too many dims", with_data(valid_prefix(1, 0).tensor("w", {1, 1, 1, 1, 1}, kF32, 0), 4), {"tensor 'w'", "n_dims is 5", "1 to 4"});
  add("zero dims", with_data(valid_prefix(1, 0).tensor("w", {}, kF32, 0), 4), {"tensor 'w'", "n_dims is 0"});
  add("zero dim", with_data(valid_prefix(1, 0).tensor("w", {4, 0}, kF32, 0), 16), {"tensor 'w'", "dims[1] is 0"});
  add("shape overflow", with_data(valid_prefix(1, 0).tensor("w", {1ull << 32, 1ull << 32, 4}, kF32, 0), 16),
      {"tensor 'w'", "shape 4294967296 x 4294967296 x 4", "2^64 elements"});
  add("bytes overflow", with_data(valid_prefix(1, 0).tensor("w", {1ull << 62, 2}, kF32, 0), 16), {"tensor 'w'", "2^64 bytes"});
  add("row not whole blocks", with_data(valid_prefix(1, 0).tensor("w", {33}, kQ8_0, 0), 64),
      {"tensor 'w'", "33 elements", "Q8_0 block size 32"});
  add("Q2_K row not whole blocks", with_data(valid_prefix(1, 0).tensor("w", {128}, kQ2_K, 0), 96),
      {"tensor 'w'", "128 elements", "Q2_K block size 256"});
  add("Q3_K row not whole blocks", with_data(valid_prefix(1, 0).tensor("w", {300, 2}, kQ3_K, 0), 256),
      {"tensor 'w'", "300 elements", "Q3_K block size 256"});
  add("IQ4_NL row not whole blocks", with_data(valid_prefix(1, 0).tensor("w", {48}, kIQ4_NL, 0), 64),
      {"tensor 'w'", "48 elements", "IQ4_NL block size 32"});
  add("IQ4_XS data past end", with_data(valid_prefix(1, 0).tensor("w", {256, 2}, kIQ4_XS, 0), 256),
      {"tensor 'w'", "data [offset 0, 272 bytes]", "extends past end of file"});
  add("data past end", with_data(valid_prefix(1, 0).tensor("blk.0.attn_q.weight", {4, 4}, kF32, 0), 60),
      {"tensor 'blk.0.attn_q.weight'", "data [offset 0, 64 bytes]", "extends past end of file"});
  add("offset past end", with_data(valid_prefix(1, 0).tensor("w", {4}, kF32, ~uint64_t(31)), 16),
      {"tensor 'w'", "extends past end of file"});
  add("misaligned offset", with_data(valid_prefix(1, 0).tensor("w", {4}, kF32, 8), 64),
      {"tensor 'w'", "offset 8", "multiple of the alignment 32"});
  add("overlap", with_data(valid_prefix(2, 0).tensor("a", {16}, kF32, 0).tensor("b", {4}, kF32, 32), 64),
      {"tensor 'b'", "overlaps tensor 'a'", "[offset 0, 64 bytes]"});
  add("duplicate tensor", with_data(valid_prefix(2, 0).tensor("w", {4}, kF32, 0).tensor("w", {4}, kF32, 32), 64),
      {"tensor 'w'", "duplicate tensor name"});
  return cs;
}

TEST(Malformed, EachCaseRaisesANamedError) {
  test::TempDir dir;
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto path = dir.file("bad.gguf");
    test::write_bytes(path, c.bytes.b);
    try {
      File::open(path);
      ADD_FAILURE() << "loaded without error";
    } catch (const Error& e) {
      EXPECT_TRUE(test::contains_all(e.what(), {path + ": "}));
      for (const auto part : c.expected) EXPECT_TRUE(test::contains_all(e.what(), {part}));
    }
  }
}

// The malformed cases are broken only where intended: fixing the field loads.
TEST(Malformed, ControlFilesLoad) {
  test::TempDir dir;
  const auto path = dir.file("ok.gguf");
  test::write_bytes(path, with_data(valid_prefix(2, 1).kv_u32("general.alignment", 32)
                                        .tensor("a", {8}, kF32, 0).tensor("b", {32}, kQ8_0, 32), 66).b);
  const auto f = File::open(path);
  EXPECT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->find_tensor("b")->n_bytes(), 34u);
}

TEST(Malformed, MissingFile) {
  EXPECT_THROW(File::open("/nonexistent/dir/model.gguf"), Error);
}

}  // namespace
}  // namespace parley::gguf
