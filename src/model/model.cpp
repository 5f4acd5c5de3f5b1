#include "model/model.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace parley {

std::unique_ptr<Model> Model::load(const std::string& path, const std::string& tokenizer_path) {
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
  return m;
}

std::string Model::name() const {
  if (gguf_) {
    const std::string n = gguf_->get_string("general.name", "");
    if (!n.empty()) return n;
  }
  return std::filesystem::path(path_).stem().string();
}

}  // namespace parley
