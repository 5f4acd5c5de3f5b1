// LoRA adapters: run-time application in the forward pass against the merged
// model and a float64 reference, batches mixing adapters against each
// sequence alone, validation against the base model, malformed files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>

#include "gguf/writer.h"
#include "model/batch_forward.h"
#include "model/lora.h"
#include "model/lora_files.h"
#include "model/mkmodel.h"
#include "model/sequence_forward.h"
#include "model_test_util.h"
#include "reference_forward.h"
#include "util/error.h"

namespace parley::lora_test {  // own helper names in the unity build
namespace {

using testing::expect_error;
using testing::max_relative_error;
using testing::TempFile;

MkModelSpec lora_base_spec(DType type = DType::F32) {
  MkModelSpec s;
  s.dim = 64;
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.ffn_dim = 96;
  s.context_length = 256;
  s.vocab_from = PARLEY_SOURCE_DIR "/models/stories260K.gguf";
  s.type = type;
  s.seed = 11;
  return s;
}

std::vector<int32_t> prompt(int32_t n, int32_t salt) {
  std::vector<int32_t> t(size_t(n), 1);
  for (int32_t i = 1; i < n; ++i) t[size_t(i)] = (i * 37 + salt * 101 + 11) % 512;
  return t;
}

// Every position's logits, evaluated in two calls (the second attends to cached K/V).
std::vector<float> logits_of(const Model& m, const std::vector<int32_t>& tokens, const LoraAdapter* adapter,
                             float scale = 1.0f) {
  ThreadPool pool(2);
  SequenceForward fwd(m, pool);
  fwd.set_lora(adapter, scale);
  const size_t vocab = size_t(m.config().vocab_size);
  std::vector<float> out(tokens.size() * vocab);
  const int32_t split = int32_t(tokens.size()) / 2;
  fwd.eval(tokens.data(), split, out.data());
  fwd.eval(tokens.data() + split, int32_t(tokens.size()) - split, out.data() + size_t(split) * vocab);
  return out;
}

struct RuntimeCase {
  int32_t rank;
  float alpha;   // 0: the rank
  float scale;   // the user's
  DType type;
};

void PrintTo(const RuntimeCase& c, std::ostream* os) {
  *os << "rank" << c.rank << "_alpha" << c.alpha << "_scale" << c.scale << "_" << dtype_name(c.type);
}

class LoraRuntime : public ::testing::TestWithParam<RuntimeCase> {};

// Every projection adapted: the run-time products equal the merged model's
// and the float64 reference's, and differ clearly from the base model's.
TEST_P(LoraRuntime, MatchesMergedModelAndReference) {
  const RuntimeCase& rc = GetParam();
  TempFile base("lora-base.gguf"), adapter("lora.gguf"), merged("lora-merged.gguf");
  write_random_model(lora_base_spec(), base.path);
  MkAdapterSpec spec;
  spec.rank = rc.rank;
  spec.alpha = rc.alpha;
  spec.type = rc.type;
  write_random_adapter(base.path, spec, adapter.path);
  merge_lora(base.path, adapter.path, rc.scale, merged.path);
  auto model = Model::load(base.path);
  auto merged_model = Model::load(merged.path);
  auto lora = LoraAdapter::load(adapter.path, *model);
  EXPECT_EQ(lora->pairs().size(), 2u * 7u + 1u);  // 7 projections per layer and the output
  EXPECT_EQ(lora->max_rank(), rc.rank);
  // F16 files stay F16 (half the bytes a step reads); the other types are widened to F32.
  const DType kept = rc.type == DType::F16 ? DType::F16 : DType::F32;
  uint64_t elements = 0;
  for (const auto& [name, p] : lora->pairs()) {
    EXPECT_EQ(p.a.type, kept) << name;
    EXPECT_EQ(p.bt.type, kept) << name;
    elements += uint64_t(p.rank) * uint64_t(p.in + p.out);
  }
  EXPECT_EQ(lora->bytes(), elements * (kept == DType::F16 ? 2 : 4));
  const size_t vocab = size_t(model->config().vocab_size);
  for (int32_t n : {5, 40, 130}) {  // 130: long enough for rank 64 to share the shrink
    const auto tokens = prompt(n, n);
    const auto got = logits_of(*model, tokens, lora.get(), rc.scale);
    const auto base_logits = logits_of(*model, tokens, nullptr);
    const auto want_merged = logits_of(*merged_model, tokens, nullptr);
    const auto want_ref = testing::reference_logits(base.path, std::vector<int>(tokens.begin(), tokens.end()), 0,
                                                    adapter.path, rc.scale);
    for (size_t t = 0; t < tokens.size(); ++t) {
      const float* row = got.data() + t * vocab;
      ASSERT_LT(max_relative_error(row, want_merged.data() + t * vocab, vocab), 1e-4) << "position " << t;
      ASSERT_LT(max_relative_error(row, want_ref[t]), 1e-4) << "position " << t;
      ASSERT_GT(max_relative_error(row, base_logits.data() + t * vocab, vocab), 1e-2) << "position " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RanksAndTypes, LoraRuntime,
                         ::testing::Values(RuntimeCase{1, 0.0f, 1.0f, DType::F32}, RuntimeCase{8, 16.0f, 0.5f, DType::F32},
                                           RuntimeCase{64, 32.0f, 1.0f, DType::F32},
                                           RuntimeCase{8, 0.0f, 1.0f, DType::F16},
                                           RuntimeCase{8, 0.0f, 1.0f, DType::Q8_0}));

// Each projection alone: only that one's products change, and they match the reference.
TEST(Lora, EachTargetAloneMatchesReference) {
  TempFile base("lora-base.gguf"), adapter("lora.gguf");
  write_random_model(lora_base_spec(), base.path);
  auto model = Model::load(base.path);
  const auto tokens = prompt(12, 3);
  const size_t vocab = size_t(model->config().vocab_size);
  for (int32_t t = 0; t < kLoraTargets; ++t) {
    MkAdapterSpec spec;
    spec.targets = {LoraTarget(t)};
    write_random_adapter(base.path, spec, adapter.path);
    auto lora = LoraAdapter::load(adapter.path, *model);
    EXPECT_EQ(lora->pairs().size(), LoraTarget(t) == LoraTarget::Output ? 1u : 2u) << lora_target_name(LoraTarget(t));
    const auto got = logits_of(*model, tokens, lora.get());
    const auto want = testing::reference_logits(base.path, std::vector<int>(tokens.begin(), tokens.end()), 0,
                                                adapter.path);
    for (size_t p = 0; p < tokens.size(); ++p)
      ASSERT_LT(max_relative_error(got.data() + p * vocab, want[p]), 1e-4)
          << lora_target_name(LoraTarget(t)) << " position " << p;
  }
}

// 4 adapters and the base in one batch, chunks of varying sizes (prefill
// pieces and decode tokens mixed): each sequence's logits equal its run alone.
TEST(Lora, MixedBatchEqualsEachSequenceAlone) {
  TempFile base("lora-base.gguf");
  write_random_model(lora_base_spec(), base.path);
  auto model = Model::load(base.path);
  std::vector<std::unique_ptr<TempFile>> files;
  std::vector<std::unique_ptr<LoraAdapter>> adapters;
  const int32_t ranks[] = {1, 8, 16, 64};
  for (int32_t i = 0; i < 4; ++i) {
    files.push_back(std::make_unique<TempFile>("lora" + std::to_string(i) + ".gguf"));
    MkAdapterSpec spec;
    spec.rank = ranks[i];
    spec.seed = uint64_t(i + 1);
    if (i == 2) spec.targets = parse_lora_targets("attn_q,attn_v,ffn_down");
    write_random_adapter(base.path, spec, files.back()->path);
    adapters.push_back(LoraAdapter::load(files.back()->path, *model));
  }
  // Sequences 0..5: adapters 0, 1, none, 2, 3, and 0 again at another scale.
  const LoraAdapter* use[] = {adapters[0].get(), adapters[1].get(), nullptr, adapters[2].get(), adapters[3].get(),
                              adapters[0].get()};
  const float scales[] = {1.0f, 1.0f, 1.0f, 0.7f, 1.0f, 2.0f};
  const int32_t lengths[] = {9, 30, 17, 4, 25, 12};
  constexpr int32_t kBlock = 16;
  const auto& c = model->config();
  ThreadPool pool(2);
  KvCache cache(c, DType::F32, kBlock, 32);
  BatchForward fwd(*model, pool, cache, 64, 6, c.context_length);
  std::vector<std::vector<int32_t>> tokens, blocks;
  int32_t next_block = 0;
  for (int32_t i = 0; i < 6; ++i) {
    tokens.push_back(prompt(lengths[i], i));
    blocks.emplace_back();
    for (int32_t b = 0; b * kBlock < lengths[i]; ++b) blocks.back().push_back(next_block++);
  }
  std::vector<int32_t> done(6, 0);
  std::vector<std::vector<std::pair<int32_t, std::vector<float>>>> got(6);
  const int32_t sizes[] = {7, 1, 13, 1, 1, 5};
  for (int32_t step = 0;; ++step) {
    std::vector<BatchChunk> chunks;
    std::vector<int32_t> owner;
    for (int32_t i = 0; i < 6; ++i) {
      const int32_t left = lengths[i] - done[size_t(i)];
      if (left == 0) continue;
      BatchChunk ch;
      ch.n = std::min(left, sizes[(step + i) % 6]);
      ch.tokens = tokens[size_t(i)].data() + done[size_t(i)];
      ch.pos = done[size_t(i)];
      ch.blocks = blocks[size_t(i)].data();
      ch.logits = true;
      ch.lora = use[i];
      ch.lora_scale = scales[i];
      done[size_t(i)] += ch.n;
      chunks.push_back(ch);
      owner.push_back(i);
    }
    if (chunks.empty()) break;
    const float* logits = fwd.step(chunks.data(), int32_t(chunks.size()));
    for (size_t k = 0; k < chunks.size(); ++k) {
      const float* row = logits + k * size_t(c.vocab_size);
      got[size_t(owner[k])].push_back({chunks[k].pos + chunks[k].n - 1, {row, row + c.vocab_size}});
    }
  }
  const size_t vocab = size_t(c.vocab_size);
  for (int32_t i = 0; i < 6; ++i) {
    const auto want = logits_of(*model, tokens[size_t(i)], use[i], scales[i]);
    for (const auto& [pos, row] : got[size_t(i)])
      ASSERT_LT(max_relative_error(row.data(), want.data() + size_t(pos) * vocab, vocab), 1e-5)
          << "sequence " << i << " position " << pos;
  }
}

TEST(Lora, AdapterForAnotherBaseNamesTheTensor) {
  TempFile base("lora-base.gguf"), other("lora-other.gguf"), adapter("lora.gguf");
  write_random_model(lora_base_spec(), base.path);
  MkModelSpec wider = lora_base_spec();
  wider.ffn_dim = 128;
  write_random_model(wider, other.path);
  MkAdapterSpec spec;
  spec.targets = {LoraTarget::Down};
  write_random_adapter(other.path, spec, adapter.path);
  auto model = Model::load(base.path);
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {adapter.path, "blk.0.ffn_down.weight", "shape"});

  MkModelSpec deeper = lora_base_spec();
  deeper.n_layers = 3;
  write_random_model(deeper, other.path);
  write_random_adapter(other.path, spec, adapter.path);
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"blk.2.ffn_down.weight", "does not exist"});

