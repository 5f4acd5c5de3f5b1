#include "chat/jinja_render.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "chat/jinja_operators.h"
#include "chat/jinja_strings.h"
#include "util/error.h"

namespace parley::chat::jinja {
namespace {

constexpr int kMaxMacroDepth = 64;

std::optional<int64_t> slice_bound(const ExprPtr& e, Renderer& r) {
  if (!e) return std::nullopt;
  const Value v = e->evaluate(r);
  if (v.is_none()) return std::nullopt;
  if (v.kind() != Value::Kind::Int && v.kind() != Value::Kind::Bool) fail("slice indices must be integers or None");
  return v.as_int();
}

bool compare_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  const int c = compare(a, b, op);
  return op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
}

// for a, b in pairs: unpack an item into the loop's names.
void bind_targets(const std::vector<std::string>& targets, const Value& item, Dict& vars) {
  if (targets.size() == 1) {
    vars.set(targets[0], item);
    return;
  }
  const List parts = iterate(item);
  if (parts.size() != targets.size()) {
    fail((parts.size() > targets.size() ? "too many" : "not enough") + std::string(" values to unpack (expected ") +
         std::to_string(targets.size()) + ", got " + std::to_string(parts.size()) + ")");
  }
  for (size_t i = 0; i < parts.size(); ++i) vars.set(targets[i], parts[i]);
}

// Jinja's `loop`: one object whose fields advance with the iteration (built
// once per loop, as allocating one per iteration dominated long loops).
class LoopVariable {
 public:
  explicit LoopVariable(const List& items) : items_(items), dict_(std::make_shared<Dict>()) {
    for (const char* field :
         {"index", "index0", "revindex", "revindex0", "first", "last", "length", "previtem", "nextitem"}) {
      dict_->items.emplace_back(field, Value());
    }
    dict_->items.emplace_back("cycle", Value::function("cycle", [at = at_](const Args& a) {
                                if (a.positional.empty()) fail("no items for cycling given");
                                return a.positional[*at % a.positional.size()];
                              }));
  }

  Value advance_to(size_t i) {
    *at_ = i;
    const int64_t n = int64_t(items_.size()), k = int64_t(i);
    const Value fields[] = {
        Value::integer(k + 1),
        Value::integer(k),
        Value::integer(n - k),
        Value::integer(n - k - 1),
        Value::boolean(k == 0),
        Value::boolean(k == n - 1),
        Value::integer(n),
        i > 0 ? items_[i - 1] : Value::undefined("there is no previous item"),
        k + 1 < n ? items_[i + 1] : Value::undefined("there is no next item"),
    };
    for (size_t f = 0; f < std::size(fields); ++f) dict_->items[f].second = fields[f];
    return Value::dict(dict_);
  }

 private:
  const List& items_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<size_t> at_ = std::make_shared<size_t>(0);
};

Value call_macro(Renderer& r, const MacroStmt& m, const Args& args) {
  if (args.positional.size() > m.params.size()) {
    fail("macro '" + m.name + "' takes not more than " + std::to_string(m.params.size()) + " argument(s)");
  }
  for (const auto& [name, v] : args.named) {
    if (std::find(m.params.begin(), m.params.end(), name) == m.params.end()) {
      fail("macro '" + m.name + "' takes no keyword argument '" + name + "'");
    }
  }
  if (r.macro_depth >= kMaxMacroDepth) fail("macro calls nested too deeply");
  ++r.macro_depth;
  Renderer::Scope scope(r, r.root());  // macros see the template's globals, not the caller's locals
  for (size_t i = 0; i < m.params.size(); ++i) {
    const Value* given = args.get(i, m.params[i]);
    scope.vars().set(m.params[i], given           ? *given
                                  : m.defaults[i] ? m.defaults[i]->evaluate(r)
                                                  : Value::undefined("'" + m.params[i] + "' is undefined"));
  }
  Text out = r.capture(m.body);
  --r.macro_depth;
  return Value::string(std::move(out));
}

}  // namespace

