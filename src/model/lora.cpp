#include "model/lora.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "gguf/gguf.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

// Multiply-adds below which a step runs on the calling thread (as matmul()'s threshold).
constexpr int64_t kLoraParallelWork = 1 << 16;
// Output rows per expansion call (their pointers are gathered on the stack).
constexpr int32_t kExpandRows = 64;

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

// A tensor's values as the step reads them: F16 as stored (the file's own
// type), F32 widened from any type.
std::vector<uint8_t> values(const gguf::TensorInfo& t, DType type) {
  if (type != DType::F32) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    return std::vector<uint8_t>(p, p + t.n_bytes());
  }
  std::vector<uint8_t> v(t.n_elements() * sizeof(float));
  dequantize_row(t.type, t.data, reinterpret_cast<float*>(v.data()), int64_t(t.n_elements()));
  return v;
}

// rows x cols elements of `size` bytes -> cols x rows.
std::vector<uint8_t> transposed(const std::vector<uint8_t>& m, size_t rows, size_t cols, size_t size) {
  std::vector<uint8_t> t(m.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) std::memcpy(&t[(c * rows + r) * size], &m[(r * cols + c) * size], size);
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
    // F16 kept when A and B both have it (half the bytes a step reads), else
    // F32 (BF16 too: the BF16 dot-product instructions would round x to BF16).
    const bool half = ta.type == DType::F16 && tb->type == DType::F16;
    const DType type = half ? DType::F16 : DType::F32;
    a->storage_.push_back(values(ta, type));
    p.a = MatrixView{type, p.rank, int64_t(ta.dims[0]), a->storage_.back().data()};
    a->storage_.push_back(transposed(values(*tb, type), size_t(p.out), size_t(p.rank), half ? 2 : 4));
    p.bt = MatrixView{type, p.rank, p.out, a->storage_.back().data()};
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
  for (const auto& v : storage_) n += v.size();
  return n;
}

const LoraPair* LoraAdapter::find(int32_t layer, LoraTarget target) const {
  return by_layer_[size_t(std::max(layer, 0))][size_t(target)];
}

void LoraStep::group_rows(const LoraUse* rows, int32_t n) {
  groups_.clear();
  picked_.clear();
  for (int32_t t = 0; t < n; ++t) {
    const LoraAdapter* ad = rows[t].adapter;
    if (!ad || std::any_of(groups_.begin(), groups_.end(), [ad](const Group& g) { return g.adapter == ad; }))
      continue;
    const auto first = int32_t(picked_.size());
    for (int32_t u = t; u < n; ++u)
      if (rows[u].adapter == ad) picked_.push_back(u);
    groups_.push_back({ad, first, int32_t(picked_.size()) - first});
  }
}

// A unit: its rows' shrinks for every part of its group, then their
// expansions, up to kExpandRows rows a call.
void LoraStep::run(const Unit& u, const LoraUse* rows) {
  const float* xu = xg_.data() + size_t(u.first + u.i0) * in_;
  for (size_t j = u.part0; j < u.part1; ++j) {
    const LoraPair& p = *parts_[j].pair;
    const size_t r = size_t(p.rank);
    float* c = coef_.data() + parts_[j].coef + size_t(u.i0) * r;
    matmul_float_rows(p.a, xu, c, u.i1 - u.i0, 0, p.rank);
    for (int32_t i = u.i0; i < u.i1; ++i, c += r) {
      const float s = p.scale * rows[picked_[size_t(u.first + i)]].scale;
      for (size_t k = 0; k < r; ++k) c[k] *= s;
    }
  }
  for (size_t j = u.part0; j < u.part1; ++j) {
    const Part& part = parts_[j];
    const LoraPair& p = *part.pair;
    const size_t out = size_t(p.out), r = size_t(p.rank);
    for (int32_t i0 = u.i0; i0 < u.i1; i0 += kExpandRows) {
      const int32_t m = std::min(u.i1 - i0, kExpandRows);
      std::array<float*, kExpandRows> y;
      std::array<const float*, kExpandRows> c;
      for (int32_t i = 0; i < m; ++i) {
        y[size_t(i)] = part.y + size_t(picked_[size_t(u.first + i0 + i)]) * out;
        c[size_t(i)] = coef_.data() + part.coef + size_t(i0 + i) * r;
      }
      if (p.bt.type == DType::F32)
        axpy_rows(y.data(), c.data(), m, static_cast<const float*>(p.bt.data), int64_t(r), int64_t(out), int64_t(out));
      else
        axpy_rows_f16(y.data(), c.data(), m, static_cast<const uint16_t*>(p.bt.data), int64_t(r), int64_t(out),
                      int64_t(out));
    }
  }
}

void LoraStep::apply(ThreadPool& pool, int32_t layer, std::span<const LoraOutput> outs, const float* x, int32_t n,
                     const LoraUse* rows) {
  group_rows(rows, n);
  // Two units a thread at least: with fewer adapters, each adapter's rows are
  // cut into shares (each share reads the adapter's matrices again).
  const auto n_groups = int32_t(std::max<size_t>(1, groups_.size()));
  const int32_t shares = (2 * pool.size() + n_groups - 1) / n_groups;
  parts_.clear();
  units_.clear();
  size_t coefs = 0;
  int64_t work = 0;
  for (const Group& g : groups_) {
    const size_t part0 = parts_.size();
    for (const LoraOutput& o : outs) {
      const LoraPair* p = g.adapter->find(layer, o.target);
      if (!p) continue;
      parts_.push_back({p, o.y, coefs});
      coefs += size_t(g.m) * size_t(p->rank);
      work += int64_t(g.m) * p->rank * (p->in + p->out);
      in_ = size_t(p->in);
    }
    const int32_t k = std::min(shares, g.m);
    for (int32_t s = 0; s < k && parts_.size() > part0; ++s)
      units_.push_back({part0, parts_.size(), g.first, g.m * s / k, g.m * (s + 1) / k});
  }
  if (units_.empty()) return;
  // Each adapter's rows side by side: a unit's shrink is one product over them.
  if (xg_.size() < picked_.size() * in_) xg_.resize(picked_.size() * in_);
  for (size_t i = 0; i < picked_.size(); ++i) std::copy_n(x + size_t(picked_[i]) * in_, in_, xg_.data() + i * in_);
  if (coef_.size() < coefs) coef_.resize(coefs);
  // Small steps on the calling thread: a pool wake-up costs more.
  if (work < kLoraParallelWork || pool.size() == 1) {
    for (const Unit& u : units_) run(u, rows);
    return;
  }
  pool.parallel_for_dynamic(int64_t(units_.size()), [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) run(units_[size_t(u)], rows);
  });
}

}  // namespace parley
