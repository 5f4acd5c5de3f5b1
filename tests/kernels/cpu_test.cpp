#include "kernels/cpu.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace parley {
namespace {

TEST(Cpu, NamesRoundTrip) {
  for (int i = 0; i <= int(Isa::Amx); ++i) EXPECT_EQ(isa_from_name(isa_name(Isa(i))), Isa(i));
  EXPECT_FALSE(isa_from_name("sse2").has_value());
  EXPECT_FALSE(isa_from_name("AVX2").has_value());
}

TEST(Cpu, SupportIsNested) {
  EXPECT_TRUE(isa_supported(Isa::Scalar));
  for (int i = 1; i <= int(Isa::Amx); ++i)
    if (isa_supported(Isa(i))) {
      EXPECT_TRUE(isa_supported(Isa(i - 1))) << isa_name(Isa(i));
    }
  EXPECT_TRUE(isa_supported(detect_isa()));
  if (int(detect_isa()) < int(Isa::Amx)) {
    EXPECT_FALSE(isa_supported(Isa(int(detect_isa()) + 1)));
  }
#if defined(__x86_64__)
  EXPECT_EQ(isa_supported(Isa::Avx2), bool(__builtin_cpu_supports("avx2")));
#endif
}

TEST(Cpu, EnvironmentOverride) {
  EXPECT_EQ(isa_from_env(nullptr), detect_isa());
  EXPECT_EQ(isa_from_env(""), detect_isa());
  EXPECT_EQ(isa_from_env("scalar"), Isa::Scalar);
  EXPECT_THROW(isa_from_env("avx9"), Error);
  try {
    isa_from_env("avx9");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PARLEY_ISA=avx9"), std::string::npos) << e.what();
  }
  for (int i = 0; i <= int(Isa::Amx); ++i) {
    const std::string name(isa_name(Isa(i)));
    if (isa_supported(Isa(i))) {
      EXPECT_EQ(isa_from_env(name.c_str()), Isa(i));
    } else {
      EXPECT_THROW(isa_from_env(name.c_str()), Error) << name;
    }
  }
}

TEST(Cpu, SetActiveIsa) {
  const Isa best = detect_isa();
  set_active_isa(Isa::Scalar);
  EXPECT_EQ(active_isa(), Isa::Scalar);
  set_active_isa(best);
  EXPECT_EQ(active_isa(), best);
  if (best != Isa::Amx) {
    EXPECT_THROW(set_active_isa(Isa(int(best) + 1)), Error);
  }
  EXPECT_EQ(active_isa(), best);
}

}  // namespace
}  // namespace parley
