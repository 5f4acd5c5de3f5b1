#pragma once
// Token-bucket arithmetic shared by the local and the Redis buckets (internal to src/state).
#include "state/rate_buckets.h"

namespace parley::state {

// Throws parley::Error unless rate > 0, burst > 0 and cost >= 0.
void check_bucket(double cost, double rate, double burst);
// The result of a take() that left `tokens` in the bucket.
BucketResult bucket_result(bool allowed, double tokens, double cost, double rate, double burst);

}  // namespace parley::state