std::string error_at(std::string_view source, size_t pos, std::string_view message) {
  pos = std::min(pos, source.size());
  const size_t line = size_t(std::count(source.begin(), source.begin() + ptrdiff_t(pos), '\n')) + 1;
  const size_t newline = pos == 0 ? std::string_view::npos : source.rfind('\n', pos - 1);
  const size_t column = pos - (newline == std::string_view::npos ? 0 : newline + 1) + 1;
  return "template error at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
         std::string(message);
}

Renderer::Renderer(std::string_view source, const Dict& variables, size_t max_steps)
    : source_(source), max_steps_(max_steps) {
  add_global_functions(root_.vars);
  for (const auto& [k, v] : variables.items) root_.vars.set(k, v);
}

Text Renderer::render(const Body& body) { return capture(body); }

Flow Renderer::run(const Body& body) {
  for (const StmtPtr& s : body) {
    const Flow f = s->execute(*this);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Text Renderer::capture(const Body& body) {
  Text buffer;
  Text* const outer = out_;
  out_ = &buffer;
  run(body);
  out_ = outer;
  return buffer;
}

void Renderer::write(const Text& t) {
  out_->append(t);
  check_size(out_->size());
}

Value Renderer::lookup(std::string_view name) const {
  for (const Frame* f = current_; f; f = f->parent) {
    if (const Value* v = f->vars.find(name)) return *v;
  }
  return Value::undefined("'" + std::string(name) + "' is undefined");
}

void Renderer::assign(std::string_view name, Value v) { current_->vars.set(name, std::move(v)); }

void Renderer::tick() {
  if (++steps_ > max_steps_) fail("template exceeded " + std::to_string(max_steps_) + " evaluation steps");
}

void Renderer::fail_at(size_t pos, std::string_view message) const { throw Error(error_at(source_, pos, message)); }

Value Expr::evaluate(Renderer& r) const {
  try {
    r.tick();
    return eval(r);
  } catch (const EvalError& e) {
    r.fail_at(pos_, e.what());
  }
}

Flow Stmt::execute(Renderer& r) const {
  try {
    r.tick();
    return run(r);
  } catch (const EvalError& e) {
    r.fail_at(pos_, e.what());
  }
}

Args CallArgs::evaluate(Renderer& r) const {
  Args out;
  for (const ExprPtr& e : positional) out.positional.push_back(e->evaluate(r));
  for (const auto& [name, e] : named) out.named.emplace_back(name, e->evaluate(r));
  return out;
}

Value LiteralExpr::eval(Renderer&) const { return value; }

Value ListExpr::eval(Renderer& r) const {
  List out;
  for (const ExprPtr& e : items) out.push_back(e->evaluate(r));
  return Value::list(std::move(out));
}

Value DictExpr::eval(Renderer& r) const {
  auto d = std::make_shared<Dict>();
  for (const auto& [k, v] : items) {
    const Value key = k->evaluate(r);
    if (!key.is_string()) fail("dict keys must be strings, not " + type_name(key));
    d->set(key.as_text().str(), v->evaluate(r));
  }
  return Value::dict(std::move(d));
}

Value NameExpr::eval(Renderer& r) const { return r.lookup(name); }

Value AttrExpr::eval(Renderer& r) const { return get_attribute(object->evaluate(r), name); }

Value ItemExpr::eval(Renderer& r) const {
  const Value obj = object->evaluate(r);
  return get_item(obj, key->evaluate(r));
}

Value SliceExpr::eval(Renderer& r) const {
  const Value obj = object->evaluate(r);
  const auto b = slice_bound(start, r), e = slice_bound(stop, r), s = slice_bound(step, r);
  if (obj.is_string()) return Value::string(slice(obj.as_text(), b, e, s));
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.kind() != Value::Kind::List) fail("'" + type_name(obj) + "' object is not subscriptable");
  List out;
  for (size_t i : slice_indices(obj.as_list().size(), b, e, s)) out.push_back(obj.as_list()[i]);
  return Value::list(std::move(out));
}

Value CallExpr::eval(Renderer& r) const {
  const Value fn = callee->evaluate(r);
  if (fn.is_undefined()) fail_undefined(fn);
  if (fn.kind() != Value::Kind::Function) fail("'" + type_name(fn) + "' object is not callable");
  return fn.as_function().call(args.evaluate(r));
}

Value FilterExpr::eval(Renderer& r) const {
  const Value in = input->evaluate(r);
  return filter(in, args.evaluate(r));
}

Value TestExpr::eval(Renderer& r) const {
  const Value in = input->evaluate(r);
  return Value::boolean(test(in, args.evaluate(r)) != negated);
}

Value UnaryExpr::eval(Renderer& r) const {
  const Value v = operand->evaluate(r);
  return op == "not" ? Value::boolean(!truthy(v)) : unary_op(op, v);
}

Value BinaryExpr::eval(Renderer& r) const {
  const Value a = left->evaluate(r);
  return binary_op(op, a, right->evaluate(r));
}

Value LogicalExpr::eval(Renderer& r) const {
  Value a = left->evaluate(r);
  return truthy(a) == is_and ? right->evaluate(r) : a;
}

Value CompareExpr::eval(Renderer& r) const {
  Value a = first->evaluate(r);
  for (const auto& [op, e] : rest) {
    Value b = e->evaluate(r);
    if (!compare_op(op, a, b)) return Value::boolean(false);
    a = std::move(b);
  }
  return Value::boolean(true);
}

Value ConditionalExpr::eval(Renderer& r) const {
  if (truthy(condition->evaluate(r))) return then->evaluate(r);
  return otherwise ? otherwise->evaluate(r) : Value::undefined("the inline if-expression has no else branch");
}

Flow TextStmt::run(Renderer& r) const {
  r.write(Text(text));
  return Flow::Normal;
}

Flow OutputStmt::run(Renderer& r) const {
  r.write(to_text(expr->evaluate(r)));
  return Flow::Normal;
}

Flow IfStmt::run(Renderer& r) const {
  for (const auto& [condition, body] : branches) {
    if (truthy(condition->evaluate(r))) return r.run(body);
  }
  return r.run(otherwise);
}

Flow ForStmt::run(Renderer& r) const {
  List items = iterate(iterable->evaluate(r));
  if (filter) {  // the loop (and its loop.index...) sees only the kept items
    List kept;
    for (Value& item : items) {
      Renderer::Scope scope(r, r.current());
      bind_targets(targets, item, scope.vars());
      if (truthy(filter->evaluate(r))) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) return r.run(otherwise);
  LoopVariable loop(items);
  for (size_t i = 0; i < items.size(); ++i) {
    r.tick();                               // an empty body still costs a step
    Renderer::Scope scope(r, r.current());  // each iteration starts from the enclosing scope
    bind_targets(targets, items[i], scope.vars());
    scope.vars().set("loop", loop.advance_to(i));
    if (r.run(body) == Flow::Break) break;
  }
  return Flow::Normal;
}

Flow SetStmt::run(Renderer& r) const {
  Value v = value->evaluate(r);
  if (!attribute.empty()) {
    const Value ns = r.lookup(targets[0]);
    if (ns.kind() != Value::Kind::Dict || !ns.as_dict().is_namespace) {
      fail("cannot assign attribute on non-namespace object");
    }
    if (v.holds_namespace()) fail("a namespace attribute cannot hold a namespace");
    ns.as_dict().set(attribute, std::move(v));
  } else if (targets.size() == 1) {
    r.assign(targets[0], std::move(v));
  } else {
    bind_targets(targets, v, r.current()->vars);
  }
  return Flow::Normal;
}

Flow SetBlockStmt::run(Renderer& r) const {
  r.assign(target, Value::string(r.capture(body)));
  return Flow::Normal;
}

Flow MacroStmt::run(Renderer& r) const {
  r.assign(name, Value::function(name, [&r, this](const Args& a) { return call_macro(r, *this, a); }));
  return Flow::Normal;
}

Flow LoopControlStmt::run(Renderer&) const { return flow; }

Flow BlockStmt::run(Renderer& r) const { return r.run(body); }

}  // namespace parley::chat::jinja
