#include "util/base64.h"

#include <gtest/gtest.h>

namespace parley {
namespace {

std::string encode(const std::string& s) { return base64_encode(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foob"), "Zm9vYg==");
  EXPECT_EQ(encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

}  // namespace
}  // namespace parley
