#pragma once
// Pieces of the JSON Schema converter that do not depend on the schema's
// JSON type: integer ranges and string formats as GBNF expressions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::grammar {

// The decimal integers in [lo, hi] (either side may be open), written as JSON
// writes them: no leading zeros, no "-0". lo <= hi when both are given.
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

// The text of a string of the format (between the quotes): date, time,
// date-time (RFC 3339), uuid. Throws parley::Error for any other format.
std::string string_format_gbnf(std::string_view format);

}  // namespace parley::grammar
