#pragma once
// Paths the model tests share.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace parley::testing {

inline const std::string kShared = PARLEY_SHARED_DIR;
inline const std::string kBundled = PARLEY_SOURCE_DIR "/models/stories260K.gguf";

// A scratch file of this test process (each ctest case runs in its own).
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("parley-model-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

}  // namespace parley::testing
