#pragma once
// What a benchmark report says about the machine and the process: the CPU
// model (/proc/cpuinfo) and the peak resident memory (/proc/self/status).
#include <cstdint>
#include <string>

namespace parley::loadtest {

std::string cpu_model();     // "unknown" when /proc/cpuinfo has no model name
uint64_t peak_rss_bytes();   // VmHWM of this process; 0 when unknown

}  // namespace parley::loadtest
