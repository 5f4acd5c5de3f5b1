#pragma once
// The models `parley serve` serves: --model values (PATH, or NAME=PATH for a
// multi-model server) and the model files of --models-dir.
#include <string>
#include <vector>

namespace parley {

struct NamedModel {
  std::string name;  // what requests put in "model"
  std::string path;
};

// "NAME=PATH" (NAME without '/') or a bare PATH named by its file's stem.
NamedModel parse_model_value(const std::string& value);
// Every *.gguf and *.bin file of `dir` by name, named by its stem; not LoRA
// adapters (GGUF general.type "adapter") nor llama2.c tokenizers (tokenizer.bin).
// Throws parley::Error when `dir` cannot be read.
std::vector<NamedModel> models_in_dir(const std::string& dir);
// Throws parley::Error when two models share a name.
void check_unique_names(const std::vector<NamedModel>& models);

}  // namespace parley