  MkModelSpec qwen = lora_base_spec();
  qwen.arch = "qwen2";
  write_random_model(qwen, other.path);
  write_random_adapter(other.path, spec, adapter.path);
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"architecture", "qwen2", "llama"});
  expect_error([&] { merge_lora(base.path, adapter.path, 1.0f, other.path); }, {"architecture"});
}

// Writes an adapter of the given tensors (zeros) for the llama base.
void write_adapter(const std::string& path, const std::vector<std::pair<std::string, std::vector<uint64_t>>>& tensors,
                   const std::string& type = "adapter") {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("llama"));
  w.set("general.type", gguf::Value::str(type));
  w.set("adapter.type", gguf::Value::str("lora"));
  w.set("adapter.lora.alpha", gguf::Value::f32(4.0f));
  for (const auto& [name, dims] : tensors)
    w.add_tensor(name, DType::F32, dims, std::vector<uint8_t>(dims[0] * dims[1] * 4, 0));
  w.write(path);
}

TEST(Lora, RefusesWhatItCannotApply) {
  TempFile base("lora-base.gguf"), adapter("lora.gguf");
  write_random_model(lora_base_spec(), base.path);
  auto model = Model::load(base.path);
  write_adapter(adapter.path, {{"blk.0.ffn_gate_exps.weight.lora_a", {64, 4}}, {"blk.0.ffn_gate_exps.weight.lora_b", {4, 96}}});
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"blk.0.ffn_gate_exps.weight", "not supported"});
  write_adapter(adapter.path, {{"blk.0.attn_qkv.weight.lora_a", {64, 4}}, {"blk.0.attn_qkv.weight.lora_b", {4, 128}}});
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"blk.0.attn_qkv.weight", "not supported"});
  write_adapter(adapter.path, {{"token_embd.weight.lora_a", {64, 4}}, {"token_embd.weight.lora_b", {4, 512}}});
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"token_embd.weight", "not supported"});
  write_adapter(adapter.path, {{"blk.0.attn_q.weight.lora_a", {64, 4}}});
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"blk.0.attn_q.weight.lora_a", "lora_b"});
  write_adapter(adapter.path, {{"blk.0.attn_q.weight.lora_a", {64, 4}}, {"blk.0.attn_q.weight.lora_b", {3, 64}}});
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"blk.0.attn_q.weight", "shape"});
  write_adapter(adapter.path, {{"blk.0.attn_q.weight.lora_a", {64, 4}}, {"blk.0.attn_q.weight.lora_b", {4, 64}}},
                "model");
  expect_error([&] { LoraAdapter::load(adapter.path, *model); }, {"not a LoRA adapter"});
  expect_error([&] { LoraAdapter::load(base.path, *model); }, {"not a LoRA adapter"});
  // Tied output: the base has no output.weight to adapt.
  MkModelSpec tied = lora_base_spec();
  tied.tied_output = true;
  write_random_model(tied, base.path);
  auto tied_model = Model::load(base.path);
  write_adapter(adapter.path, {{"output.weight.lora_a", {64, 4}}, {"output.weight.lora_b", {4, 512}}});
  expect_error([&] { LoraAdapter::load(adapter.path, *tied_model); }, {"output.weight", "does not exist"});
  expect_error([] { parse_lora_targets("attn_q,attn_z"); }, {"attn_z", "ffn_down"});
}

