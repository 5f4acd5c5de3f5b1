#pragma once
// Request ids: a client's X-Request-Id is kept when it is short and plain
// (letters, digits and -_.:/+=@, at most 128 characters); otherwise, or
// when absent, the server makes one. Every response carries it.
#include <string>

namespace parley::serve {

// The id to use for a request whose X-Request-Id header is `given` (null: none).
std::string request_id_for(const std::string* given);
std::string new_request_id();  // "req_" + 24 random hex digits

}  // namespace parley::serve
