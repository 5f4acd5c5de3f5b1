#pragma once
// Whether two models share one vocabulary, as a second model beside the main
// one needs (`--fallback-model` answers in its place, `--draft-model` drafts
// tokens the main model verifies).
#include <string_view>

#include "model/model.h"

namespace parley {

// Throws parley::Error, its message starting with `what` (the flag that named
// `other`), unless `other` has `main`'s vocabulary: the same size and the
// same texts for a sample of 32 token ids spread over it.
void check_same_vocabulary(const Model& main, const Model& other, std::string_view what);

}  // namespace parley
