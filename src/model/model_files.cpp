#include "model/model_files.h"

#include "gguf/writer.h"
#include "util/error.h"

namespace parley {
namespace {

// Adds one tensor in the recipe's type, counting what it wrote.
class TensorSink {
 public:
  TensorSink(gguf::Writer& w, const QuantRecipe& recipe, int32_t n_layers, WriteReport& report)
      : w_(w), recipe_(recipe), n_layers_(n_layers), report_(report) {}

  void add(const std::string& name, DType from, const void* data, std::vector<uint64_t> dims) {
    uint64_t rows = 1;
    for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
    DType to = tensor_type(recipe_, name, dims, n_layers_);
    if (dims.size() < 2 && from != DType::F32) to = from;  // keep a non-F32 vector as it is
    if (!stays_f32(name, dims) && to != planned_type(recipe_, name, dims, n_layers_)) ++report_.fallbacks;
    report_.in_bytes += row_bytes(from, dims[0]) * rows;
    report_.out_bytes += row_bytes(to, dims[0]) * rows;
    ++report_.tensors;
    w_.add_tensor(name, to, dims, convert_rows(from, data, dims[0], rows, to));
  }
  void matrix(const std::string& name, const MatrixView& m) {
    add(name, m.type, m.data, {uint64_t(m.cols), uint64_t(m.rows)});
  }
  void vector(const std::string& name, const float* v, uint64_t n) { add(name, DType::F32, v, {n}); }

 private:
  gguf::Writer& w_;
  const QuantRecipe& recipe_;
  int32_t n_layers_;
  WriteReport& report_;
};

void set_llama_config(gguf::Writer& w, const ModelConfig& c) {
  using gguf::Value;
  w.set("llama.context_length", Value::u32(uint32_t(c.context_length)));
  w.set("llama.embedding_length", Value::u32(uint32_t(c.dim)));
  w.set("llama.feed_forward_length", Value::u32(uint32_t(c.ffn_dim)));
  w.set("llama.attention.head_count", Value::u32(uint32_t(c.n_heads)));
  w.set("llama.attention.head_count_kv", Value::u32(uint32_t(c.n_kv_heads)));
  w.set("llama.block_count", Value::u32(uint32_t(c.n_layers)));
  w.set("llama.rope.dimension_count", Value::u32(uint32_t(c.rope_dim)));
  w.set("llama.rope.freq_base", Value::f32(c.rope_base));
  w.set("llama.attention.layer_norm_rms_epsilon", Value::f32(c.norm_eps));
  if (c.head_dim * c.n_heads != c.dim) w.set("llama.attention.key_length", Value::u32(uint32_t(c.head_dim)));
  if (c.sliding_window > 0) w.set("llama.attention.sliding_window", Value::u32(uint32_t(c.sliding_window)));
  if (c.rope_scale != 1.0f) {
    w.set("llama.rope.scaling.type", Value::str("linear"));
    w.set("llama.rope.scaling.factor", Value::f32(c.rope_scale));
  }
}

void set_vocab(gguf::Writer& w, const Vocab& v) {
  using gguf::Value;
  std::vector<int32_t> types;
  for (TokenType t : v.types) types.push_back(int32_t(t));
  w.set("tokenizer.ggml.model", Value::str(v.kind == Vocab::Kind::Spm ? "llama" : "gpt2"));
  w.set("tokenizer.ggml.tokens", Value::strings(v.tokens));
  if (!v.scores.empty()) w.set("tokenizer.ggml.scores", Value::floats(v.scores));
  w.set("tokenizer.ggml.token_type", Value::ints(types));
  if (!v.merges.empty()) w.set("tokenizer.ggml.merges", Value::strings(v.merges));
  if (v.kind == Vocab::Kind::Bpe) w.set("tokenizer.ggml.pre", Value::str(v.pre));
  const std::pair<const char*, int32_t> ids[] = {
      {"bos", v.bos}, {"eos", v.eos}, {"unknown", v.unk}, {"padding", v.pad}, {"eot", v.eot}};
  for (const auto& [name, id] : ids)
    if (id >= 0) w.set(std::string("tokenizer.ggml.") + name + "_token_id", Value::u32(uint32_t(id)));
  w.set("tokenizer.ggml.add_bos_token", Value::boolean(v.add_bos));
  w.set("tokenizer.ggml.add_space_prefix", Value::boolean(v.add_space_prefix));
  if (!v.chat_template.empty()) w.set("tokenizer.chat_template", Value::str(v.chat_template));
}

}  // namespace

uint32_t file_type_of(const QuantRecipe& r) {
  switch (r.base) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q4_0: return 2;
    case DType::Q4_1: return 3;
    case DType::Q8_0: return 7;
    case DType::Q5_0: return 8;
    case DType::Q5_1: return 9;
    case DType::Q2_K: return 10;
    case DType::Q3_K: return r.mixed ? 12 : 11;  // Q3_K_M : Q3_K_S
    case DType::Q4_K: return r.mixed ? 15 : 14;  // Q4_K_M : Q4_K_S
    case DType::Q5_K: return r.mixed ? 17 : 16;
    case DType::Q6_K: return 18;
    case DType::IQ4_NL: return 25;
    case DType::IQ4_XS: return 30;
    case DType::BF16: return 32;
  }
  return 0;
}

