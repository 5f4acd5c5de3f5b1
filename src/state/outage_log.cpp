#include "state/outage_log.h"

#include <cstdio>

namespace parley::state {

OutageLog::OutageLog(std::string what, std::shared_ptr<FailoverStats> stats)
    : what_(std::move(what)), stats_(stats ? std::move(stats) : std::make_shared<FailoverStats>()) {}

void OutageLog::failed(const RedisUnavailable& e) {
  ++stats_->fallbacks;
  if (!stats_->degraded.exchange(true))
    std::fprintf(stderr, "parley: warning: %s; %s served from local state until Redis is back\n", e.what(),
                 what_.c_str());
}

void OutageLog::succeeded() {
  if (stats_->degraded.exchange(false)) std::fprintf(stderr, "parley: Redis is back; %s served from Redis\n", what_.c_str());
}

}  // namespace parley::state
