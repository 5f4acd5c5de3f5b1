#pragma once
// Human-readable summary of a GGUF file (what `parley info` prints).
#include <string>

#include "gguf/gguf.h"

namespace parley::gguf {

// Version, alignment, every metadata key in file order (long strings and
// arrays abbreviated to their first items), then a table of the tensors
// (name, type, shape, bytes) with totals: count, parameters, bytes.
std::string describe(const File& file);

// One value as `describe` shows it: strings quoted and escaped, arrays as
// "[length] first, items, ...".
std::string format_value(const Value& v);

}  // namespace parley::gguf
