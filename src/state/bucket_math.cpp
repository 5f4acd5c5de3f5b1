#include "state/bucket_math.h"

#include <algorithm>

#include "util/error.h"

namespace parley::state {

void check_bucket(double cost, double rate, double burst) {
  if (!(rate > 0) || !(burst > 0) || !(cost >= 0))
    throw Error("rate bucket: need rate > 0, burst > 0 and cost >= 0");
}

BucketResult bucket_result(bool allowed, double tokens, double cost, double rate, double burst) {
  BucketResult r;
  r.allowed = allowed;
  r.remaining = std::max(tokens, 0.0);
  // A cost above the burst can never be met; retry_after still says when
  // the bucket is full, the best the caller can hope for.
  r.retry_after_s = allowed ? 0 : (std::min(cost, burst) - r.remaining) / rate;
  r.reset_s = (burst - r.remaining) / rate;
  return r;
}

}  // namespace parley::state
