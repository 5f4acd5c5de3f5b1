#include "model/lora.h"

#include <algorithm>

#include "gguf/gguf.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

// Multiply-adds below which an expansion runs on the calling thread (as matmul()'s threshold).
constexpr int64_t kLoraParallelWork = 1 << 16;
// Shrink multiply-adds from which the threads share the shrink (a dispatch of
// its own) rather than each computing all of it.
constexpr int64_t kLoraSharedShrink = 1 << 18;

constexpr const char* kStems[kLoraTargets] = {"attn_q",   "attn_k", "attn_v",   "attn_output",
                                              "ffn_gate", "ffn_up", "ffn_down", "output"};

// Stems of tensors an adapter may not target: fused matrices (Phi-3's QKV),
// mixture-of-experts experts, routers and shared experts, the embedding.
constexpr const char* kRefused[] = {"attn_qkv", "_exps", "_shexp", "ffn_gate_inp", "token_embd"};

struct Site {
  int32_t layer = -1;
  LoraTarget target = LoraTarget::Output;
};

// "blk.3.ffn_up.weight" -> layer 3, Up; "output.weight" -> Output; else an Error.
Site site_of(const std::string& adapter, const std::string& name) {
  for (const char* r : kRefused)
    if (name.find(r) != std::string::npos)
      throw Error(adapter + ": LoRA on tensor '" + name + "' is not supported (fused, expert or embedding matrix)");
  if (name == "output.weight") return {};
  const std::string blk = "blk.", suffix = ".weight";
  const size_t dot = name.find('.', blk.size());
  if (name.rfind(blk, 0) == 0 && dot != std::string::npos && name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string num = name.substr(blk.size(), dot - blk.size());
    const std::string stem = name.substr(dot + 1, name.size() - suffix.size() - dot - 1);
    if (!num.empty() && std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; }))
      for (int32_t t = 0; t < kLoraTargets - 1; ++t)
        if (stem == kStems[t]) return {std::stoi(num), LoraTarget(t)};
  }
  throw Error(adapter + ": LoRA tensor '" + name + "' is not a projection this model runs");
}

const MatrixView& base_matrix(const Model& m, const Site& s) {
  if (s.target == LoraTarget::Output) return m.weights().output;
  const LayerWeights& lw = m.weights().layers[size_t(s.layer)];
  const MatrixView* views[] = {&lw.wq, &lw.wk, &lw.wv, &lw.wo, &lw.w_gate, &lw.w_up, &lw.w_down};
  return *views[int32_t(s.target)];
}

std::vector<float> widen(const gguf::TensorInfo& t) {
  std::vector<float> v(t.n_elements());
  dequantize_row(t.type, t.data, v.data(), int64_t(v.size()));
  return v;
}

// rows x cols -> cols x rows.
std::vector<float> transposed(const std::vector<float>& m, size_t rows, size_t cols) {
  std::vector<float> t(m.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
  return t;
}

std::string dims_text(const gguf::TensorInfo& t) { return gguf::shape_text(t.dims); }

std::atomic<uint64_t> next_id{1};

}  // namespace

const char* lora_target_name(LoraTarget t) { return kStems[int32_t(t)]; }

