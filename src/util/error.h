#pragma once
// One exception type for every recoverable failure (bad files, bad arguments).
// Messages name the file or field and say what was expected.
#include <stdexcept>
#include <string>

namespace parley {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace parley
