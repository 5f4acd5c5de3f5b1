#include "obs/process_memory.h"

#include <fstream>
#include <unistd.h>

namespace parley::obs {

uint64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

}  // namespace parley::obs
