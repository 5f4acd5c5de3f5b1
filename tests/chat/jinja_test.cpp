// The Jinja interpreter beyond Jinja2 conformance: error positions, the marks
// that follow message text through string operations, the limits that stop
// runaway templates, and concurrent rendering.
#include "chat/jinja.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "../tokenizer/test_data.h"
#include "util/error.h"

namespace parley::chat {
namespace {

using jinja::Text;

Text render(std::string_view source, const jinja::Dict& vars = {}) { return jinja::Template(source).render(vars); }

std::string error_of(std::string_view source) {
  try {
    render(source);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

using test::contains;

TEST(Jinja, SyntaxErrorsNameLineAndColumn) {
  EXPECT_TRUE(contains(error_of("{{ 1 + }}"), "line 1, column 8")) << error_of("{{ 1 + }}");
  const std::string tag = error_of("a\n{% if x %}\n  {% endfor %}");
  EXPECT_TRUE(contains(tag, "line 3, column 6") && contains(tag, "'endfor'")) << tag;
  EXPECT_TRUE(contains(error_of("x\n{{ 'abc }}"), "line 2, column 4: unterminated string"))
      << error_of("x\n{{ 'abc }}");
  EXPECT_TRUE(contains(error_of("{# never closed"), "missing end of comment")) << error_of("{# never closed");
}

TEST(Jinja, RuntimeErrorsNameTheFailingExpression) {
  const std::string undefined = error_of("ok\n{{ x.y }}");
  EXPECT_TRUE(contains(undefined, "line 2, column 5: 'x' is undefined")) << undefined;
  const std::string raised = error_of("{% if true %}{{ raise_exception('Only user roles') }}{% endif %}");
  EXPECT_TRUE(contains(raised, "column 17: Only user roles")) << raised;
}

TEST(Jinja, MessageTextStaysMarked) {
  jinja::Dict vars;
  vars.set("user", jinja::Value::string(Text("<u>", true)));
  const Text out = render(
      "[{{ user }}|{{ user|upper }}|{{ (user ~ '!')[1:] }}|{{ user|tojson }}|"
      "{{ user.replace('u', 'v') }}|{{ user.split('u')|join('u') }}]",
      vars);
  EXPECT_EQ(out.str(), "[<u>|<U>|u>!|\"<u>\"|<v>|<u>]");
  const std::vector<std::pair<size_t, size_t>> expected = {{1, 4},   {5, 8},   {9, 11},  {13, 18},
                                                           {19, 20}, {21, 22}, {23, 24}, {25, 26}};
  std::vector<std::pair<size_t, size_t>> got;
  for (const Text::Range& r : out.user_ranges()) got.emplace_back(r.begin, r.end);
  EXPECT_EQ(got, expected);  // the literal 'v', '!' and the join's 'u' are template text
}

TEST(Jinja, LimitsStopRunawayTemplates) {
  EXPECT_TRUE(contains(error_of("{{ 'x' * 100000000 }}"), "too large"));
  EXPECT_TRUE(contains(error_of("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"), "nested too deeply"));
  EXPECT_TRUE(contains(error_of("{{ range(1000000)|length }}"), "range too big"));
  const std::string deep = "{{ " + std::string(1000, '(') + "1" + std::string(1000, ')') + " }}";
  EXPECT_TRUE(contains(error_of(deep), "nested too deeply"));
  // Values cannot grow deep or circular (printing them would recurse without end).
  EXPECT_TRUE(contains(error_of("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}"
                                "{% endfor %}{{ ns.x }}"),
                       "nested more than 256 deep"));
  EXPECT_TRUE(
      contains(error_of("{% set ns = namespace() %}{% set ns.me = [ns] %}{{ ns }}"), "cannot hold a namespace"));
  const jinja::Template endless("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
  try {
    endless.render({}, {.max_steps = 20000});
    ADD_FAILURE() << "expected the step budget to run out";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "20000 evaluation steps")) << e.what();
  }
}

TEST(Jinja, StrftimeNowFormatsTheLocalDate) {
  const std::string year = render("{{ strftime_now('%Y') }}").str();
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
}

TEST(Jinja, RendersConcurrently) {
  const jinja::Template t("{% for i in range(n) %}{{ i }},{% endfor %}");
  jinja::Dict vars;
  vars.set("n", jinja::Value::integer(100));
  const std::string expected = t.render(vars).str();
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (size_t k = 0; k < ok.size(); ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 20; ++i) ok[k] += t.render(vars).str() == expected;
    });
  }
  for (std::thread& th : threads) th.join();
  for (int n : ok) EXPECT_EQ(n, 20);
}

}  // namespace
}  // namespace parley::chat
