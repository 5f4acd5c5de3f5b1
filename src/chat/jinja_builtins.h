#pragma once
// Jinja's filters (jinja_filters.cpp) and tests (jinja_tests.cpp); attribute
// and item access, methods of str and dict values, membership and iteration
// (jinja_access.cpp); the global functions chat templates use (jinja_globals.cpp).
#include <string>
#include <string_view>

#include "chat/jinja_value.h"

namespace parley::chat::jinja {

using FilterFn = Value (*)(const Value& input, const Args& args);
using TestFn = bool (*)(const Value& value, const Args& args);

FilterFn find_filter(std::string_view name);  // nullptr when unknown
TestFn find_test(std::string_view name);      // nullptr when unknown

// obj.name: a method, a dict entry or a namespace attribute; else undefined.
Value get_attribute(const Value& object, std::string_view name);
// obj[key]: an element, a character, a dict entry; else undefined.
Value get_item(const Value& object, const Value& key);
// "a.b" or "a.0": item lookups one after the other, as selectattr and map do.
Value get_path(const Value& object, const std::string& path);
// `item in container`.
bool contains(const Value& container, const Value& item);
// What a for loop visits: items, dict keys, characters; nothing for undefined.
List iterate(const Value& v);
// A dict's [key, value] pairs (dict.items() and |items).
Value dict_items(const Value& v);
// str() of each item, joined by `separator`.
Text join_text(const List& items, const Text& separator);

// range, namespace, dict, raise_exception, strftime_now.
void add_global_functions(Dict& globals);

}  // namespace parley::chat::jinja
