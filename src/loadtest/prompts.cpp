#include "loadtest/prompts.h"

#include <array>
#include <fstream>

#include "util/error.h"

namespace parley::loadtest {
namespace {

// Each is a single piece ("▁word") in the Llama SentencePiece vocabulary.
constexpr std::array<const char*, 96> kWords = {
    "the",   "and",   "was",    "he",     "she",   "they",  "day",   "time",  "little", "big",   "dog",   "cat",
    "home",  "tree",  "sun",    "run",    "play",  "happy", "friend", "water", "ball",  "park",  "girl",  "boy",
    "mom",   "dad",   "good",   "new",    "old",   "red",   "blue",  "green", "house", "car",   "book",  "food",
    "school", "work", "city",   "world",  "light", "night", "morning", "story", "game", "music", "room", "door",
    "road",  "river", "sea",    "sky",    "bird",  "fish",  "horse", "apple", "bread", "milk",  "hand",  "head",
    "eye",   "heart", "love",   "smile",  "walk",  "jump",  "sing",  "read",  "write", "find",  "help",  "look",
    "make",  "take",  "give",   "come",   "go",    "see",   "know",  "think", "want",  "like",  "call",  "open",
    "close", "start", "stop",   "turn",   "move",  "live",  "stay",  "fall",  "grow",  "warm",  "cold",  "fast"};

int32_t parse_int(const std::string& s, const std::string& flag) {
  size_t used = 0;
  int v = -1;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
  }
  if (used != s.size() || v < 0) throw Error(flag + ": expected N or A:B with non-negative integers, got '" + s + "'");
  return v;
}

nlohmann::json user_message(std::string text) { return {{"role", "user"}, {"content", std::move(text)}}; }

nlohmann::json file_entry(const std::string& line, const std::string& path) {
  if (line.front() != '{') return nlohmann::json::array({user_message(line)});
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_object() && j.contains("messages") && j["messages"].is_array() && !j["messages"].empty())
    return j["messages"];
  if (j.is_object() && j.contains("prompt") && j["prompt"].is_string())
    return nlohmann::json::array({user_message(j["prompt"].get<std::string>())});
  throw Error(path + ": a JSON line needs a \"prompt\" string or a \"messages\" array: " + line.substr(0, 80));
}

}  // namespace

LengthRange LengthRange::parse(const std::string& text, const std::string& flag) {
  const size_t colon = text.find(':');
  LengthRange r;
  r.lo = parse_int(text.substr(0, colon), flag);
  r.hi = colon == std::string::npos ? r.lo : parse_int(text.substr(colon + 1), flag);
  if (r.hi < r.lo) throw Error(flag + ": the range " + text + " is empty");
  return r;
}

int32_t LengthRange::sample(std::mt19937_64& rng) const {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
}

std::string random_words(int32_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> pick(0, kWords.size() - 1);
  std::string s;
  for (int32_t i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += kWords[pick(rng)];
  }
  return s;
}

std::vector<nlohmann::json> load_prompts_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read the prompts file " + path);
  std::vector<nlohmann::json> prompts;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) prompts.push_back(file_entry(line, path));
  }
  if (prompts.empty()) throw Error(path + ": no prompts");
  return prompts;
}

std::string messages_text(const nlohmann::json& messages) {
  std::string s;
  for (const auto& m : messages) {
    if (!s.empty()) s += '\n';
    if (m.contains("content") && m["content"].is_string()) s += m["content"].get<std::string>();
  }
  return s;
}

PromptSource::PromptSource(LengthRange tokens, int32_t shared_prefix_tokens, uint64_t seed,
                           std::vector<nlohmann::json> file)
    : tokens_(tokens), file_(std::move(file)) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);  // the prefix differs from every prompt body
  prefix_ = random_words(shared_prefix_tokens, rng);
}

nlohmann::json PromptSource::opening(uint64_t index, std::mt19937_64& rng) const {
  nlohmann::json messages =
      file_.empty() ? nlohmann::json::array({user_message(random_words(tokens_.sample(rng), rng))})
                    : file_[index % file_.size()];
  if (!prefix_.empty() && messages[0]["content"].is_string()) {
    auto& first = messages[0]["content"];
    first = prefix_ + (first.get<std::string>().empty() ? "" : " ") + first.get<std::string>();
  }
  return messages;
}

std::string PromptSource::follow_up(uint64_t index, std::mt19937_64& rng) const {
  if (file_.empty()) return random_words(tokens_.sample(rng), rng);
  return messages_text(file_[index % file_.size()]);
}

}  // namespace parley::loadtest
