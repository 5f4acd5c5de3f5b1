#pragma once
// Runs the parley binary (PARLEY_BINARY) as a subprocess for the CLI tests.
#include <string>

namespace parley::test {

inline const std::string kBin = PARLEY_BINARY;
inline const std::string kShared = PARLEY_SHARED_DIR;

struct Run {
  int status;
  std::string out;  // stdout only; stderr goes to err
  std::string err;
};

// `args` are appended to the binary's path and run by the shell.
Run run(const std::string& args, const std::string& stdin_text = "");

}  // namespace parley::test
