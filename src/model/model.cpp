#include "model/model.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "kernels/packed_q8.h"
#include "util/error.h"

namespace parley {

std::unique_ptr<Model> Model::load(const std::string& path, const std::string& tokenizer_path, Layout layout) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open model file");
  char magic[4] = {};
  in.read(magic, 4);
  std::unique_ptr<Model> m(new Model());
  m->path_ = path;
  if (in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0) {
    m->load_gguf(path);
  } else {
    m->load_llama2c(path, tokenizer_path);
  }
  if (layout == Layout::kPack) m->pack_matrices();
  return m;
}

void Model::pack_matrices() {
  std::vector<MatrixView*> views;
  for (LayerWeights& l : weights_.layers)
    for (MatrixView* v : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) views.push_back(v);
  views.push_back(&weights_.output);
  for (MatrixView* v : views) {
    if (!packing_helps(*v)) continue;
    AlignedBytes& copy = packed_.emplace_back(parley::packed_bytes(*v));
    pack_q8_0(*v, copy.data());
    v->packed = copy.data();
    packed_bytes_ += copy.size();
    // The kernels read the copy now; the embedding lookup still reads a tied output's rows.
    if (gguf_ && v->data != weights_.token_embd.data)
      gguf_->release_pages(v->data, row_bytes(v->type, uint64_t(v->cols)) * uint64_t(v->rows));
  }
}

std::string Model::name() const {
  if (gguf_) {
    const std::string n = gguf_->get_string("general.name", "");
    if (!n.empty()) return n;
  }
  return std::filesystem::path(path_).stem().string();
}

}  // namespace parley
