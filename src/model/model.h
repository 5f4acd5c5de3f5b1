#pragma once
// A loaded model: configuration, weights and tokenizer, from a GGUF file or a
// llama2.c checkpoint (+ tokenizer.bin). Immutable after loading and shared by
// every sequence that runs on it.
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/config.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"
#include "util/aligned_bytes.h"
#include "util/mapped_file.h"

namespace parley {

class Model {
 public:
  // `tokenizer_path` is used for llama2.c checkpoints only; empty means
  // "tokenizer.bin" (or tok<vocab>.bin) beside the checkpoint.
  // kPack adds packed copies of the matrices where packing_helps()
  // (kernels/packed_gemm.h) and releases their file pages; kMapOnly keeps every
  // matrix in the file's mapping (least memory, for models near the RAM size).
  enum class Layout { kPack, kMapOnly };
  static std::unique_ptr<Model> load(const std::string& path, const std::string& tokenizer_path = "",
                                     Layout layout = Layout::kPack);
  // The tokenizer of a model file alone, without its weights or configuration:
  // from a GGUF file's metadata (any architecture, vocabulary-only files too),
  // or from a llama2.c checkpoint's header and its tokenizer.bin (as load()).
  static Tokenizer load_tokenizer(const std::string& path, const std::string& tokenizer_path = "");
  // Whether `path` starts with the GGUF magic (else load() takes it for a llama2.c checkpoint).
  static bool is_gguf(const std::string& path);

  const std::string& path() const { return path_; }
  std::string name() const;  // general.name, else the file name
  const ModelConfig& config() const { return config_; }
  const Weights& weights() const { return weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // Another chat template than the file's (--chat-template); before serving.
  void set_chat_template(std::string chat_template) { tokenizer_->set_chat_template(std::move(chat_template)); }
  const gguf::File* gguf() const { return gguf_.get(); }  // null for llama2.c files
  uint64_t weight_bytes() const { return weight_bytes_; }
  uint64_t n_params() const { return n_params_; }
  uint64_t packed_bytes() const { return packed_bytes_; }  // memory of the packed copies

 private:
  Model() = default;
  void load_gguf(const std::string& path);
  void load_llama2c(const std::string& path, const std::string& tokenizer_path);
  static Tokenizer load_llama2c_tokenizer(const std::string& path, const std::string& tokenizer_path);
  void pack_matrices();

  std::string path_;
  ModelConfig config_;
  Weights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<gguf::File> gguf_;
  std::unique_ptr<MappedFile> map_;  // llama2.c checkpoint mapping
  uint64_t weight_bytes_ = 0;
  uint64_t n_params_ = 0;
  AlignedBytes packed_;  // every packed matrix, one after the other
  uint64_t packed_bytes_ = 0;
};

}  // namespace parley
