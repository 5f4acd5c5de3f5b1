// Static answers: normalisation, JSON and YAML files, reload keeping the old
// table when the new file is bad.
#include <gtest/gtest.h>

#include <fstream>

#include "state/static_answers.h"
#include "temp_file.h"
#include "util/error.h"

namespace parley::state {
namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(NormaliseQuestion, FoldsWidthCasePunctuationAndSpace) {
  EXPECT_EQ(normalise_question("Hello"), "hello");
  EXPECT_EQ(normalise_question("ＨＥＬＬＯ"), "hello");
  EXPECT_EQ(normalise_question("ｗｈａｔ　ｉｓ　Ｐａｒｌｅｙ？"), "what is parley");
  EXPECT_EQ(normalise_question("  What   is\tParley?!\n"), "what is parley");
  EXPECT_EQ(normalise_question("What's \"Parley\" — really…"), "whats parley really");
  EXPECT_EQ(normalise_question("¿Qué es ÉTÉ?"), "qué es été");
  EXPECT_EQ(normalise_question("ΣΟΦΊΑ"), "σοφία");
  EXPECT_EQ(normalise_question("ПРИВЕТ, Ёж"), "привет ёж");
  EXPECT_EQ(normalise_question("ŁÓDŹ"), "łódź");
  EXPECT_EQ(normalise_question("「こんにちは」。"), "こんにちは");
  EXPECT_EQ(normalise_question("a\xff\xfe b"), "a b");  // invalid UTF-8 dropped
  EXPECT_EQ(normalise_question(" ?! "), "");
}

TEST(StaticAnswers, LoadsJsonAndYamlAndMatchesNormalised) {
  test::TempFile json(".json"), yaml(".yaml");
  write(json.path(), R"({"answers": [
      {"questions": ["What is Parley?", "Who are you?"], "answer": "An inference server."},
      {"questions": ["Hello"], "answer": "Hi!"}]})");
  write(yaml.path(), "answers:\n  - questions: [\"What is Parley?\"]\n    answer: \"From YAML: 42\"\n"
                     "  - questions:\n      - Opening hours\n    answer: |\n      Always open.\n");
  StaticAnswers from_json(json.path());
  EXPECT_EQ(from_json.size(), 3u);
  EXPECT_EQ(from_json.match("what is parley"), "An inference server.");
  EXPECT_EQ(from_json.match("  WHO   are you ??"), "An inference server.");
  EXPECT_EQ(from_json.match("ＨＥＬＬＯ!!"), "Hi!");
  EXPECT_FALSE(from_json.match("What is Parley for?"));
  EXPECT_EQ(from_json.path(), json.path());

  StaticAnswers from_yaml(yaml.path());
  EXPECT_EQ(from_yaml.size(), 2u);
  EXPECT_EQ(from_yaml.match("What is parley"), "From YAML: 42");
  EXPECT_EQ(from_yaml.match("opening hours."), "Always open.\n");
}

TEST(StaticAnswers, ReloadKeepsTheOldTableOnABadFile) {
  test::TempFile file(".json");
  write(file.path(), R"({"answers": [{"questions": ["ping"], "answer": "pong"}]})");
  StaticAnswers answers(file.path());
  for (const char* bad : {"{not json", R"({"answers": {}})", R"({"answers": [{"questions": ["q"]}]})",
                          R"({"answers": [{"questions": [], "answer": "a"}]})",
                          R"({"answers": [{"questions": ["?!"], "answer": "a"}]})"}) {
    write(file.path(), bad);
    EXPECT_THROW(answers.reload(), Error) << bad;
    EXPECT_EQ(answers.match("PING"), "pong") << bad;
  }
  write(file.path(), R"({"answers": [{"questions": ["ping"], "answer": "pong 2"}, {"questions": ["x"], "answer": "y"}]})");
  answers.reload();
  EXPECT_EQ(answers.match("ping"), "pong 2");
  EXPECT_EQ(answers.size(), 2u);

  test::TempFile yaml(".yml");
  write(yaml.path(), "answers: [unclosed");
  EXPECT_THROW(StaticAnswers{yaml.path()}, Error);
  EXPECT_THROW(StaticAnswers{"/nonexistent/answers.json"}, Error);
}

}  // namespace
}  // namespace parley::state
