#pragma once
// Servers and load generators holding thousands of sockets need more file
// descriptors than the usual soft limit of 1024 allows.
#include <cstdint>

namespace parley {

// Raises the soft RLIMIT_NOFILE to the hard limit when it is lower; returns
// the soft limit now in force.
uint64_t raise_fd_limit();

}  // namespace parley
