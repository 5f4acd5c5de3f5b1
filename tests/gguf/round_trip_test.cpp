// Writer -> reader round trips: every value type, nested arrays, tensors of
// several types, custom alignment, and the exact bytes the writer lays out.
#include <cmath>
#include <limits>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

namespace parley::gguf {
namespace {

Value with(ValueType t, uint64_t x) { return {t, x}; }
Value with(ValueType t, int64_t x) { return {t, x}; }

// An array of arrays of strings.
Value nested_strings() {
  return Value::array(ValueType::ARRAY, {Value::strings({"x", "yy"}), Value::strings({}), Value::strings({"z"})});
}

std::vector<std::pair<std::string, Value>> every_value() {
  using VT = ValueType;
  return {
      {"t.u8", with(VT::UINT8, uint64_t(200))},
      {"t.i8", with(VT::INT8, int64_t(-100))},
      {"t.u16", with(VT::UINT16, uint64_t(60000))},
      {"t.i16", with(VT::INT16, int64_t(-30000))},
      {"t.u32", Value::u32(4'000'000'000u)},
      {"t.i32", Value::i32(-2'000'000'000)},
      {"t.f32", Value::f32(1.5f)},
      {"t.bool", Value::boolean(true)},
      {"t.string", Value::str("h\xc3\xa9llo \n world")},
      {"t.empty_string", Value::str("")},
      {"t.u64", Value::u64((uint64_t(1) << 63) + 5)},
      {"t.i64", with(VT::INT64, std::numeric_limits<int64_t>::min())},
      {"t.f64", {VT::FLOAT64, 3.141592653589793}},
      {"a.strings", Value::strings({"a", "", "ccc"})},
      {"a.floats", Value::floats({-1.25f, 0.0f, 1e30f})},
      {"a.ints", Value::ints({-7, 0, 2147483647})},
      {"a.u8", Value::array(VT::UINT8, {with(VT::UINT8, uint64_t(0)), with(VT::UINT8, uint64_t(255))})},
      {"a.bools", Value::array(VT::BOOL, {Value::boolean(false), Value::boolean(true)})},
      {"a.f64", Value::array(VT::FLOAT64, {{VT::FLOAT64, -0.5}})},
      {"a.empty_i64", Value::array(VT::INT64, {})},
      {"a.nested_strings", nested_strings()},
      {"a.deep", Value::array(VT::ARRAY, {Value::array(VT::ARRAY, {Value::array(VT::UINT16, {with(VT::UINT16, uint64_t(7))})})})},
  };
}

struct TensorCase {
  const char* name;
  DType type;
  std::vector<uint64_t> dims;
};

const std::vector<TensorCase> kTensors = {
    {"f32", DType::F32, {8, 3}},      {"f16", DType::F16, {16}},           {"bf16", DType::BF16, {4, 2, 3, 2}},
    {"q8_0", DType::Q8_0, {64, 2}},   {"q4_0", DType::Q4_0, {32, 3}},      {"q4_k", DType::Q4_K, {256, 2}},
    {"q6_k", DType::Q6_K, {256, 1}},  {"q5_1", DType::Q5_1, {96}},
};

std::vector<uint8_t> tensor_bytes(const TensorCase& c, uint32_t seed) {
  uint64_t rows = 1;
  for (size_t i = 1; i < c.dims.size(); ++i) rows *= c.dims[i];
  return test::random_bytes(row_bytes(c.type, c.dims[0]) * rows, seed);
}

void check_round_trip(uint64_t alignment) {
  Writer w;
  if (alignment != 32) w.set("general.alignment", Value::u32(uint32_t(alignment)));
  const auto values = every_value();
  for (const auto& [k, v] : values) w.set(k, v);
  for (size_t i = 0; i < kTensors.size(); ++i)
    w.add_tensor(kTensors[i].name, kTensors[i].type, kTensors[i].dims, tensor_bytes(kTensors[i], uint32_t(i)));
  test::TempDir dir;
  const auto path = dir.file("rt.gguf");
  w.write(path);

  const auto f = File::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), alignment);
  EXPECT_EQ(f->data_offset() % alignment, 0u);
  ASSERT_EQ(f->keys().size(), values.size() + (alignment != 32));
  const size_t first = alignment != 32;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(f->keys()[first + i], values[i].first);  // insertion order kept
    const Value* v = f->find(values[i].first);
    ASSERT_NE(v, nullptr) << values[i].first;
    EXPECT_TRUE(*v == values[i].second) << values[i].first << " type " << type_description(*v);
  }
  ASSERT_EQ(f->tensors().size(), kTensors.size());
  for (size_t i = 0; i < kTensors.size(); ++i) {
    const auto& t = f->tensors()[i];
    EXPECT_EQ(t.name, kTensors[i].name);
    EXPECT_EQ(t.type, kTensors[i].type);
    EXPECT_EQ(t.dims, kTensors[i].dims);
    EXPECT_EQ(t.offset % alignment, 0u) << t.name;
    const auto expected = tensor_bytes(kTensors[i], uint32_t(i));
    ASSERT_EQ(t.n_bytes(), expected.size());
    EXPECT_EQ(std::memcmp(t.data, expected.data(), expected.size()), 0) << t.name;
  }
  EXPECT_EQ(test::read_bytes(path).size() % alignment, 0u);
}

TEST(RoundTrip, EveryValueTypeAndTensorType) { check_round_trip(32); }
TEST(RoundTrip, HonoursGeneralAlignment) { check_round_trip(64); }
TEST(RoundTrip, SmallAlignment) { check_round_trip(8); }

TEST(RoundTrip, NestedStringArrayReadsBack) {
  Writer w;
  w.set("n", nested_strings());
  test::TempDir dir;
  w.write(dir.file("n.gguf"));
  const auto f = File::open(dir.file("n.gguf"));
  const Array& outer = f->find("n")->as_array();
  ASSERT_EQ(outer.elem_type, ValueType::ARRAY);
  ASSERT_EQ(outer.items.size(), 3u);
  EXPECT_EQ(outer.items[0].as_array().items[1].as_string(), "yy");
  EXPECT_TRUE(outer.items[1].as_array().items.empty());
  EXPECT_EQ(outer.items[2].as_array().items[0].as_string(), "z");
}

// The writer lays out exactly the specified bytes: each value in the width of
// its Value::type, zero padding up to the alignment, tensor data aligned.
TEST(RoundTrip, WriterBytesMatchTheSpecification) {
  Writer w;
  w.set("k8", with(ValueType::INT8, int64_t(-5)));
  w.set("s", Value::str("ab"));
  w.set("k8", with(ValueType::INT8, int64_t(-6)));  // replaces, keeps the position
  w.add_tensor("t", DType::F32, {3}, test::random_bytes(12, 1));
  w.add_tensor("u", DType::F16, {2}, test::random_bytes(4, 2));
  test::TempDir dir;
  w.write(dir.file("b.gguf"));

  test::Bytes expected;
  expected.header(3, 2, 2).str("k8").u32(1).put<int8_t>(-6).str("s").u32(8).str("ab");
  expected.tensor("t", {3}, 0, 0).tensor("u", {2}, 1, 32).pad_to(32);
  const auto t = test::random_bytes(12, 1), u = test::random_bytes(4, 2);
  expected.b.insert(expected.b.end(), t.begin(), t.end());
  expected.pad_to(32).b.insert(expected.b.end(), u.begin(), u.end());
  expected.pad_to(32);
  EXPECT_EQ(test::read_bytes(dir.file("b.gguf")), expected.b);
}

// A v2 file (u64 counts and lengths, like v3) built by hand.
TEST(RoundTrip, ReadsVersion2) {
  test::Bytes b;
  b.header(2, 1, 2).kv_str("general.architecture", "llama").kv_u32("llama.block_count", 7);
  b.tensor("w", {4, 2}, 0, 0).pad_to(32);
  const auto data = test::random_bytes(32, 3);
  b.b.insert(b.b.end(), data.begin(), data.end());
  test::TempDir dir;
  test::write_bytes(dir.file("v2.gguf"), b.b);
  const auto f = File::open(dir.file("v2.gguf"));
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_uint("llama.block_count"), 7u);
  ASSERT_EQ(f->tensors().size(), 1u);
  EXPECT_EQ(std::memcmp(f->tensors()[0].data, data.data(), data.size()), 0);
}

std::string write_error(const Writer& w) {
  test::TempDir dir;
  try {
    w.write(dir.file("bad.gguf"));
  } catch (const Error& e) {
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad.gguf")));
    return e.what();
  }
  return "";
}

TEST(WriterErrors, ValueThatDoesNotFitItsType) {
  Writer w;
  w.set("too.big", with(ValueType::UINT8, uint64_t(300)));
  EXPECT_TRUE(test::contains_all(write_error(w), {"too.big", "300", "UINT8"}));
}

TEST(WriterErrors, ArrayElementOfTheWrongType) {
  Writer w;
  w.set("mixed", Value::array(ValueType::STRING, {Value::str("a"), Value::u32(1)}));
  EXPECT_TRUE(test::contains_all(write_error(w), {"mixed", "element 1", "UINT32", "expected STRING"}));
}

TEST(WriterErrors, BadAlignment) {
  Writer w;
  w.set("general.alignment", Value::u32(24));
  EXPECT_TRUE(test::contains_all(write_error(w), {"general.alignment", "power of two"}));
  w.set("general.alignment", Value::u64(64));
  EXPECT_TRUE(test::contains_all(write_error(w), {"general.alignment", "expected UINT32"}));
}

TEST(WriterErrors, UnwritablePath) {
  Writer w;
  w.set("k", Value::u32(1));
  EXPECT_THROW(w.write("/nonexistent-dir/x.gguf"), Error);
}

TEST(WriterErrors, BadTensors) {
  Writer w;
  EXPECT_THROW(w.add_tensor("a", DType::F32, {4}, std::vector<uint8_t>(15)), Error);
  EXPECT_THROW(w.add_tensor("a", DType::Q8_0, {33}, std::vector<uint8_t>(34)), Error);
  EXPECT_THROW(w.add_tensor("a", DType::F32, {4, 0}, {}), Error);
  EXPECT_THROW(w.add_tensor("a", DType::F32, {uint64_t(1) << 62, 4}, {}), Error);  // bytes wrap to 0
  EXPECT_THROW(w.add_tensor("a", DType::F32, {1, 1, 1, 1, 1}, std::vector<uint8_t>(4)), Error);
  w.add_tensor("a", DType::F32, {1}, std::vector<uint8_t>(4));
  try {
    w.add_tensor("a", DType::F32, {1}, std::vector<uint8_t>(4));
    ADD_FAILURE() << "duplicate tensor accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(test::contains_all(e.what(), {"'a'", "duplicate"}));
  }
}

}  // namespace
}  // namespace parley::gguf
