#pragma once
// The engine's and the server's counters as JSON (/v1/stats) and in the
// Prometheus text exposition format (/metrics).
#include <string>
#include <utility>
#include <vector>

#include "serve/api/api_context.h"

namespace parley::serve {

json stats_json(const ApiContext& ctx);
std::string prometheus_text(const ApiContext& ctx);

// A multi-model server's: each model's engine and serving metrics as samples
// labelled model="NAME" (the first is the server's own context, whose
// connection and HTTP counters are the server's); the HTTP responses unlabelled.
using NamedContexts = std::vector<std::pair<std::string, const ApiContext*>>;
std::string prometheus_text(const NamedContexts& models);
// `model="NAME"` with the name escaped as Prometheus label values are.
std::string model_label(const std::string& name);

}  // namespace parley::serve
