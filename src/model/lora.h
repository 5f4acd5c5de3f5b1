#pragma once
// LoRA adapters in llama.cpp's GGUF adapter format (convert_lora_to_gguf.py):
// general.type = adapter, adapter.type = lora, adapter.lora.alpha, and for a
// base matrix W named N the tensors N.lora_a (dims {in, rank}: rank rows of
// in) and N.lora_b (dims {rank, out}: out rows of rank). The adapted product
// is W x + s * B (A x) with s = alpha / rank (1 when alpha is 0) times the
// user's scale. A and B stay F16 when the file has them so (half the bytes a
// step reads), else are widened to F32 (F32, BF16, Q8_0), B transposed: the
// expansion adds rank scaled rows of Bᵀ to each output row (long contiguous
// axpy), where B's own rows are only rank wide.
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace parley {

class Model;

// The projections an adapter may target. Output is the model's output matrix
// (layer -1); the others are per layer.
enum class LoraTarget : int32_t { Q, K, V, O, Gate, Up, Down, Output };
inline constexpr int32_t kLoraTargets = 8;
// "attn_q" .. "ffn_down", "output": the GGUF tensor name's stem.
const char* lora_target_name(LoraTarget t);

struct LoraPair {
  MatrixView a;   // rank rows of in; F32 or F16
  MatrixView bt;  // Bᵀ: rank rows of out, A's type
  int32_t in = 0, out = 0, rank = 0;
  float scale = 1.0f;  // alpha / rank (1 when the file's alpha is 0)
};

class LoraAdapter {
 public:
  // Loads `path` and checks it against `base` (architecture, tensor names and
  // shapes); throws parley::Error naming the file and the offending tensor.
  static std::unique_ptr<LoraAdapter> load(const std::string& path, const Model& base);

  const std::string& path() const { return path_; }
  const Model& base() const { return *base_; }  // the model it was checked against
  uint64_t id() const { return id_; }  // unique within the process: prefix-cache keys
  float alpha() const { return alpha_; }
  int32_t max_rank() const { return max_rank_; }
  uint64_t bytes() const;  // memory of the A and B matrices
  // The pair for `target` of layer `layer` (-1 with Output), or null.
  const LoraPair* find(int32_t layer, LoraTarget target) const;
  // Pairs by base tensor name ("blk.0.attn_q.weight").
  const std::map<std::string, LoraPair>& pairs() const { return by_name_; }

 private:
  LoraAdapter() = default;
  void add(const std::string& base_name, LoraPair pair, int32_t layer, LoraTarget target);

  std::string path_;
  const Model* base_ = nullptr;
  uint64_t id_ = 0;
  float alpha_ = 0.0f;
  int32_t max_rank_ = 0;
  std::vector<std::vector<uint8_t>> storage_;
  std::map<std::string, LoraPair> by_name_;
  std::vector<std::array<const LoraPair*, kLoraTargets>> by_layer_;  // [layer][target]; Output at layer 0
};

// A row's adapter in a batch (null: the base model) and its user scale.
struct LoraUse {
  const LoraAdapter* adapter = nullptr;
  float scale = 1.0f;
};

// One projection's output rows, for LoraStep.
struct LoraOutput {
  LoraTarget target;
  float* y;
};

// The low-rank step after the projections of one input (Q, K and V; O; gate
// and up; down; output) of a batch: y[t] += scale_t * B (A x[t]) for every row
// t whose adapter targets the projection. Rows are grouped by adapter, and
// the whole step is one pool dispatch of units that each take one adapter's
// rows (or a share of them when the batch has fewer adapters than the threads
// need units): the shrinks (A x, the float matmul kernel over the unit's
// rows), then the expansions (Bᵀ's rank rows added straight into the output
// rows, 4 rows sharing each load of Bᵀ) of every projection the adapter targets.
// No unit needs another's shrinks, so the step never waits half-way.
class LoraStep {
 public:
  void apply(ThreadPool& pool, int32_t layer, std::span<const LoraOutput> outs, const float* x, int32_t n,
             const LoraUse* rows);

 private:
  struct Group {
    const LoraAdapter* adapter;
    int32_t first, m;  // its rows: picked_[first .. first + m)
  };
  struct Part {
    const LoraPair* pair;
    float* y;
    size_t coef;  // its coefficients' offset in coef_: [group row][rank]
  };
  struct Unit {
    size_t part0, part1;    // its group's parts
    int32_t first, i0, i1;  // the group's first picked row; the unit's rows i0..i1 of the group
  };
  void group_rows(const LoraUse* rows, int32_t n);
  void run(const Unit& u, const LoraUse* rows);

  std::vector<Group> groups_;
  std::vector<Part> parts_;
  std::vector<Unit> units_;
  std::vector<int32_t> picked_;
  std::vector<float> xg_;    // the picked rows' inputs, adapter by adapter
  std::vector<float> coef_;  // [part][row][rank]: the shrinks' products, scaled
  size_t in_ = 0;            // the input's width
};

}  // namespace parley
