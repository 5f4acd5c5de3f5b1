#include "model/lora_files.h"

#include <cmath>
#include <cstring>
#include <random>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

// Rows of `cols` floats stored as `type` (F32 when the rows do not fill its blocks).
void add_rows_tensor(gguf::Writer& w, const std::string& name, DType type, const std::vector<float>& v,
                     uint64_t cols) {
  if (cols % uint64_t(traits(type).block_elems) != 0) type = DType::F32;
  const uint64_t rows = v.size() / cols, bytes = row_bytes(type, cols);
  std::vector<uint8_t> data(bytes * rows);
  for (uint64_t r = 0; r < rows; ++r) quantize_row(type, v.data() + r * cols, data.data() + r * bytes, int64_t(cols));
  w.add_tensor(name, type, {cols, rows}, std::move(data));
}

}  // namespace

std::vector<LoraTarget> parse_lora_targets(const std::string& list) {
  std::vector<LoraTarget> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, end - start);
    bool known = false;
    for (int32_t t = 0; t < kLoraTargets; ++t)
      if (name == "all" || name == lora_target_name(LoraTarget(t))) {
        out.push_back(LoraTarget(t));
        known = true;
      }
    if (!known) {
      std::string names = "all";
      for (int32_t t = 0; t < kLoraTargets; ++t) names += std::string(", ") + lora_target_name(LoraTarget(t));
      throw Error("unknown LoRA target '" + name + "' (known: " + names + ")");
    }
    start = end + 1;
  }
  return out;
}

void write_random_adapter(const std::string& base_path, const MkAdapterSpec& spec, const std::string& out_path) {
  if (spec.rank < 1) throw Error("mkadapter: the rank must be at least 1");
  if (spec.type != DType::F32 && spec.type != DType::F16 && spec.type != DType::BF16 && spec.type != DType::Q8_0)
    throw Error("mkadapter: adapters may be F32, F16, BF16 or Q8_0, not " + std::string(dtype_name(spec.type)));
  const auto base = gguf::File::open(base_path);
  const std::string arch = base->get_string("general.architecture");
  const uint64_t layers = base->get_uint(arch + ".block_count");
  const bool fused = base->find_tensor("blk.0.attn_qkv.weight") != nullptr;  // Phi-3: its ffn_up is gate + up
  const std::vector<LoraTarget> targets = spec.targets.empty() ? parse_lora_targets("all") : spec.targets;
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str(arch));
  w.set("general.type", gguf::Value::str("adapter"));
  w.set("adapter.type", gguf::Value::str("lora"));
  w.set("adapter.lora.alpha", gguf::Value::f32(spec.alpha > 0.0f ? spec.alpha : float(spec.rank)));
  std::mt19937_64 rng(spec.seed);
  auto values = [&](uint64_t cols, uint64_t rows, double size) {
    std::vector<float> v(cols * rows);
    const double s = std::sqrt(3.0 / double(cols)) * size;  // outputs of about `size` deviation
    for (auto& x : v) x = float((double(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0) * s);
    return v;
  };
  const uint64_t r = uint64_t(spec.rank);
  int32_t written = 0;
  for (uint64_t l = 0; l <= layers; ++l)
    for (LoraTarget t : targets) {
      const bool output = t == LoraTarget::Output;
      if (output != (l == layers)) continue;  // the output matrix after the layers
      const std::string name = output ? "output.weight" : "blk." + std::to_string(l) + "." + lora_target_name(t) + ".weight";
      const gguf::TensorInfo* bt = base->find_tensor(name);
      if (!bt || bt->dims.size() != 2 || (fused && t == LoraTarget::Up)) continue;
      const uint64_t in = bt->dims[0], out = bt->dims[1];
      add_rows_tensor(w, name + ".lora_a", spec.type, values(in, r, 1.0), in);
      add_rows_tensor(w, name + ".lora_b", spec.type, values(r, out, double(spec.strength)), r);
      ++written;
    }
  if (written == 0) throw Error("mkadapter: " + base_path + " has none of the requested projections");
  w.write(out_path);
}

void merge_lora(const std::string& base_path, const std::string& adapter_path, float scale,
                const std::string& out_path) {
  const auto base = Model::load(base_path, "", Model::Layout::kMapOnly);
  const auto adapter = LoraAdapter::load(adapter_path, *base);
  const gguf::File& f = *base->gguf();
  gguf::Writer w;
  for (const std::string& key : f.keys()) w.set(key, f.metadata().at(key));
  for (const gguf::TensorInfo& t : f.tensors()) {
    const auto it = adapter->pairs().find(t.name);
    if (it == adapter->pairs().end()) {
      const auto* p = static_cast<const uint8_t*>(t.data);
      w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(p, p + t.n_bytes()));
      continue;
    }
    const LoraPair& lp = it->second;
    const size_t in = size_t(lp.in), out = size_t(lp.out), r = size_t(lp.rank);
    std::vector<float> m(t.n_elements());
    dequantize_row(t.type, t.data, m.data(), int64_t(m.size()));
    std::vector<float> a(r * in), bt(r * out);
    dequantize_row(lp.a.type, lp.a.data, a.data(), int64_t(a.size()));
    dequantize_row(lp.bt.type, lp.bt.data, bt.data(), int64_t(bt.size()));
    for (size_t o = 0; o < out; ++o)
      for (size_t k = 0; k < r; ++k) {
        const float c = scale * lp.scale * bt[k * out + o];
        for (size_t i = 0; i < in; ++i) m[o * in + i] += c * a[k * in + i];
      }
    add_rows_tensor(w, t.name, t.type, m, in);
  }
  w.write(out_path);
}

}  // namespace parley
