// describe(): the summary `parley info` prints.
#include "gguf/describe.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

namespace parley::gguf {
namespace {

TEST(Describe, WriterBuiltFile) {
  Writer w;
  w.set("general.architecture", Value::str("llama"));
  w.set("general.name", Value::str("say \"hi\"\nthen" + std::string(100, 'x')));
  w.set("llama.rope.freq_base", Value::f32(10000.0f));
  w.set("eps", Value::f32(1e-5f));
  w.set("tokenizer.ggml.tokens", Value::strings({"<unk>", "a\tb", "c", "d", "e", "f", "g"}));
  w.set("nested", Value::array(ValueType::ARRAY, {Value::ints({1, 2}), Value::ints({})}));
  w.set("flag", Value::boolean(false));
  w.add_tensor("token_embd.weight", DType::F32, {4, 8}, std::vector<uint8_t>(128));
  w.add_tensor("blk.0.ffn_up.weight", DType::Q8_0, {64, 3}, std::vector<uint8_t>(204));
  test::TempDir dir;
  w.write(dir.file("d.gguf"));
  const auto text = describe(*File::open(dir.file("d.gguf")));

  EXPECT_TRUE(test::contains_all(text, {"GGUF v3", "alignment 32", "metadata (7 keys)"}));
  EXPECT_TRUE(test::contains_all(text, {"general.architecture", "STRING", "\"llama\""}));
  // Quotes and control characters escaped, long strings cut after 64 bytes.
  EXPECT_TRUE(test::contains_all(text, {"\"say \\\"hi\\\"\\nthen" + std::string(51, 'x') + "\"... (113 bytes)"}));
  EXPECT_TRUE(test::contains_all(text, {"10000", "1e-05", "false"}));
  EXPECT_TRUE(test::contains_all(text, {"ARRAY of STRING", "[7] \"<unk>\", \"a\\x09b\", \"c\", \"d\", \"e\", ..."}));
  EXPECT_TRUE(test::contains_all(text, {"ARRAY of ARRAY", "[2] [2] 1, 2, [0]"}));
  EXPECT_TRUE(test::contains_all(text, {"tensors (2)", "token_embd.weight    F32    4 x 8   128"}));
  EXPECT_TRUE(test::contains_all(text, {"blk.0.ffn_up.weight  Q8_0   64 x 3  204"}));
  EXPECT_TRUE(test::contains_all(text, {"total: 2 tensors, 224 parameters, 332 bytes"}));
}

TEST(Describe, Stories260K) {
  const auto path = test::shared_stories_path();
  SKIP_IF_ABSENT(path);
  const auto text = describe(*File::open(path));
  EXPECT_TRUE(test::contains_all(text, {"GGUF v3", "\"llama\"", "[512] \"<unk>\", \"<s>\", \"</s>\""}));
  EXPECT_TRUE(test::contains_all(text, {"tensors (48)", "token_embd.weight", "64 x 512", "131,072"}));
  EXPECT_TRUE(test::contains_all(text, {"total: 48 tensors"}));
  EXPECT_LT(text.size(), 20'000u);  // long arrays are abbreviated
}

}  // namespace
}  // namespace parley::gguf