WriteReport quantize_gguf(const std::string& in_path, const std::string& out_path, const QuantRecipe& recipe) {
  const auto in = gguf::File::open(in_path);
  const std::string arch = in->get_string("general.architecture", "llama");
  const auto n_layers = int32_t(in->get_uint(arch + ".block_count", 0));
  gguf::Writer w;
  for (const auto& key : in->keys()) w.set(key, *in->find(key));
  w.set("general.file_type", gguf::Value::u32(file_type_of(recipe)));
  w.set("general.quantization_version", gguf::Value::u32(2));
  WriteReport report;
  TensorSink sink(w, recipe, n_layers, report);
  for (const auto& t : in->tensors()) sink.add(t.name, t.type, t.data, t.dims);
  w.write(out_path);
  return report;
}

WriteReport convert_to_gguf(const Model& model, const std::string& out_path, const QuantRecipe& recipe) {
  const ModelConfig& c = model.config();
  if (c.arch != "llama" || c.qkv_bias || c.qk_norm || c.rope_style != RopeStyle::Interleaved || c.moe.enabled())
    throw Error("convert: only Llama-architecture models (as in llama2.c checkpoints) are supported");
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("llama"));
  w.set("general.name", gguf::Value::str(model.name()));
  w.set("general.file_type", gguf::Value::u32(file_type_of(recipe)));
  set_llama_config(w, c);
  set_vocab(w, model.tokenizer().vocab());
  WriteReport report;
  TensorSink sink(w, recipe, c.n_layers, report);
  const Weights& wt = model.weights();
  const auto dim = uint64_t(c.dim);
  sink.matrix("token_embd.weight", wt.token_embd);
  sink.vector("output_norm.weight", wt.output_norm, dim);
  if (!c.tied_output) sink.matrix("output.weight", wt.output);
  if (wt.rope_freqs) sink.vector("rope_freqs.weight", wt.rope_freqs, uint64_t(c.rope_dim / 2));
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = wt.layers[size_t(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    sink.vector(p + "attn_norm.weight", lw.attn_norm, dim);
    sink.matrix(p + "attn_q.weight", lw.wq);
    sink.matrix(p + "attn_k.weight", lw.wk);
    sink.matrix(p + "attn_v.weight", lw.wv);
    sink.matrix(p + "attn_output.weight", lw.wo);
    sink.vector(p + "ffn_norm.weight", lw.ffn_norm, dim);
    sink.matrix(p + "ffn_gate.weight", lw.w_gate);
    sink.matrix(p + "ffn_down.weight", lw.w_down);
    sink.matrix(p + "ffn_up.weight", lw.w_up);
  }
  w.write(out_path);
  return report;
}

}  // namespace parley
