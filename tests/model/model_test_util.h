#pragma once
// Paths the model tests share.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
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

// A scratch file of this test process, removed when the test leaves its scope (errors included).
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name) : path(temp_path(name)) {}
  ~TempFile() { std::filesystem::remove(path); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// `f` throws a parley::Error whose text contains every one of `parts`.
inline void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// Loading `path` fails with an error whose text contains every one of
// `parts`; the file is removed.
inline void expect_load_error(const std::string& path, const std::vector<std::string>& parts) {
  expect_error([&] { Model::load(path); }, parts);
  std::filesystem::remove(path);
}

// The largest absolute difference over the largest magnitude of `want`.
template <typename Want>
double max_relative_error(const float* got, const Want* want, size_t n) {
  double max_abs = 0, max_err = 0;
  for (size_t i = 0; i < n; ++i) {
    max_abs = std::max(max_abs, std::abs(double(want[i])));
    max_err = std::max(max_err, std::abs(double(got[i]) - double(want[i])));
  }
  return max_err / max_abs;
}

inline double max_relative_error(const float* got, const std::vector<double>& want) {
  return max_relative_error(got, want.data(), want.size());
}

}  // namespace parley::testing
