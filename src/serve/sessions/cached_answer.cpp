#include "serve/sessions/cached_answer.h"

#include <boost/beast/core/detail/sha1.hpp>

#include "serve/transport/http_message.h"

namespace parley::serve {
namespace {

using nlohmann::json;

json event_json(const Event& e) {
  if (e.final) {
    json end = {{"f", int(e.finish)}, {"p", e.prompt_tokens}, {"c", e.completion_tokens}, {"h", e.cached_tokens}};
    if (!e.stop_string.empty()) end["s"] = e.stop_string;
    return end;
  }
  json top = json::array();
  for (const TokenLogprob& t : e.top_logprobs) top.push_back({t.token, t.logprob});
  return {{"t", e.token}, {"x", e.text}, {"l", e.logprob}, {"k", std::move(top)}};
}

Event event_from_json(const json& j) {
  Event e;
  if (j.contains("f")) {
    e.final = true;
    e.finish = FinishReason(j.at("f").get<int>());
    e.prompt_tokens = j.at("p").get<int32_t>();
    e.completion_tokens = j.at("c").get<int32_t>();
    e.cached_tokens = j.at("h").get<int32_t>();
    e.stop_string = j.value("s", "");
    return e;
  }
  e.token = j.at("t").get<int32_t>();
  e.text = j.at("x").get<std::string>();
  e.logprob = j.at("l").get<float>();
  for (const json& t : j.at("k")) e.top_logprobs.push_back({t.at(0).get<int32_t>(), t.at(1).get<float>()});
  return e;
}

// Feeds values into the hash with their lengths, so that no two different
// field sequences hash the same bytes.
class KeyHasher {
 public:
  KeyHasher() { boost::beast::detail::init(ctx_); }
  void add(const std::string& s) {
    add_raw(uint64_t(s.size()));
    boost::beast::detail::update(ctx_, s.data(), s.size());
  }
  template <typename T>
  void add_raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    boost::beast::detail::update(ctx_, &v, sizeof v);
  }
  std::string hex() {
    unsigned char digest[20];
    boost::beast::detail::finish(ctx_, digest);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : digest) out += {kHex[c >> 4], kHex[c & 15]};
    return out;
  }

 private:
  boost::beast::detail::sha1_context ctx_;
};

void add_request(KeyHasher& h, const Request& r, bool seeded) {
  h.add_raw(uint64_t(r.prompt.size()));
  for (int32_t t : r.prompt) h.add_raw(t);
  const SamplingParams& s = r.sampling;
  h.add_raw(s.temperature), h.add_raw(s.top_k), h.add_raw(s.top_p), h.add_raw(s.min_p);
  h.add_raw(s.repetition_penalty), h.add_raw(s.frequency_penalty), h.add_raw(s.presence_penalty);
  h.add_raw(s.penalty_last_n);
  h.add_raw(uint64_t(s.logit_bias.size()));
  for (const auto& [token, bias] : s.logit_bias) h.add_raw(token), h.add_raw(bias);
  h.add_raw(seeded ? s.seed : uint64_t(0));
  h.add_raw(r.max_tokens);
  h.add_raw(uint64_t(r.stop_ids.size()));
  for (int32_t t : r.stop_ids) h.add_raw(t);
  h.add_raw(uint64_t(r.stop_strings.size()));
  for (const std::string& s : r.stop_strings) h.add(s);
  h.add_raw(r.ignore_eos);
  h.add_raw(r.top_logprobs);
  h.add_raw(r.kv_retention ? int(r.kv_retention->policy) : -1);
  if (r.kv_retention) h.add_raw(r.kv_retention->window), h.add_raw(r.kv_retention->sink), h.add_raw(r.kv_retention->heavy);
  // The adapter by its file (ids are per process; the cache may be shared by replicas).
  h.add(r.lora ? r.lora->path() : "");
  h.add_raw(r.lora ? r.lora_scale : 0.0f);
}

}  // namespace

std::string encode_answer(const RecordedAnswer& answer) {
  json choices = json::array();
  for (const auto& events : answer.choices) {
    json list = json::array();
    for (const Event& e : events) list.push_back(event_json(e));
    choices.push_back(std::move(list));
  }
  return dump_json({{"v", 1}, {"choices", std::move(choices)}});
}

std::optional<RecordedAnswer> decode_answer(const std::string& bytes) {
  const json j = json::parse(bytes, nullptr, false);
  if (!j.is_object() || j.value("v", 0) != 1 || !j.contains("choices")) return std::nullopt;
  try {
    RecordedAnswer answer;
    for (const json& list : j.at("choices")) {
      std::vector<Event> events;
      for (const json& e : list) events.push_back(event_from_json(e));
      if (events.empty() || !events.back().final) return std::nullopt;
      answer.choices.push_back(std::move(events));
    }
    if (answer.choices.empty()) return std::nullopt;
    return answer;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

bool is_cacheable(const GenerationParams& params) {
  return params.sampling.temperature == 0.0f || params.seeded;
}

std::string response_cache_key(const CacheScope& scope, const std::vector<Request>& requests, bool seeded) {
  KeyHasher h;
  h.add("parley-response/4");
  h.add(scope.model_id);
  h.add(scope.fingerprint);
  h.add(scope.tenant);
  h.add(scope.output);
  h.add_raw(uint64_t(requests.size()));
  for (const Request& r : requests) add_request(h, r, seeded);
  return h.hex();
}

RecordedAnswer fixed_answer(const std::string& text, int32_t prompt_tokens, int32_t completion_tokens) {
  Event piece;
  piece.text = text;
  Event end;
  end.final = true;
  end.finish = FinishReason::Stop;
  end.prompt_tokens = prompt_tokens;
  end.completion_tokens = completion_tokens;
  return {{{piece, end}}};
}

}  // namespace parley::serve
