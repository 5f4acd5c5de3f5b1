#include "model/model.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kernels/packed_gemm.h"
#include "util/error.h"

namespace parley {

bool Model::is_gguf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open model file");
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

std::unique_ptr<Model> Model::load(const std::string& path, const std::string& tokenizer_path, Layout layout) {
  const bool gguf = is_gguf(path);
  std::unique_ptr<Model> m(new Model());
  m->path_ = path;
  if (gguf) {
    m->load_gguf(path);
  } else {
    m->load_llama2c(path, tokenizer_path);
  }
  if (layout == Layout::kPack) m->pack_matrices();
  return m;
}

Tokenizer Model::load_tokenizer(const std::string& path, const std::string& tokenizer_path) {
  return is_gguf(path) ? Tokenizer::from_gguf(path) : load_llama2c_tokenizer(path, tokenizer_path);
}

void Model::pack_matrices() {
  std::vector<MatrixView*> views;
  for (LayerWeights& l : weights_.layers) {
    for (MatrixView* v : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down, &l.moe.shared_gate,
                          &l.moe.shared_up, &l.moe.shared_down})
      if (v->data && packing_helps(*v)) views.push_back(v);
    for (auto* experts : {&l.moe.gate, &l.moe.up, &l.moe.down})
      for (MatrixView& v : *experts)
        if (packing_helps(v)) views.push_back(&v);
  }
  if (packing_helps(weights_.output)) views.push_back(&weights_.output);
  // One buffer for all of them: large enough for huge pages (fewer TLB misses
  // while decode streams every matrix).
  std::vector<uint64_t> offsets;
  for (MatrixView* v : views) {
    offsets.push_back(packed_bytes_);
    packed_bytes_ += parley::packed_bytes(*v);
  }
  packed_ = AlignedBytes(packed_bytes_);
  // Reading the file dominates: the matrices are packed on every core.
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads(std::max(1u, std::thread::hardware_concurrency()));
  for (std::thread& t : threads)
    t = std::thread([&] {
      for (size_t i = next++; i < views.size(); i = next++) {
        MatrixView& v = *views[i];
        pack_matrix(v, packed_.data() + offsets[i]);
        v.packed = packed_.data() + offsets[i];
        // The kernels read the copy now; the embedding lookup still reads a tied output's rows.
        if (gguf_ && v.data != weights_.token_embd.data)
          gguf_->release_pages(v.data, row_bytes(v.type, uint64_t(v.cols)) * uint64_t(v.rows));
      }
    });
  for (std::thread& t : threads) t.join();
}

std::string Model::name() const {
  if (gguf_) {
    const std::string n = gguf_->get_string("general.name", "");
    if (!n.empty()) return n;
  }
  return std::filesystem::path(path_).stem().string();
}

}  // namespace parley
