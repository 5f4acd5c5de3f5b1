#pragma once
// A unique path under the temp directory, removed (with SQLite's -wal/-shm
// companions) when the object goes.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "state/session.h"

namespace parley::test {

class TempFile {
 public:
  explicit TempFile(const std::string& extension)
      : path_((std::filesystem::temp_directory_path() /
               ("parley_state_" + std::to_string(getpid()) + "_" + state::new_session_id() + extension))
                  .string()) {}
  ~TempFile() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace parley::test