// Every truncation of an adapter file fails with an Error naming the file; no crash.
TEST(Lora, TruncatedAdapterIsACleanError) {
  TempFile base("lora-base.gguf"), adapter("lora.gguf"), cut("lora-cut.gguf");
  write_random_model(lora_base_spec(), base.path);
  MkAdapterSpec spec;
  spec.rank = 2;
  spec.targets = parse_lora_targets("attn_q,output");
  write_random_adapter(base.path, spec, adapter.path);
  auto model = Model::load(base.path);
  std::ifstream in(adapter.path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NO_THROW(LoraAdapter::load(adapter.path, *model));
  for (size_t n = 0; n < bytes.size(); n += n < 512 ? 1 : 97) {
    std::ofstream(cut.path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(n));
    expect_error([&] { LoraAdapter::load(cut.path, *model); }, {cut.path});
  }
}

// Corrupted copies (random bytes overwritten, mostly in the header): each
// loads or raises parley::Error; a loaded one runs.
TEST(Lora, CorruptedAdapterLoadsOrIsACleanError) {
  TempFile base("lora-base.gguf"), adapter("lora.gguf"), bad("lora-bad.gguf");
  write_random_model(lora_base_spec(), base.path);
  MkAdapterSpec spec;
  spec.rank = 2;
  spec.targets = parse_lora_targets("attn_k,ffn_up,output");
  write_random_adapter(base.path, spec, adapter.path);
  auto model = Model::load(base.path);
  std::ifstream in(adapter.path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 rng(5);
  int errors = 0;
  for (int i = 0; i < 300; ++i) {
    std::vector<char> b = bytes;
    const size_t span = i % 4 ? std::min<size_t>(b.size(), 1024) : b.size();
    for (int k = 0; k < 1 + i % 3; ++k) b[rng() % span] = char(rng());
    std::ofstream(bad.path, std::ios::binary | std::ios::trunc).write(b.data(), std::streamsize(b.size()));
    try {
      auto lora = LoraAdapter::load(bad.path, *model);
      logits_of(*model, prompt(3, i), lora.get());
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Lora, MergeKeepsTheBaseTypes) {
  TempFile base("lora-base.gguf"), adapter("lora.gguf"), merged("lora-merged.gguf");
  write_random_model(lora_base_spec(DType::Q8_0), base.path);
  write_random_adapter(base.path, MkAdapterSpec{}, adapter.path);
  merge_lora(base.path, adapter.path, 1.0f, merged.path);
  const auto a = gguf::File::open(base.path), b = gguf::File::open(merged.path);
  ASSERT_EQ(a->tensors().size(), b->tensors().size());
  for (size_t i = 0; i < a->tensors().size(); ++i) {
    EXPECT_EQ(a->tensors()[i].name, b->tensors()[i].name);
    EXPECT_EQ(a->tensors()[i].type, b->tensors()[i].type) << a->tensors()[i].name;
    EXPECT_EQ(a->tensors()[i].dims, b->tensors()[i].dims) << a->tensors()[i].name;
  }
  EXPECT_EQ(a->keys(), b->keys());
  // The merged Q8_0 model is close to the adapter at run time (re-quantization error only).
  auto model = Model::load(base.path), merged_model = Model::load(merged.path);
  auto lora = LoraAdapter::load(adapter.path, *model);
  const auto tokens = prompt(8, 1);
  const auto got = logits_of(*model, tokens, lora.get()), want = logits_of(*merged_model, tokens, nullptr);
  EXPECT_LT(max_relative_error(got.data(), want.data(), got.size()), 0.05);
}

}  // namespace
}  // namespace parley::lora_test
