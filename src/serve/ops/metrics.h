#pragma once
// The engine's and the server's counters as JSON (/v1/stats) and in the
// Prometheus text exposition format (/metrics).
#include <string>

#include "serve/api/api_context.h"

namespace parley::serve {

json stats_json(const ApiContext& ctx);
std::string prometheus_text(const ApiContext& ctx);

}  // namespace parley::serve
