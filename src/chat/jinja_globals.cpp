// The global functions of transformers' chat-template environment.
#include <cmath>
#include <ctime>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"

namespace parley::chat::jinja {
namespace {

constexpr int64_t kMaxRange = 100000;  // as Jinja's sandbox limits range()

Value g_range(const Args& a) {
  const bool one = a.positional.size() == 1;
  const int64_t start = one ? 0 : opt_int(a, 0, "start", 0), stop = opt_int(a, one ? 0 : 1, "stop", 0),
                step = opt_int(a, 2, "step", 1);
  if (step == 0) fail("range() arg 3 must not be zero");
  const double count = std::ceil((double(stop) - double(start)) / double(step));
  if (count > double(kMaxRange)) fail("range too big, at most " + std::to_string(kMaxRange) + " items allowed");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(Value::integer(i));
  return Value::list(std::move(out));
}

// dict(x=1) and namespace(x=1), optionally starting from a mapping.
Value make_dict(const Args& a, bool is_namespace) {
  auto d = std::make_shared<Dict>();
  d->is_namespace = is_namespace;
  if (const Value* init = a.get(0, ""); init && init->kind() == Value::Kind::Dict) d->items = init->as_dict().items;
  for (const auto& [k, v] : a.named) d->set(k, v);
  return Value::dict(std::move(d));
}

Value g_raise_exception(const Args& a) { fail(str(required(a, 0, "message"))); }

Value g_strftime_now(const Args& a) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[256];
  const size_t n = std::strftime(buf, sizeof buf, str(required(a, 0, "format")).c_str(), &local);
  return Value::string(std::string(buf, n));
}

}  // namespace

void add_global_functions(Dict& globals) {
  globals.set("range", Value::function("range", g_range));
  globals.set("dict", Value::function("dict", [](const Args& a) { return make_dict(a, false); }));
  globals.set("namespace", Value::function("namespace", [](const Args& a) { return make_dict(a, true); }));
  globals.set("raise_exception", Value::function("raise_exception", g_raise_exception));
  globals.set("strftime_now", Value::function("strftime_now", g_strftime_now));
}

}  // namespace parley::chat::jinja
