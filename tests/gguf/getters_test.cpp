// Typed metadata getters and Value conversions: accepted types, defaults, and
// errors that name the key and the types involved.
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

namespace parley::gguf {
namespace {

class Getters : public ::testing::Test {
 protected:
  void SetUp() override {
    Writer w;
    w.set("u8", Value{ValueType::UINT8, uint64_t(7)});
    w.set("i16", Value{ValueType::INT16, int64_t(300)});
    w.set("neg", Value::i32(-3));
    w.set("f32", Value::f32(0.25f));
    w.set("f64", Value{ValueType::FLOAT64, 1e-300});
    w.set("flag", Value::boolean(true));
    w.set("name", Value::str("tiny"));
    w.set("tokens", Value::strings({"a", "bc"}));
    w.set("scores", Value::floats({0.5f, -2.0f}));
    w.set("types", Value::ints({1, -6}));
    w.set("u16s", Value::array(ValueType::UINT16, {Value{ValueType::UINT16, uint64_t(9)}}));
    w.set("big", Value::array(ValueType::INT64, {Value{ValueType::INT64, int64_t(1) << 40}}));
    w.write(dir_.file("g.gguf"));
    f_ = File::open(dir_.file("g.gguf"));
  }

  // The message of the Error `fn` raises ("" when none).
  template <class Fn>
  static std::string error_of(Fn fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  test::TempDir dir_;
  std::unique_ptr<File> f_;
};

TEST_F(Getters, IntegersOfAnyWidth) {
  EXPECT_EQ(f_->get_uint("u8"), 7u);
  EXPECT_EQ(f_->get_uint("i16"), 300u);
  EXPECT_EQ(f_->get_uint("absent", 42), 42u);
  EXPECT_EQ(f_->find("neg")->as_int(), -3);
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_uint("neg"); }), {f_->path(), "'neg'", "-3", "INT32", "negative"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_uint("name"); }), {"'name'", "STRING", "integer"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_uint("f32"); }), {"'f32'", "FLOAT32", "integer"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_uint("missing"); }), {"'missing'", "missing"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_uint("u8", 1); f_->get_uint("flag", 1); }), {"'flag'", "BOOL"}));
}

TEST_F(Getters, FloatsFromAnyNumber) {
  EXPECT_DOUBLE_EQ(f_->get_float("f32", 0), 0.25);
  EXPECT_DOUBLE_EQ(f_->get_float("f64", 0), 1e-300);
  EXPECT_DOUBLE_EQ(f_->get_float("u8", 0), 7.0);
  EXPECT_DOUBLE_EQ(f_->get_float("neg", 0), -3.0);
  EXPECT_DOUBLE_EQ(f_->get_float("absent", 1.5), 1.5);
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_float("tokens", 0); }), {"'tokens'", "ARRAY of STRING", "number"}));
}

TEST_F(Getters, StringsAndBools) {
  EXPECT_EQ(f_->get_string("name"), "tiny");
  EXPECT_EQ(f_->get_string("absent", "dflt"), "dflt");
  EXPECT_TRUE(f_->get_bool("flag", false));
  EXPECT_FALSE(f_->get_bool("absent", false));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_string("u8"); }), {"'u8'", "UINT8", "STRING"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_string("u8", "x"); }), {"'u8'", "UINT8"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_bool("u8", false); }), {"'u8'", "UINT8", "BOOL"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_string("missing"); }), {"'missing'", "missing"}));
}

TEST_F(Getters, Arrays) {
  EXPECT_EQ(f_->get_strings("tokens"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(f_->get_floats("scores"), (std::vector<float>{0.5f, -2.0f}));
  EXPECT_EQ(f_->get_floats("u16s"), (std::vector<float>{9.0f}));
  EXPECT_EQ(f_->get_ints("types"), (std::vector<int32_t>{1, -6}));
  EXPECT_EQ(f_->get_ints("u16s"), (std::vector<int32_t>{9}));
  EXPECT_TRUE(f_->get_strings("absent").empty());
  EXPECT_TRUE(f_->get_floats("absent").empty());
  EXPECT_TRUE(f_->get_ints("absent").empty());
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_strings("scores"); }), {"'scores'", "ARRAY of FLOAT32", "ARRAY of STRING"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_strings("name"); }), {"'name'", "type is STRING", "ARRAY of STRING"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_floats("tokens"); }), {"'tokens'", "ARRAY of STRING"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_ints("scores"); }), {"'scores'", "ARRAY of FLOAT32", "integers"}));
  EXPECT_TRUE(test::contains_all(error_of([&] { f_->get_ints("big"); }), {"'big'", "1099511627776", "INT32"}));
}

TEST(Value, Conversions) {
  EXPECT_EQ(Value::u64(~uint64_t(0)).as_uint(), ~uint64_t(0));
  EXPECT_THROW(Value::u64(~uint64_t(0)).as_int(), Error);
  EXPECT_EQ(Value::u32(5).as_int(), 5);
  EXPECT_THROW(Value::str("x").as_array(), Error);
  EXPECT_THROW(Value::boolean(true).as_float(), Error);
  EXPECT_EQ(Value::strings({"a"}).as_array().elem_type, ValueType::STRING);
  EXPECT_EQ(type_description(Value::ints({})), "ARRAY of INT32");
  EXPECT_STREQ(value_type_name(ValueType::FLOAT64), "FLOAT64");
  EXPECT_EQ(value_type_size(ValueType::INT16), 2u);
  EXPECT_EQ(value_type_size(ValueType::STRING), 0u);
}

}  // namespace
}  // namespace parley::gguf
