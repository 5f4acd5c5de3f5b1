#pragma once
// Paths the model tests share.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"
#include "util/error.h"

namespace parley::testing {

inline const std::string kShared = PARLEY_SHARED_DIR;
inline const std::string kBundled = PARLEY_SOURCE_DIR "/models/stories260K.gguf";

// A scratch file of this test process (each ctest case runs in its own).
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("parley-model-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// Loading `path` fails with an error whose text contains every one of
// `parts`; the file is removed.
inline void expect_load_error(const std::string& path, const std::vector<std::string>& parts) {
  try {
    Model::load(path);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace parley::testing
