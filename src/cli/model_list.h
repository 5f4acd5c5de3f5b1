#pragma once
// The models `parley serve` serves: --model values (PATH, or NAME=PATH for a
// multi-model server), the model files of --models-dir, and the flags given
// per model (--chat-template, --fallback-model: VALUE or NAME=VALUE).
#include <map>
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
// A per-model flag's values by model name: "NAME=VALUE" (split as
// parse_model_value splits) for the model NAME, a plain VALUE for the
// default model (models[0]). Throws parley::Error naming `flag` for a NAME
// that is none of `models` and for a model given two values.
std::map<std::string, std::string> per_model_values(const std::vector<std::string>& values,
                                                    const std::vector<NamedModel>& models, const std::string& flag);

}  // namespace parley
