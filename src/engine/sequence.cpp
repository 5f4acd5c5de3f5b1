#include "engine/sequence.h"

#include "engine/draft_model_drafter.h"

#include <algorithm>
#include <utility>

namespace parley {

Sequence::Sequence(RequestId id_, Request request, EventSink sink_, uint64_t arrival_, const Tokenizer& tok,
                   int32_t vocab_size, const KvRetention& retention, int32_t max_new)
    : id(id_),
      req(std::move(request)),
      sink(std::move(sink_)),
      arrival(arrival_),
      submitted(Clock::now()),
      prompt_len(int32_t(req.prompt.size())),
      kept(retention),
      sampler(req.sampling, vocab_size),
      detok(tok, false, req.prompt.empty() ? -1 : req.prompt.back()),
      stops(req.stop_strings) {
  // Room for every token the request may produce: no reallocation per token.
  tokens.reserve(req.prompt.size() + size_t(std::clamp(req.max_tokens, 0, max_new)) + 1);
  tokens.assign(req.prompt.begin(), req.prompt.end());
  for (int32_t t : tokens) sampler.accept(t);
}

Sequence::~Sequence() = default;

}  // namespace parley
