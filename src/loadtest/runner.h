#pragma once
// Runs a load test: virtual users (closed loop) or Poisson arrivals (open
// loop) on one io_context served by a few threads, every request on a
// keep-alive connection, every answer timed as it streams in.
#include <functional>
#include <string>
#include <vector>

#include "loadtest/idle_connections.h"
#include "loadtest/options.h"
#include "loadtest/request_record.h"

namespace parley::loadtest {

struct LoadResult {
  std::string model;
  double wall_s = 0;  // first request sent to last answer
  std::vector<RequestRecord> records;  // in order of completion
  IdleCount idle;                      // with --idle-connections
};

// Progress: called about 5 times a second with (finished, failed, seconds).
using ProgressFn = std::function<void(int64_t finished, int64_t failed, double elapsed_s)>;

// Throws parley::Error when the server cannot be reached or named at all.
LoadResult run_load(const LoadOptions& options, const ProgressFn& progress = {});

}  // namespace parley::loadtest
