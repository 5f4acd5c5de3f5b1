#pragma once
// A read-only memory mapping of a whole file (zero-copy model loading).
#include <cstddef>
#include <cstdint>
#include <string>

namespace parley {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws parley::Error
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Drops the whole pages inside [p, p + n) from this process's memory (for
  // data copied elsewhere); touching them again reads them from the file.
  void release(const void* p, size_t n) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace parley