std::unique_ptr<LoraAdapter> LoraAdapter::load(const std::string& path, const Model& base) {
  if (!base.gguf()) throw Error(path + ": LoRA adapters need a GGUF base model");
  const auto f = gguf::File::open(path);
  if (f->get_string("general.type", "") != "adapter" || f->get_string("adapter.type", "") != "lora")
    throw Error(path + ": not a LoRA adapter (general.type must be 'adapter', adapter.type 'lora')");
  const std::string arch = f->get_string("general.architecture", "");
  const std::string base_arch = base.gguf()->get_string("general.architecture");
  if (arch != base_arch)
    throw Error(path + ": adapter for architecture '" + arch + "', the base model is '" + base_arch + "'");
  std::unique_ptr<LoraAdapter> a(new LoraAdapter);
  a->path_ = path;
  a->base_ = &base;
  a->id_ = next_id.fetch_add(1);
  a->alpha_ = float(f->get_float("adapter.lora.alpha", 0.0));
  a->by_layer_.resize(std::max<size_t>(1, base.weights().layers.size()), {});
  const std::string a_suffix = ".lora_a", b_suffix = ".lora_b";
  for (const auto& ta : f->tensors()) {
    const bool is_a = ta.name.size() > a_suffix.size() && ta.name.ends_with(a_suffix);
    if (!is_a && ta.name.ends_with(b_suffix)) {
      if (!f->find_tensor(ta.name.substr(0, ta.name.size() - b_suffix.size()) + a_suffix))
        throw Error(path + ": tensor '" + ta.name + "' has no matching lora_a");
      continue;
    }
    if (!is_a) throw Error(path + ": tensor '" + ta.name + "' is neither a lora_a nor a lora_b");
    const std::string name = ta.name.substr(0, ta.name.size() - a_suffix.size());
    const gguf::TensorInfo* tb = f->find_tensor(name + b_suffix);
    if (!tb) throw Error(path + ": tensor '" + ta.name + "' has no matching lora_b");
    const Site site = site_of(path, name);
    const gguf::TensorInfo* w = base.gguf()->find_tensor(name);
    if (!w || (site.layer >= int32_t(base.weights().layers.size())))
      throw Error(path + ": LoRA tensor '" + name + "' does not exist in the base model");
    for (const gguf::TensorInfo* t : {&ta, tb}) {
      if (t->dims.size() != 2)
        throw Error(path + ": tensor '" + t->name + "' must be 2-D, has shape " + dims_text(*t));
      if (t->type != DType::F32 && t->type != DType::F16 && t->type != DType::BF16 && t->type != DType::Q8_0)
        throw Error(path + ": tensor '" + t->name + "' has type " + std::string(dtype_name(t->type)) +
                    "; adapters may be F32, F16, BF16 or Q8_0");
    }
    if (w->dims.size() != 2 || ta.dims[0] != w->dims[0] || tb->dims[1] != w->dims[1] || ta.dims[1] != tb->dims[0])
      throw Error(path + ": tensor '" + name + "' has shape " + gguf::shape_text(w->dims) + " in the base model; " +
                  "lora_a is " + dims_text(ta) + ", lora_b " + dims_text(*tb) +
                  " (expected {in, rank} and {rank, out})");
    const MatrixView& m = base_matrix(base, site);
    if (m.data == nullptr || uint64_t(m.rows) != w->dims[1])
      throw Error(path + ": LoRA on tensor '" + name + "' is not supported (fused or absent in this model)");
    LoraPair p;
    p.rank = int32_t(ta.dims[1]);
    p.in = int32_t(ta.dims[0]);
    p.out = int32_t(tb->dims[1]);
    p.scale = a->alpha_ != 0.0f ? a->alpha_ / float(p.rank) : 1.0f;
    a->storage_.push_back(widen(ta));
    p.a = MatrixView{DType::F32, p.rank, int64_t(ta.dims[0]), a->storage_.back().data()};
    a->storage_.push_back(transposed(widen(*tb), size_t(p.out), size_t(p.rank)));
    p.bt = a->storage_.back().data();
    a->add(name, p, site.layer, site.target);
  }
  if (a->by_name_.empty()) throw Error(path + ": the adapter has no lora_a / lora_b tensors");
  return a;
}

void LoraAdapter::add(const std::string& base_name, LoraPair pair, int32_t layer, LoraTarget target) {
  max_rank_ = std::max(max_rank_, pair.rank);
  const LoraPair* p = &by_name_.emplace(base_name, pair).first->second;  // map nodes do not move
  by_layer_[size_t(std::max(layer, 0))][size_t(target)] = p;
}

uint64_t LoraAdapter::bytes() const {
  uint64_t n = 0;
  for (const auto& v : storage_) n += v.size() * sizeof(float);
  return n;
}

const LoraPair* LoraAdapter::find(int32_t layer, LoraTarget target) const {
  return by_layer_[size_t(std::max(layer, 0))][size_t(target)];
}

