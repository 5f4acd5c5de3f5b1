#include <gtest/gtest.h>

#include "model/model.h"
#include "serve/transport/api_error.h"
#include "serve/api/prompt_input.h"
#include "serve/sessions/session_chat.h"
#include "serve/sessions/session_turn.h"

namespace parley::serve {
namespace {

state::Session session_with_turns(int turns, int32_t max_turns) {
  state::Session s;
  s.id = state::new_session_id();
  s.system_prompt = "You tell short stories.";
  s.max_turns = max_turns;
  s.ttl_s = 60;
  for (int i = 0; i < turns; ++i)
    s.turns.push_back({"Tell me story " + std::to_string(i), "Once upon a time there was a cat number " + std::to_string(i), 0});
  return s;
}

std::vector<chat::ChatMessage> expected(const state::Session& s, size_t first, const std::string& user) {
  std::vector<chat::ChatMessage> m = {{"system", s.system_prompt}};
  for (size_t i = first; i < s.turns.size(); ++i) {
    m.push_back({"user", s.turns[i].user});
    m.push_back({"assistant", s.turns[i].assistant});
  }
  m.push_back({"user", user});
  return m;
}

class SessionPrompt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = Model::load(std::string(PARLEY_SOURCE_DIR) + "/models/stories260K.gguf"); }
  static void TearDownTestSuite() { model_.reset(); }
  const Tokenizer& tok() { return model_->tokenizer(); }
  static std::unique_ptr<Model> model_;
};
std::unique_ptr<Model> SessionPrompt::model_;

TEST_F(SessionPrompt, HistoryInOrderWithinMaxTurns) {
  const state::Session s = session_with_turns(4, 3);
  const auto tokens = session_prompt(tok(), s, "And now?", 100000, 0);
  EXPECT_EQ(tokens, chat_tokens(tok(), expected(s, 1, "And now?")));  // the oldest turn is beyond max_turns
}

TEST_F(SessionPrompt, OldestTurnsGoFirstToFitTheContextSystemPromptStays) {
  const state::Session s = session_with_turns(5, 5);
  const size_t full = session_prompt(tok(), s, "Next", 100000, 0).size();
  const size_t without_two = chat_tokens(tok(), expected(s, 2, "Next")).size();
  const int32_t reserve = 10;
  const auto tokens = session_prompt(tok(), s, "Next", int32_t(without_two) + reserve, reserve);
  EXPECT_LT(without_two, full);
  EXPECT_EQ(tokens, chat_tokens(tok(), expected(s, 2, "Next")));
  // A context too small for any turn keeps the system prompt and the new message.
  EXPECT_EQ(session_prompt(tok(), s, "Next", 1, 0), chat_tokens(tok(), expected(s, 5, "Next")));
}

TEST(SessionTurn, OneTurnAtATimeAndReleasedWhenDropped) {
  auto store = state::make_local_session_store("");
  TurnLeases leases(*store);
  state::Session s = session_with_turns(0, 5);
  store->put(s);
  {
    auto turn = SessionTurn::begin(leases, s.id, "");
    EXPECT_EQ(turn->session().system_prompt, s.system_prompt);
    try {
      SessionTurn::begin(leases, s.id, "");
      FAIL() << "a second turn got the lock";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 409);
      EXPECT_EQ(e.to_json()["error"]["code"], "session_busy");
    }
  }  // dropped without storing: a cancelled turn
  auto turn = SessionTurn::begin(leases, s.id, "");
  EXPECT_TRUE(turn->store("hi", "hello"));
  EXPECT_EQ(store->get(s.id)->turns.size(), 1u);
  EXPECT_NO_THROW(SessionTurn::begin(leases, s.id, ""));  // store() released the lock
}

TEST(SessionTurn, UnknownOrOtherKeysSessionIsNotFound) {
  auto store = state::make_local_session_store("");
  TurnLeases leases(*store);
  state::Session s = session_with_turns(0, 5);
  s.api_key = "alice";
  store->put(s);
  for (const auto& [id, key] : {std::pair{s.id, std::string("bob")}, std::pair{state::new_session_id(), std::string("alice")}}) {
    try {
      SessionTurn::begin(leases, id, key);
      FAIL() << "no 404";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 404);
    }
  }
  EXPECT_NO_THROW(SessionTurn::begin(leases, s.id, "alice"));  // the failed attempts left no lock behind
}

}  // namespace
}  // namespace parley::serve
