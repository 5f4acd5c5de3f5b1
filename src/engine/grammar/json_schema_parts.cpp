#include <vector>

#include "engine/grammar/json_schema_parts.h"
#include "util/error.h"

namespace parley::grammar {

namespace {

std::string join_alternatives(const std::vector<std::string>& alternatives) {
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : " ") + alternatives[i];
  return out + " )";
}

std::string quoted_char(char c) { return std::string("\"") + c + "\""; }

std::string digit_class(char first, char last) {
  return first == last ? quoted_char(first) : std::string("[") + first + "-" + last + "]";
}

// The numbers from lo to hi, both of the same number of digits: split at the
// first digit into the part sharing lo's first digit, the whole decades in
// between, and the part sharing hi's first digit.
std::string same_length_range(const std::string& lo, const std::string& hi) {
  if (lo == hi) return "\"" + lo + "\"";
  const size_t rest = lo.size() - 1;
  if (rest == 0) return digit_class(lo[0], hi[0]);
  const std::string lo_rest = lo.substr(1), hi_rest = hi.substr(1);
  if (lo[0] == hi[0]) return quoted_char(lo[0]) + " " + same_length_range(lo_rest, hi_rest);
  std::vector<std::string> alternatives;
  char first = lo[0], last = hi[0];
  if (lo_rest != std::string(rest, '0')) {
    alternatives.push_back(quoted_char(first) + " " + same_length_range(lo_rest, std::string(rest, '9')));
    ++first;
  }
  std::string high;
  if (hi_rest != std::string(rest, '9')) {
    high = quoted_char(last) + " " + same_length_range(std::string(rest, '0'), hi_rest);
    --last;
  }
  if (first <= last) alternatives.push_back(digit_class(first, last) + " [0-9]{" + std::to_string(rest) + "}");
  if (!high.empty()) alternatives.push_back(high);
  return join_alternatives(alternatives);
}

uint64_t power_of_ten(size_t n) {
  uint64_t p = 1;
  for (size_t i = 0; i < n; ++i) p *= 10;
  return p;
}

// The numbers in [a, b] (b open when absent), grouped by their number of digits.
std::string naturals(uint64_t a, std::optional<uint64_t> b) {
  const size_t a_digits = std::to_string(a).size();
  const size_t b_digits = b ? std::to_string(*b).size() : a_digits;
  std::vector<std::string> alternatives;
  for (size_t d = a_digits; d <= b_digits; ++d) {
    const uint64_t lo = d == a_digits ? a : power_of_ten(d - 1);
    const uint64_t hi = b && d == b_digits ? *b : power_of_ten(d) - 1;
    alternatives.push_back(same_length_range(std::to_string(lo), std::to_string(hi)));
  }
  if (!b) alternatives.push_back("[1-9] [0-9]{" + std::to_string(a_digits) + ",}");
  return join_alternatives(alternatives);
}

uint64_t magnitude(int64_t negative) { return static_cast<uint64_t>(-(negative + 1)) + 1; }

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alternatives;
  if (!lo || *lo < 0) {
    const uint64_t smallest = hi && *hi < 0 ? magnitude(*hi) : 1;
    alternatives.push_back("\"-\" " + naturals(smallest, lo ? std::optional<uint64_t>(magnitude(*lo)) : std::nullopt));
  }
  if (!hi || *hi >= 0) {
    const uint64_t smallest = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    alternatives.push_back(naturals(smallest, hi ? std::optional<uint64_t>(static_cast<uint64_t>(*hi)) : std::nullopt));
  }
  return join_alternatives(alternatives);
}

std::string string_format_gbnf(std::string_view format) {
  const std::string date = "[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [12] [0-9] | \"3\" [01] )";
  const std::string hour = "( [01] [0-9] | \"2\" [0-3] )";
  const std::string time = hour + " \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{1,9} )? ( \"Z\" | [+-] " + hour +
                           " \":\" [0-5] [0-9] )";
  if (format == "date") return date;
  if (format == "time") return time;
  if (format == "date-time") return date + " \"T\" " + time;
  if (format == "uuid") {
    return "[0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12}";
  }
  throw Error("JSON schema format '" + std::string(format) + "' is not supported (date, time, date-time, uuid are)");
}

}  // namespace parley::grammar
