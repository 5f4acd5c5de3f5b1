#pragma once
// One block's mixture-of-experts FFN weights. Each expert's matrix is a 2-D
// slice of the file's 3-D ffn_{gate,up,down}_exps tensor ([n_expert, rows,
// cols] with the expert outermost): a view into the mapping, packed like any
// dense matrix where packing helps.
#include <vector>

#include "kernels/matmul.h"

namespace parley {

struct MoeWeights {
  MatrixView router;                       // ffn_gate_inp: n_experts rows of dim
  std::vector<MatrixView> gate, up, down;  // expert e's slices, e < n_experts
  // Qwen2-MoE's shared expert (ffn_*_shexp), which every token goes through,
  // scaled by sigmoid(shared_gate_inp . x); empty views / null without one.
  MatrixView shared_gate, shared_up, shared_down;
  const float* shared_gate_inp = nullptr;

  bool enabled() const { return router.data != nullptr; }
  bool has_shared() const { return shared_gate.data != nullptr; }
};

}  // namespace parley
