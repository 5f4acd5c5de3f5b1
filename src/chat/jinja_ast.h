#pragma once
// The parsed form of a template. Expressions evaluate to Values, statements
// write Text; each node knows its byte offset for error messages.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_builtins.h"
#include "chat/jinja_value.h"

namespace parley::chat::jinja {

class Renderer;

class Expr {
 public:
  explicit Expr(size_t pos) : pos_(pos) {}
  virtual ~Expr() = default;
  // A failure inside becomes a parley::Error that names this node's position.
  Value evaluate(Renderer& r) const;
  size_t pos() const { return pos_; }

 private:
  virtual Value eval(Renderer& r) const = 0;
  size_t pos_;
};
using ExprPtr = std::unique_ptr<Expr>;

struct CallArgs {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> named;
  Args evaluate(Renderer& r) const;
};

enum class Flow { Normal, Break, Continue };

class Stmt {
 public:
  explicit Stmt(size_t pos) : pos_(pos) {}
  virtual ~Stmt() = default;
  Flow execute(Renderer& r) const;

 private:
  virtual Flow run(Renderer& r) const = 0;
  size_t pos_;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct LiteralExpr final : Expr {
  using Expr::Expr;
  Value value;
  Value eval(Renderer& r) const override;
};

struct ListExpr final : Expr {
  using Expr::Expr;
  std::vector<ExprPtr> items;
  Value eval(Renderer& r) const override;
};

struct DictExpr final : Expr {
  using Expr::Expr;
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
  Value eval(Renderer& r) const override;
};

struct NameExpr final : Expr {
  using Expr::Expr;
  std::string name;
  Value eval(Renderer& r) const override;
};

struct AttrExpr final : Expr {  // object.name
  using Expr::Expr;
  ExprPtr object;
  std::string name;
  Value eval(Renderer& r) const override;
};

struct ItemExpr final : Expr {  // object[key]
  using Expr::Expr;
  ExprPtr object, key;
  Value eval(Renderer& r) const override;
};

struct SliceExpr final : Expr {  // object[start:stop:step], each part optional
  using Expr::Expr;
  ExprPtr object, start, stop, step;
  Value eval(Renderer& r) const override;
};

struct CallExpr final : Expr {
  using Expr::Expr;
  ExprPtr callee;
  CallArgs args;
  Value eval(Renderer& r) const override;
};

struct FilterExpr final : Expr {  // input | name(args)
  using Expr::Expr;
  ExprPtr input;
  FilterFn filter = nullptr;
  CallArgs args;
  Value eval(Renderer& r) const override;
};

struct TestExpr final : Expr {  // input is [not] name(args)
  using Expr::Expr;
  ExprPtr input;
  TestFn test = nullptr;
  CallArgs args;
  bool negated = false;
  Value eval(Renderer& r) const override;
};

struct UnaryExpr final : Expr {  // -x, +x, not x
  using Expr::Expr;
  std::string op;
  ExprPtr operand;
  Value eval(Renderer& r) const override;
};

struct BinaryExpr final : Expr {  // + - * / // % ** ~
  using Expr::Expr;
  std::string op;
  ExprPtr left, right;
  Value eval(Renderer& r) const override;
};

struct LogicalExpr final : Expr {  // and / or, short-circuit, yielding an operand
  using Expr::Expr;
  bool is_and = false;
  ExprPtr left, right;
  Value eval(Renderer& r) const override;
};

struct CompareExpr final : Expr {  // a < b <= c, == != in "not in"
  using Expr::Expr;
  ExprPtr first;
  std::vector<std::pair<std::string, ExprPtr>> rest;
  Value eval(Renderer& r) const override;
};

struct ConditionalExpr final : Expr {  // then if condition else otherwise
  using Expr::Expr;
  ExprPtr condition, then, otherwise;  // otherwise may be null (undefined)
  Value eval(Renderer& r) const override;
};

struct TextStmt final : Stmt {
  using Stmt::Stmt;
  std::string text;
  Flow run(Renderer& r) const override;
};

struct OutputStmt final : Stmt {  // {{ expr }}
  using Stmt::Stmt;
  ExprPtr expr;
  Flow run(Renderer& r) const override;
};

struct IfStmt final : Stmt {
  using Stmt::Stmt;
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, elif...
  Body otherwise;
  Flow run(Renderer& r) const override;
};

struct ForStmt final : Stmt {
  using Stmt::Stmt;
  std::vector<std::string> targets;  // for a, b in ...
  ExprPtr iterable, filter;          // filter: "for x in xs if cond" (may be null)
  Body body, otherwise;
  Flow run(Renderer& r) const override;
};

struct SetStmt final : Stmt {  // set a = x / set a, b = x / set ns.attr = x
  using Stmt::Stmt;
  std::vector<std::string> targets;
  std::string attribute;  // non-empty for ns.attr
  ExprPtr value;
  Flow run(Renderer& r) const override;
};

struct SetBlockStmt final : Stmt {  // set a %}...{% endset
  using Stmt::Stmt;
  std::string target;
  Body body;
  Flow run(Renderer& r) const override;
};

struct MacroStmt final : Stmt {
  using Stmt::Stmt;
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // per parameter, null when it has none
  Body body;
  Flow run(Renderer& r) const override;
};

struct LoopControlStmt final : Stmt {  // break / continue
  using Stmt::Stmt;
  Flow flow = Flow::Break;
  Flow run(Renderer& r) const override;
};

struct BlockStmt final : Stmt {  // generation %}...{% endgeneration: renders its body
  using Stmt::Stmt;
  Body body;
  Flow run(Renderer& r) const override;
};

}  // namespace parley::chat::jinja
