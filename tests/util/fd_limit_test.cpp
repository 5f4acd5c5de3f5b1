#include <gtest/gtest.h>
#include <sys/resource.h>

#include "util/fd_limit.h"

namespace parley {
namespace {

TEST(FdLimit, RaisesTheSoftLimitToTheHardOne) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_max < 300) GTEST_SKIP() << "hard limit of open files is only " << lim.rlim_max;
  rlimit low = lim;
  low.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_EQ(raise_fd_limit(), uint64_t(lim.rlim_max));
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, lim.rlim_max);
  EXPECT_EQ(raise_fd_limit(), uint64_t(lim.rlim_max));  // already there: unchanged
}

}  // namespace
}  // namespace parley
