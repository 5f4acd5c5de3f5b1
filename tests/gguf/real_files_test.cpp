// The reader on real GGUF files: the stories260K model and the vocabulary-only
// files of four tokenizers from ../shared.
#include <chrono>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

namespace parley::gguf {
namespace {

using test::shared_path;

const std::string kStories = test::shared_stories_path();

TEST(RealFiles, Stories260KHeaderAndMetadata) {
  SKIP_IF_ABSENT(kStories);
  const auto f = File::open(kStories);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_uint("llama.embedding_length"), 64u);
  EXPECT_EQ(f->get_uint("llama.block_count"), 5u);
  EXPECT_EQ(f->get_uint("llama.attention.head_count"), 8u);
  EXPECT_EQ(f->get_uint("llama.attention.head_count_kv"), 4u);
  EXPECT_EQ(f->get_uint("llama.context_length"), 128u);  // the converter's default
  EXPECT_EQ(f->keys().size(), f->metadata().size());

  const auto tokens = f->get_strings("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(f->get_floats("tokenizer.ggml.scores").size(), 512u);
  EXPECT_EQ(f->get_ints("tokenizer.ggml.token_type").size(), 512u);
}

TEST(RealFiles, Stories260KTensors) {
  SKIP_IF_ABSENT(kStories);
  const auto f = File::open(kStories);
  ASSERT_EQ(f->tensors().size(), 48u);  // 2 + 5 layers x 9 + output_norm
  const TensorInfo* emb = f->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->dims, (std::vector<uint64_t>{64, 512}));
  EXPECT_EQ(emb->type, DType::F32);
  EXPECT_EQ(emb->n_bytes(), 64u * 512 * 4);

  const TensorInfo* q = f->find_tensor("blk.4.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dims, (std::vector<uint64_t>{64, 64}));
  const TensorInfo* k = f->find_tensor("blk.0.attn_k.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->dims, (std::vector<uint64_t>{64, 32}));  // 4 KV heads of 8
  const TensorInfo* norm = f->find_tensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->dims, (std::vector<uint64_t>{64}));
  EXPECT_EQ(f->find_tensor("no.such.tensor"), nullptr);

  // Zero-copy: data points into the mapping, at data_offset + offset.
  const auto bytes = test::read_bytes(kStories);
  uint64_t params = 0;
  for (const auto& t : f->tensors()) {
    params += t.n_elements();
    const auto* first = static_cast<const uint8_t*>(f->tensors()[0].data) - f->tensors()[0].offset;
    EXPECT_EQ(static_cast<const uint8_t*>(t.data), first + t.offset) << t.name;
    ASSERT_LE(f->data_offset() + t.offset + t.n_bytes(), bytes.size());
    EXPECT_EQ(std::memcmp(t.data, bytes.data() + f->data_offset() + t.offset, t.n_bytes()), 0) << t.name;
  }
  EXPECT_GT(params, 250'000u);
  EXPECT_LT(params, 300'000u);
}

// Writing back every key (in file order) and every tensor reproduces the file.
TEST(RealFiles, Stories260KRewritesByteForByte) {
  SKIP_IF_ABSENT(kStories);
  const auto f = File::open(kStories);
  Writer w;
  for (const auto& key : f->keys()) w.set(key, *f->find(key));
  for (const auto& t : f->tensors()) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(p, p + t.n_bytes()));
  }
  test::TempDir dir;
  const auto out = dir.file("copy.gguf");
  w.write(out);
  EXPECT_EQ(test::read_bytes(out), test::read_bytes(kStories));
}

struct VocabCase {
  const char* file;
  const char* model;
  size_t n_tokens;
  const char* token0;
  size_t n_merges;
};

class Vocab : public ::testing::TestWithParam<VocabCase> {};

TEST_P(Vocab, LoadsTokensAndMerges) {
  const auto& c = GetParam();
  const auto path = shared_path(std::string("tokenizers/") + c.file);
  SKIP_IF_ABSENT(path);
  const auto start = std::chrono::steady_clock::now();
  const auto f = File::open(path);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("open_ms", std::to_string(ms));
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), c.model);
  const auto tokens = f->get_strings("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), c.n_tokens);
  EXPECT_EQ(tokens[0], c.token0);
  EXPECT_EQ(f->get_strings("tokenizer.ggml.merges").size(), c.n_merges);
  EXPECT_TRUE(f->tensors().empty());
}

INSTANTIATE_TEST_SUITE_P(Shared, Vocab,
                         ::testing::Values(VocabCase{"ggml-vocab-llama-spm.gguf", "llama", 32000, "<unk>", 0},
                                           VocabCase{"ggml-vocab-phi-3.gguf", "llama", 32064, "<unk>", 0},
                                           VocabCase{"ggml-vocab-gpt-2.gguf", "gpt2", 50257, "!", 50000},
                                           VocabCase{"ggml-vocab-starcoder.gguf", "gpt2", 49152, "<|endoftext|>", 48872}));

}  // namespace
}  // namespace parley::gguf
