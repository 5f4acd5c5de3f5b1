#include "chat/jinja_parser.h"

#include <algorithm>
#include <initializer_list>

namespace parley::chat::jinja {
namespace {

constexpr int kMaxParseDepth = 200;  // bounds recursion on hostile templates

using Kind = Token::Kind;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  Body parse_template() {
    std::string end;
    return parse_body({}, end);
  }

 private:
  // Counts recursion into nested statements and expressions.
  class Nested {
   public:
    explicit Nested(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxParseDepth) throw SyntaxError{p_.peek().pos, "template nested too deeply"};
    }
    ~Nested() { --p_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& p_;
  };

  const Token& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (i_ + 1 < t_.size()) ++i_;  // the End token is never passed
    return t;
  }
  bool is_op(std::string_view op, size_t k = 0) const { return peek(k).kind == Kind::Op && peek(k).value == op; }
  bool is_name(std::string_view name, size_t k = 0) const {
    return peek(k).kind == Kind::Name && peek(k).value == name;
  }
  bool accept_op(std::string_view op) { return is_op(op) && (next(), true); }
  bool accept_name(std::string_view name) { return is_name(name) && (next(), true); }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Kind::End:
        return "end of template";
      case Kind::Text:
        return "template text";
      case Kind::VarEnd:
        return "'}}'";
      case Kind::BlockEnd:
        return "'%}'";
      case Kind::String:
        return "a string";
      default:
        return "'" + t.value + "'";
    }
  }
  [[noreturn]] void error(const Token& t, const std::string& expected) const {
    throw SyntaxError{t.pos, expected + ", found " + describe(t)};
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) error(peek(), "expected '" + std::string(op) + "'");
  }
  std::string expect_name() {
    if (peek().kind != Kind::Name) error(peek(), "expected a name");
    return next().value;
  }
  void expect_block_end() {
    if (peek().kind != Kind::BlockEnd) error(peek(), "expected '%}'");
    next();
  }

  // Statements up to one of the block tags `ends`, whose name is stored in `end`.
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& end) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == Kind::Text) {
        auto s = std::make_unique<TextStmt>(t.pos);
        s->text = next().value;
        body.push_back(std::move(s));
      } else if (t.kind == Kind::VarBegin) {
        next();
        auto s = std::make_unique<OutputStmt>(t.pos);
        s->expr = parse_expression();
        if (peek().kind != Kind::VarEnd) error(peek(), "expected '}}'");
        next();
        body.push_back(std::move(s));
      } else if (t.kind == Kind::BlockBegin) {
        const Token& name = peek(1);
        if (name.kind == Kind::Name && std::find(ends.begin(), ends.end(), name.value) != ends.end()) {
          next();
          end = next().value;
          return body;
        }
        body.push_back(parse_statement());
      } else if (t.kind == Kind::End && ends.size() == 0) {
        return body;
      } else {
        std::string expected;
        for (std::string_view e : ends) expected += (expected.empty() ? "expected '" : " or '") + std::string(e) + "'";
        error(t, ends.size() ? expected : "unexpected token");
      }
    }
  }

  StmtPtr parse_statement() {
    Nested nested(*this);
    next();  // {%
    const Token& tag = peek();
    const std::string name = expect_name();
    if (name == "if") return parse_if(tag.pos);
    if (name == "for") return parse_for(tag.pos);
    if (name == "set") return parse_set(tag.pos);
    if (name == "macro") return parse_macro(tag.pos);
    if (name == "generation") {  // transformers' assistant-mask tag: renders its body
      auto s = std::make_unique<BlockStmt>(tag.pos);
      expect_block_end();
      std::string end;
      s->body = parse_body({"endgeneration"}, end);
      expect_block_end();
      return s;
    }
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) throw SyntaxError{tag.pos, "'" + name + "' outside of a for loop"};
      auto s = std::make_unique<LoopControlStmt>(tag.pos);
      s->flow = name == "break" ? Flow::Break : Flow::Continue;
      expect_block_end();
      return s;
    }
    throw SyntaxError{tag.pos, "unknown or unexpected tag '" + name + "'"};
  }

  StmtPtr parse_if(size_t pos) {
    auto s = std::make_unique<IfStmt>(pos);
    ExprPtr condition = parse_expression();
    expect_block_end();
    while (true) {
      std::string end;
      Body body = parse_body({"elif", "else", "endif"}, end);
      s->branches.emplace_back(std::move(condition), std::move(body));
      if (end == "elif") {
        condition = parse_expression();
        expect_block_end();
        continue;
      }
      if (end == "else") {
        expect_block_end();
        s->otherwise = parse_body({"endif"}, end);
      }
      expect_block_end();
      return s;
    }
  }

  StmtPtr parse_for(size_t pos) {
    auto s = std::make_unique<ForStmt>(pos);
    do {
      s->targets.push_back(expect_name());
    } while (accept_op(","));
    if (!accept_name("in")) error(peek(), "expected 'in'");
    s->iterable = parse_expression(false);  // a following "if" filters the loop
    if (accept_name("if")) s->filter = parse_expression();
    if (is_name("recursive")) throw SyntaxError{peek().pos, "recursive loops are not supported"};
    expect_block_end();
    std::string end;
    ++loop_depth_;
    s->body = parse_body({"else", "endfor"}, end);
    --loop_depth_;
    if (end == "else") {
      expect_block_end();
      s->otherwise = parse_body({"endfor"}, end);
    }
    expect_block_end();
    return s;
  }

  StmtPtr parse_set(size_t pos) {
    std::vector<std::string> targets{expect_name()};
    std::string attribute;
    if (accept_op(".")) {
      attribute = expect_name();
    } else {
      while (accept_op(",")) targets.push_back(expect_name());
    }
    if (peek().kind == Kind::BlockEnd && targets.size() == 1 && attribute.empty()) {
      next();
      auto s = std::make_unique<SetBlockStmt>(pos);
      s->target = targets[0];
      std::string end;
      s->body = parse_body({"endset"}, end);
      expect_block_end();
      return s;
    }
    auto s = std::make_unique<SetStmt>(pos);
    s->targets = std::move(targets);
    s->attribute = std::move(attribute);
    expect_op("=");
    s->value = parse_expression();
    expect_block_end();
    return s;
  }

  StmtPtr parse_macro(size_t pos) {
    auto s = std::make_unique<MacroStmt>(pos);
    s->name = expect_name();
    expect_op("(");
    if (!accept_op(")")) {
      do {
        s->params.push_back(expect_name());
        s->defaults.push_back(accept_op("=") ? parse_expression() : nullptr);
      } while (accept_op(","));
      expect_op(")");
    }
    expect_block_end();
    const int outer_loops = loop_depth_;
    loop_depth_ = 0;  // break/continue cannot leave a macro
    std::string end;
    s->body = parse_body({"endmacro"}, end);
    loop_depth_ = outer_loops;
    expect_block_end();
    return s;
  }

  // Expressions, loosest binding first.
  ExprPtr parse_expression(bool with_conditional = true) {
    ExprPtr e = parse_or();
    while (with_conditional && is_name("if")) {
      auto c = std::make_unique<ConditionalExpr>(next().pos);
      c->then = std::move(e);
      c->condition = parse_or();
      if (accept_name("else")) c->otherwise = parse_expression();
      e = std::move(c);
    }
    return e;
  }

  template <typename Operand>
  ExprPtr parse_logical(std::string_view word, bool is_and, Operand operand) {
    ExprPtr e = (this->*operand)();
    while (is_name(word)) {
      auto l = std::make_unique<LogicalExpr>(next().pos);
      l->is_and = is_and;
      l->left = std::move(e);
      l->right = (this->*operand)();
      e = std::move(l);
    }
    return e;
  }
  ExprPtr parse_or() { return parse_logical("or", false, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_logical("and", true, &Parser::parse_not); }

  ExprPtr parse_not() {
    if (!is_name("not")) return parse_compare();
    auto u = std::make_unique<UnaryExpr>(next().pos);
    u->op = "not";
    u->operand = parse_not();
    return u;
  }

  ExprPtr parse_compare() {
    const size_t pos = peek().pos;
    ExprPtr first = parse_binary(0);
    std::vector<std::pair<std::string, ExprPtr>> rest;
    while (true) {
      std::string op;
      if (is_op("==") || is_op("!=") || is_op("<") || is_op("<=") || is_op(">") || is_op(">=")) {
        op = next().value;
      } else if (accept_name("in")) {
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      rest.emplace_back(op, parse_binary(0));
    }
    if (rest.empty()) return first;
    auto c = std::make_unique<CompareExpr>(pos);
    c->first = std::move(first);
    c->rest = std::move(rest);
    return c;
  }

  // Jinja's arithmetic levels: + -, then ~, then * / // %, then **.
  ExprPtr parse_binary(size_t level) {
    static const std::vector<std::vector<std::string_view>> kLevels = {
        {"+", "-"}, {"~"}, {"*", "/", "//", "%"}, {"**"}};
    if (level == kLevels.size()) return parse_unary(true);
    ExprPtr e = parse_binary(level + 1);
    while (peek().kind == Kind::Op &&
           std::find(kLevels[level].begin(), kLevels[level].end(), peek().value) != kLevels[level].end()) {
      auto b = std::make_unique<BinaryExpr>(peek().pos);
      b->op = next().value;
      b->left = std::move(e);
      b->right = parse_binary(level + 1);
      e = std::move(b);
    }
    return e;
  }

  ExprPtr parse_unary(bool with_filters) {
    Nested nested(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      auto u = std::make_unique<UnaryExpr>(peek().pos);
      u->op = next().value;
      u->operand = parse_unary(false);  // -x|f is (-x)|f
      e = std::move(u);
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    return with_filters ? parse_filters(std::move(e)) : std::move(e);
  }

  static ExprPtr literal(size_t pos, Value v) {
    auto l = std::make_unique<LiteralExpr>(pos);
    l->value = std::move(v);
    return l;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Kind::Name: {
        next();
        if (t.value == "true" || t.value == "True") return literal(t.pos, Value::boolean(true));
        if (t.value == "false" || t.value == "False") return literal(t.pos, Value::boolean(false));
        if (t.value == "none" || t.value == "None") return literal(t.pos, Value::none());
        auto n = std::make_unique<NameExpr>(t.pos);
        n->name = t.value;
        return n;
      }
      case Kind::String: {
        std::string s;
        while (peek().kind == Kind::String) s += next().value;  // "a" "b" is "ab"
        return literal(t.pos, Value::string(std::move(s)));
      }
      case Kind::Int:
        next();
        return literal(t.pos, Value::integer(t.int_value));
      case Kind::Float:
        next();
        return literal(t.pos, Value::number(t.float_value));
      default:
        break;
    }
    if (accept_op("(")) return parse_parenthesized(t.pos);
    if (accept_op("[")) {
      auto l = std::make_unique<ListExpr>(t.pos);
      parse_items("]", [&] { l->items.push_back(parse_expression()); });
      return l;
    }
    if (accept_op("{")) {
      auto d = std::make_unique<DictExpr>(t.pos);
      parse_items("}", [&] {
        ExprPtr key = parse_expression();
        expect_op(":");
        d->items.emplace_back(std::move(key), parse_expression());
      });
      return d;
    }
    error(t, "expected an expression");
  }

  // Comma-separated items up to `close`, a trailing comma allowed.
  template <typename ParseItem>
  void parse_items(std::string_view close, ParseItem parse_item) {
    for (bool first = true; !accept_op(close); first = false) {
      if (!first) {
        expect_op(",");
        if (accept_op(close)) break;
      }
      parse_item();
    }
  }

  // After "(": a parenthesized expression or a tuple (which becomes a list).
  ExprPtr parse_parenthesized(size_t pos) {
    auto tuple = std::make_unique<ListExpr>(pos);
    if (accept_op(")")) return tuple;
    ExprPtr e = parse_expression();
    if (accept_op(")")) return e;
    tuple->items.push_back(std::move(e));
    expect_op(",");
    parse_items(")", [&] { tuple->items.push_back(parse_expression()); });
    return tuple;
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (is_op(".")) {
        const size_t pos = next().pos;
        const Token& t = next();
        if (t.kind == Kind::Name) {
          auto a = std::make_unique<AttrExpr>(pos);
          a->object = std::move(e);
          a->name = t.value;
          e = std::move(a);
        } else if (t.kind == Kind::Int) {  // x.0 is x[0]
          auto item = std::make_unique<ItemExpr>(pos);
          item->object = std::move(e);
          item->key = literal(t.pos, Value::integer(t.int_value));
          e = std::move(item);
        } else {
          error(t, "expected an attribute name");
        }
      } else if (is_op("[")) {
        e = parse_subscript(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object) {
    const size_t pos = next().pos;
    ExprPtr start, stop, step;
    if (!is_op(":")) start = parse_expression();
    if (!accept_op(":")) {
      expect_op("]");
      auto item = std::make_unique<ItemExpr>(pos);
      item->object = std::move(object);
      item->key = std::move(start);
      return item;
    }
    if (!is_op("]") && !is_op(":")) stop = parse_expression();
    if (accept_op(":") && !is_op("]")) step = parse_expression();
    expect_op("]");
    auto s = std::make_unique<SliceExpr>(pos);
    s->object = std::move(object);
    s->start = std::move(start);
    s->stop = std::move(stop);
    s->step = std::move(step);
    return s;
  }

  ExprPtr parse_call(ExprPtr callee) {
    next();
    auto c = std::make_unique<CallExpr>(callee->pos());  // errors point at what is called
    c->callee = std::move(callee);
    c->args = parse_args();
    return c;
  }

  // After "(": positional, then name=value arguments, up to ")".
  CallArgs parse_args() {
    CallArgs args;
    parse_items(")", [&] {
      if (peek().kind == Kind::Name && is_op("=", 1)) {
        std::string name = next().value;
        next();
        args.named.emplace_back(std::move(name), parse_expression());
      } else {
        if (!args.named.empty()) error(peek(), "expected a keyword argument");
        args.positional.push_back(parse_expression());
      }
    });
    return args;
  }

  std::string parse_dotted_name() {
    std::string name = expect_name();
    while (accept_op(".")) name += "." + expect_name();
    return name;
  }

  ExprPtr parse_filters(ExprPtr e) {
    while (true) {
      if (accept_op("|")) {
        const Token& t = peek();
        auto f = std::make_unique<FilterExpr>(t.pos);
        const std::string name = parse_dotted_name();
        f->filter = find_filter(name);
        if (!f->filter) throw SyntaxError{t.pos, "unknown filter '" + name + "'"};
        f->input = std::move(e);
        if (accept_op("(")) f->args = parse_args();
        e = std::move(f);
      } else if (is_name("is")) {
        e = parse_test(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_test(ExprPtr input) {
    auto t = std::make_unique<TestExpr>(next().pos);
    t->negated = accept_name("not");
    const Token& name_token = peek();
    const std::string name = parse_dotted_name();
    t->test = find_test(name);
    if (!t->test) throw SyntaxError{name_token.pos, "unknown test '" + name + "'"};
    t->input = std::move(input);
    if (accept_op("(")) {
      t->args = parse_args();
    } else if (starts_bare_test_argument()) {  // "x is divisibleby 3"
      t->args.positional.push_back(parse_postfix(parse_primary()));
    }
    return t;
  }

  bool starts_bare_test_argument() const {
    const Token& t = peek();
    if (t.kind == Kind::Name) {
      if (t.value == "is") throw SyntaxError{t.pos, "tests cannot be chained with 'is'"};
      return t.value != "else" && t.value != "or" && t.value != "and";
    }
    return t.kind == Kind::String || t.kind == Kind::Int || t.kind == Kind::Float || is_op("[") || is_op("{");
  }

  const std::vector<Token>& t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_template(); }

}  // namespace parley::chat::jinja