void LoraStep::apply(ThreadPool& pool, int32_t layer, std::span<const LoraOutput> outs, const float* x, int32_t n,
                     const LoraUse* rows) {
  adapters_.clear();
  for (int32_t t = 0; t < n; ++t)
    if (rows[t].adapter && std::find(adapters_.begin(), adapters_.end(), rows[t].adapter) == adapters_.end())
      adapters_.push_back(rows[t].adapter);
  // Columns in blocks that keep a block of Bᵀ's rank rows in L1 across the tokens.
  constexpr int64_t kCols = 256;
  for (const LoraAdapter* ad : adapters_) {
    picked_.clear();
    for (int32_t t = 0; t < n; ++t)
      if (rows[t].adapter == ad) picked_.push_back(t);
    const int32_t m = int32_t(picked_.size());
    // The adapter's pairs among `outs`: their products, coefficients and column blocks side by side.
    parts_.clear();
    size_t mr = 0;
    int64_t blocks = 0, work = 0, shrink_work = 0;
    for (const LoraOutput& o : outs) {
      const LoraPair* p = ad->find(layer, o.target);
      if (!p) continue;
      parts_.push_back({p, o.y, mr, blocks});
      mr += size_t(m) * size_t(p->rank);
      blocks += (int64_t(p->out) + kCols - 1) / kCols;
      work += int64_t(m) * p->rank * (p->in + p->out);
      shrink_work += int64_t(m) * p->rank * p->in;
    }
    if (parts_.empty()) continue;
    if (coef_.size() < mr * size_t(pool.size())) coef_.resize(mr * size_t(pool.size()));
    // Each row's rank products with A, times its scale.
    const auto shrink = [&](float* coef, int32_t i0, int32_t i1) {
      for (const Part& part : parts_) {
        const LoraPair& p = *part.pair;
        const auto* a = static_cast<const float*>(p.a.data);
        const size_t in = size_t(p.in), r = size_t(p.rank);
        for (int32_t i = i0; i < i1; ++i) {
          const int32_t t = picked_[size_t(i)];
          const float s = p.scale * rows[t].scale;
          float* c = coef + part.coef + size_t(i) * r;
          for (size_t k = 0; k < r; ++k) c[k] = s * dot(a + k * in, x + size_t(t) * in, int64_t(in));
        }
      }
    };
    // Blocks b0..b1 of the parts' columns, one after the other.
    const auto expand = [&](const float* coef, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        size_t j = 0;
        while (j + 1 < parts_.size() && parts_[j + 1].first_block <= b) ++j;
        const Part& part = parts_[j];
        const LoraPair& p = *part.pair;
        const size_t out = size_t(p.out), r = size_t(p.rank);
        const size_t c0 = size_t(b - part.first_block) * size_t(kCols), cols = std::min(out - c0, size_t(kCols));
        for (int32_t i = 0; i < m; ++i)
          axpy_rows(part.y + size_t(picked_[size_t(i)]) * out + c0, coef + part.coef + size_t(i) * r, p.bt + c0,
                    int64_t(r), int64_t(out), int64_t(cols));
      }
    };
    // Small products on the calling thread: a pool wake-up costs more.
    if (work < kLoraParallelWork || pool.size() == 1) {
      shrink(coef_.data(), 0, m);
      expand(coef_.data(), 0, blocks);
      continue;
    }
    // The threads split the columns, each computing the small shrink for
    // itself rather than wait for a second dispatch; a long prefill's shrink
    // is worth a dispatch of its own, split by rows.
    const bool shared = shrink_work >= kLoraSharedShrink;
    if (shared)
      pool.parallel_for(m, [&](int64_t i0, int64_t i1) { shrink(coef_.data(), int32_t(i0), int32_t(i1)); });
    pool.run([&](int t, int nt) {
      const int64_t b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
      if (b0 == b1) return;
      float* coef = shared ? coef_.data() : coef_.data() + size_t(t) * mr;
      if (!shared) shrink(coef, 0, m);
      expand(coef, b0, b1);
    });
  }
}

}  // namespace parley
