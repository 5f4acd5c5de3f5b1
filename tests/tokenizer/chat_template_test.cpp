// Chat template families: detection and their documented prompt formats.
#include <gtest/gtest.h>

#include "gguf/gguf.h"
#include "test_data.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace parley {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"user", "Hi!"}, {"assistant", "Hello. How can I help?"}, {"user", "Tell me a joke."}};
const std::vector<ChatMessage> kWithSystem = {{"system", "Be brief."}, {"user", "Hi!"}};

struct FamilyCase {
  const char* name;
  const char* template_snippet;
  ChatFamily family;
  const char* conversation;  // kConversation with a generation prompt
  const char* with_system;   // kWithSystem with a generation prompt
};

const FamilyCase kCases[] = {
    {"chatml", "{{'<|im_start|>' + message['role'] + '\\n'}}", ChatFamily::ChatMl,
     "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\nHello. How can I help?<|im_end|>\n"
     "<|im_start|>user\nTell me a joke.<|im_end|>\n<|im_start|>assistant\n",
     "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n"},
    {"llama3", "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}", ChatFamily::Llama3,
     "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\nHello. How can I help?<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nTell me a joke.<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n",
     "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"llama2", "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }} <<SYS>>", ChatFamily::Llama2,
     "[INST] Hi! [/INST] Hello. How can I help? </s><s>[INST] Tell me a joke. [/INST]",
     "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi! [/INST]"},
    {"mistral", "{{ '[INST] ' + message['content'] + ' [/INST]' }}", ChatFamily::Mistral,
     "[INST] Hi! [/INST]Hello. How can I help?</s>[INST] Tell me a joke. [/INST]",
     "[INST] Be brief.\n\nHi! [/INST]"},
    {"zephyr", "{{ '<|user|>\\n' + message['content'] + eos_token }}", ChatFamily::Zephyr,
     "<|user|>\nHi!</s>\n<|assistant|>\nHello. How can I help?</s>\n<|user|>\nTell me a joke.</s>\n<|assistant|>\n",
     "<|system|>\nBe brief.</s>\n<|user|>\nHi!</s>\n<|assistant|>\n"},
    {"phi3", "{{'<|user|>' + '\\n' + message['content'] + '<|end|>'}}", ChatFamily::Phi3,
     "<|user|>\nHi!<|end|>\n<|assistant|>\nHello. How can I help?<|end|>\n<|user|>\nTell me a joke.<|end|>\n"
     "<|assistant|>\n",
     "<|system|>\nBe brief.<|end|>\n<|user|>\nHi!<|end|>\n<|assistant|>\n"},
    {"gemma", "{{ '<start_of_turn>' + role + '\\n' }}", ChatFamily::Gemma,
     "<start_of_turn>user\nHi!<end_of_turn>\n<start_of_turn>model\nHello. How can I help?<end_of_turn>\n"
     "<start_of_turn>user\nTell me a joke.<end_of_turn>\n<start_of_turn>model\n",
     "<start_of_turn>user\nBe brief.\n\nHi!<end_of_turn>\n<start_of_turn>model\n"},
    {"plain", "", ChatFamily::Plain,
     "User: Hi!\nAssistant: Hello. How can I help?\nUser: Tell me a joke.\nAssistant:",
     "System: Be brief.\nUser: Hi!\nAssistant:"},
};

class ChatFamilies : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(ChatFamilies, DetectsAndRenders) {
  const FamilyCase& c = GetParam();
  EXPECT_EQ(detect_chat_family(c.template_snippet), c.family);
  Vocab v;
  v.chat_template = c.template_snippet;
  EXPECT_EQ(render_chat(v, kConversation, true), c.conversation);
  EXPECT_EQ(render_chat(v, kWithSystem, true), c.with_system);
}

INSTANTIATE_TEST_SUITE_P(Templates, ChatFamilies, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ChatTemplate, GenerationPromptOnlyWhenAsked) {
  EXPECT_EQ(render_chat(ChatFamily::ChatMl, {{"user", "Hi"}}, false), "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(render_chat(ChatFamily::Plain, {{"user", "Hi"}}, false), "User: Hi\n");
}

TEST(ChatTemplate, UsesTheVocabularysEosText) {
  Vocab v;
  v.chat_template = "<|user|>";
  v.tokens = {"<unk>", "<bos>", "<eos>"};
  v.bos = 1, v.eos = 2;
  EXPECT_EQ(render_chat(v, {{"user", "Hi"}}, false), "<|user|>\nHi<eos>\n");
}

TEST(ChatTemplate, Phi3VocabularyEndToEnd) {
  const std::string path = test::shared_path("tokenizers/ggml-vocab-phi-3.gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok(load_vocab(*gguf::File::open(path)));
  ASSERT_EQ(detect_chat_family(tok.vocab().chat_template), ChatFamily::Phi3);
  const std::vector<int32_t> ids = tok.encode(render_chat(tok.vocab(), kConversation, true), true, true);
  EXPECT_EQ(ids.front(), 1);                                    // BOS
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 32010), 2);      // <|user|>
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 32001), 2);      // <|assistant|>
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 32007), 3);      // <|end|>
}

}  // namespace
}  // namespace parley
