#pragma once
// Canonical questions and their answers from a JSON or YAML file, matched
// after normalisation. File format (JSON; the YAML form has the same shape):
//   {"answers": [{"questions": ["What is Parley?", ...], "answer": "..."}, ...]}
// Thread-safe; reload() swaps the table atomically (a bad file keeps the old one).
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace parley::state {

// Case-folded (ASCII and the common Latin/Greek/Cyrillic ranges), full-width
// forms to ASCII (NFKC width), punctuation dropped, whitespace runs collapsed
// to one space, trimmed.
std::string normalise_question(const std::string& text);

class StaticAnswers {
 public:
  explicit StaticAnswers(std::string path);  // loads now; throws parley::Error on a bad file
  std::optional<std::string> match(const std::string& question) const;
  void reload();  // throws parley::Error and keeps the old table on a bad file
  size_t size() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::unordered_map<std::string, std::string>> table_;
};

}  // namespace parley::state
