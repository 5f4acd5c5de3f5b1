#include "loadtest/report.h"

#include <cstdio>
#include <map>

#include "loadtest/stats.h"

namespace parley::loadtest {
namespace {

nlohmann::json config_json(const LoadOptions& o, const std::string& model) {
  auto range = [](const LengthRange& r) { return nlohmann::json{{"min", r.lo}, {"max", r.hi}}; };
  return {{"url", o.url},
          {"model", model},
          {"endpoint", o.chat ? "chat" : "completions"},
          {"stream", o.stream},
          {"mode", o.rate > 0 ? "open" : "closed"},
          {"concurrency", o.rate > 0 ? 0 : o.concurrency},
          {"rate", o.rate},
          {"requests", o.requests},
          {"duration_s", o.duration_s},
          {"turns", o.turns},
          {"sessions", o.sessions},
          {"prompt_tokens", range(o.prompt_tokens)},
          {"max_tokens", range(o.max_tokens)},
          {"shared_prefix_tokens", o.shared_prefix_tokens},
          {"prompts_file", o.prompts_file},
          {"seed", o.seed},
          {"idle_connections", o.idle_connections}};
}

nlohmann::json errors_json(const std::vector<RequestRecord>& records) {
  std::map<std::string, int64_t> kinds, statuses;
  nlohmann::json examples = nlohmann::json::array();
  int64_t total = 0;
  for (const RequestRecord& r : records) {
    if (r.ok()) continue;
    ++total;
    ++kinds[error_kind_name(r.error)];
    if (r.status) ++statuses[std::to_string(r.status)];
    if (examples.size() < 5) examples.push_back(r.message);
  }
  return {{"total", total}, {"by_kind", kinds}, {"by_status", statuses}, {"examples", examples}};
}

nlohmann::json ttft_by_turn(const std::vector<RequestRecord>& records, int32_t turns) {
  std::vector<std::vector<double>> by_turn(size_t(std::max(turns, 1)));
  for (const RequestRecord& r : records)
    if (r.ok() && r.ttft_ms >= 0 && r.turn < turns) by_turn[size_t(r.turn)].push_back(r.ttft_ms);
  nlohmann::json out = nlohmann::json::array();
  for (size_t t = 0; t < by_turn.size(); ++t) {
    nlohmann::json s = to_json(summarize(by_turn[t]));
    s["turn"] = t + 1;
    out.push_back(s);
  }
  return out;
}

double per_second(double n, double seconds) { return seconds > 0 ? std::round(n / seconds * 100) / 100 : 0; }

}  // namespace

nlohmann::json make_report(const LoadOptions& o, const LoadResult& result) {
  std::vector<double> ttft, itl, e2e;
  int64_t ok = 0, prompt = 0, cached = 0, output = 0;
  for (const RequestRecord& r : result.records) {
    if (!r.ok()) continue;
    ++ok;
    if (r.ttft_ms >= 0) ttft.push_back(r.ttft_ms);
    itl.insert(itl.end(), r.gaps_ms.begin(), r.gaps_ms.end());
    e2e.push_back(r.e2e_ms);
    prompt += std::max<int64_t>(r.prompt_tokens, 0);
    cached += r.cached_tokens;
    output += r.output_tokens;
  }
  const auto n = int64_t(result.records.size());
  nlohmann::json j = {
      {"config", config_json(o, result.model)},
      {"requests", {{"total", n}, {"succeeded", ok}, {"failed", n - ok}}},
      {"duration_s", std::round(result.wall_s * 1000) / 1000},
      {"requests_per_s", per_second(double(ok), result.wall_s)},
      {"prompt_tokens", prompt},
      {"cached_tokens", cached},
      {"output_tokens", output},
      {"output_tokens_per_s", per_second(double(output), result.wall_s)},
      {"ttft_ms", to_json(summarize(ttft))},
      {"itl_ms", to_json(summarize(itl))},
      {"e2e_ms", to_json(summarize(e2e))},
      {"errors", errors_json(result.records)},
  };
  if (o.turns > 1) j["ttft_by_turn_ms"] = ttft_by_turn(result.records, o.turns);
  if (o.idle_connections > 0)
    j["idle_connections"] = {{"requested", result.idle.requested},
                             {"opened", result.idle.opened},
                             {"open_at_end", result.idle.open_at_end},
                             {"open_s", std::round(result.idle.open_s * 1000) / 1000}};
  return j;
}

std::string format_report(const nlohmann::json& j) {
  char line[512];
  std::string out;
  const auto& c = j["config"];
  std::snprintf(line, sizeof line, "%s %s, model %s, %s loop, %lld requests (%lld ok, %lld failed) in %.2f s\n",
                c["url"].get<std::string>().c_str(), c["endpoint"].get<std::string>().c_str(),
                c["model"].get<std::string>().c_str(), c["mode"].get<std::string>().c_str(),
                (long long)j["requests"]["total"], (long long)j["requests"]["succeeded"],
                (long long)j["requests"]["failed"], j["duration_s"].get<double>());
  out += line;
  std::snprintf(line, sizeof line, "throughput: %.2f requests/s, %.1f output tokens/s (%lld output, %lld prompt, %lld cached tokens)\n",
                j["requests_per_s"].get<double>(), j["output_tokens_per_s"].get<double>(),
                (long long)j["output_tokens"], (long long)j["prompt_tokens"], (long long)j["cached_tokens"]);
  out += line;
  for (const char* key : {"ttft_ms", "itl_ms", "e2e_ms"}) {
    const auto& s = j[key];
    std::snprintf(line, sizeof line, "%-7s mean %8.1f  P50 %8.1f  P90 %8.1f  P99 %8.1f  (n=%lld)\n", key,
                  s["mean"].get<double>(), s["p50"].get<double>(), s["p90"].get<double>(), s["p99"].get<double>(),
                  (long long)s["count"]);
    out += line;
  }
  if (j.contains("ttft_by_turn_ms"))
    for (const auto& t : j["ttft_by_turn_ms"]) {
      std::snprintf(line, sizeof line, "turn %lld TTFT P50 %.1f ms, mean %.1f ms\n", (long long)t["turn"],
                    t["p50"].get<double>(), t["mean"].get<double>());
      out += line;
    }
  if (j.contains("idle_connections")) {
    const auto& i = j["idle_connections"];
    std::snprintf(line, sizeof line, "idle connections: %lld requested, %lld opened in %.2f s, %lld still open at the end\n",
                  (long long)i["requested"], (long long)i["opened"], i["open_s"].get<double>(),
                  (long long)i["open_at_end"]);
    out += line;
  }
  const auto& e = j["errors"];
  if (e["total"].get<int64_t>() > 0) out += "errors: " + e["by_kind"].dump() + " by status " + e["by_status"].dump() +
                                            "; e.g. " + e["examples"][0].get<std::string>() + "\n";
  return out;
}

}  // namespace parley::loadtest
