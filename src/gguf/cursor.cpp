#include "gguf/cursor.h"

namespace parley::gguf {

std::string Where::str() const {
  std::string s = parent ? parent->str() : std::string();
  if (!label.empty())
    s += (s.empty() ? "" : " ") + std::string(label);
  else
    s += "[" + std::to_string(index) + "]";
  return s;
}

void Cursor::fail(const Where& where, const std::string& what) const {
  throw Error(path_ + ": " + where.str() + ": " + what);
}

void Cursor::truncated(uint64_t n, const Where& where, std::string_view field) const {
  fail(where, std::string(field) + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) +
                  ", but only " + std::to_string(remaining()) + " are left (file truncated?)");
}

void Cursor::check_count(uint64_t count, uint64_t min_bytes, const Where& where, std::string_view field) const {
  if (count > remaining() / min_bytes)
    fail(where, std::string(field) + " " + std::to_string(count) + " is impossible: at least " +
                    std::to_string(min_bytes) + " bytes each, but only " + std::to_string(remaining()) +
                    " bytes are left in the file");
}

std::string Cursor::read_string(const Where& where, std::string_view field) {
  const auto len = read<uint64_t>(where, field);
  if (len > remaining())
    fail(where, std::string(field) + " length " + std::to_string(len) + " exceeds the " +
                    std::to_string(remaining()) + " bytes left in the file");
  std::string s(reinterpret_cast<const char*>(base_ + pos_), len);
  pos_ += len;
  return s;
}

}  // namespace parley::gguf
