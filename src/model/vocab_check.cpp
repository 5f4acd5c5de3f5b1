#include "model/vocab_check.h"

#include <string>

#include "util/error.h"

namespace parley {

void check_same_vocabulary(const Model& main, const Model& other, std::string_view what) {
  const std::string flag(what);
  const int32_t n = main.config().vocab_size;
  if (other.config().vocab_size != n)
    throw Error(flag + ": its vocabulary has " + std::to_string(other.config().vocab_size) + " tokens, the main model's " +
                std::to_string(n) + "; they must share one vocabulary");
  // A sample spread over the vocabulary: same size but another vocabulary differs here.
  for (int32_t i = 0; i < 32 && i < n; ++i) {
    const int32_t id = int32_t(int64_t(n - 1) * i / 31);
    if (main.tokenizer().token_to_piece(id, true) != other.tokenizer().token_to_piece(id, true))
      throw Error(flag + ": token " + std::to_string(id) + " differs from the main model's; they must share one vocabulary");
  }
}

}  // namespace parley
