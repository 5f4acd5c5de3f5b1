#include "serve/transport/connection_limiter.h"

#include <gtest/gtest.h>

#include <vector>

namespace parley::serve {
namespace {

using Verdict = ConnectionLimiter::Verdict;

// An evict callback that records which connection it was for.
std::function<void()> recorder(std::vector<int>& evicted, int id) {
  return [&evicted, id] { evicted.push_back(id); };
}

TEST(ConnectionLimiterTest, RefusesPastTheTotalCapWhenNoneIsIdle) {
  ConnectionLimiter limiter({2, 0});
  auto a = limiter.admit("10.0.0.1");
  auto b = limiter.admit("10.0.0.2");
  EXPECT_EQ(a.verdict, Verdict::Admitted);
  EXPECT_EQ(b.verdict, Verdict::Admitted);
  auto c = limiter.admit("10.0.0.3");
  EXPECT_EQ(c.verdict, Verdict::RefusedFull);
  EXPECT_EQ(c.slot, nullptr);
  a.slot.reset();  // a connection closes: its place is free again
  EXPECT_EQ(limiter.admit("10.0.0.3").verdict, Verdict::Admitted);
}

TEST(ConnectionLimiterTest, EvictsTheLongestIdleConnectionAtTheCap) {
  ConnectionLimiter limiter({3, 0});
  std::vector<int> evicted;
  auto a = limiter.admit("a"), b = limiter.admit("b"), c = limiter.admit("c");
  ASSERT_TRUE(b.slot->idle(recorder(evicted, 2)));
  ASSERT_TRUE(a.slot->idle(recorder(evicted, 1)));
  ASSERT_TRUE(c.slot->idle(recorder(evicted, 3)));
  ASSERT_TRUE(b.slot->idle(recorder(evicted, 2)));  // active again: idle since now
  auto d = limiter.admit("d");
  EXPECT_EQ(d.verdict, Verdict::AdmittedByEviction);
  EXPECT_EQ(evicted, std::vector<int>{1});
  EXPECT_EQ(limiter.open(), 3u);
  EXPECT_FALSE(a.slot->idle(recorder(evicted, 1)));  // the evicted one must close
  a.slot.reset();
  EXPECT_EQ(limiter.open(), 3u);  // its place went to d
  EXPECT_EQ(limiter.admit("e").verdict, Verdict::AdmittedByEviction);
  EXPECT_EQ(evicted, (std::vector<int>{1, 3}));
}

TEST(ConnectionLimiterTest, BusyConnectionsAreNotEvicted) {
  ConnectionLimiter limiter({2, 0});
  std::vector<int> evicted;
  auto a = limiter.admit("a"), b = limiter.admit("b");
  ASSERT_TRUE(a.slot->idle(recorder(evicted, 1)));
  a.slot->busy();
  // b never went idle (a request in progress from the start)
  EXPECT_EQ(limiter.admit("c").verdict, Verdict::RefusedFull);
  EXPECT_TRUE(evicted.empty());
  ASSERT_TRUE(b.slot->idle(recorder(evicted, 2)));
  EXPECT_EQ(limiter.admit("c").verdict, Verdict::AdmittedByEviction);
  EXPECT_EQ(evicted, std::vector<int>{2});
}

TEST(ConnectionLimiterTest, PerAddressCapRefusesOnlyThatAddress) {
  ConnectionLimiter limiter({0, 2});
  auto a1 = limiter.admit("10.0.0.1"), a2 = limiter.admit("10.0.0.1");
  EXPECT_EQ(limiter.admit("10.0.0.1").verdict, Verdict::RefusedAddress);
  EXPECT_EQ(limiter.admit("10.0.0.2").verdict, Verdict::Admitted);
  EXPECT_EQ(limiter.admit("").verdict, Verdict::Admitted);  // exempt
  EXPECT_EQ(limiter.admit("").verdict, Verdict::Admitted);
  EXPECT_EQ(limiter.admit("").verdict, Verdict::Admitted);
  a1.slot.reset();
  EXPECT_EQ(limiter.admit("10.0.0.1").verdict, Verdict::Admitted);
}

TEST(ConnectionLimiterTest, AnEvictedConnectionFreesItsAddressPlace) {
  ConnectionLimiter limiter({1, 1});
  std::vector<int> evicted;
  auto a = limiter.admit("10.0.0.1");
  ASSERT_TRUE(a.slot->idle(recorder(evicted, 1)));
  auto b = limiter.admit("10.0.0.2");
  EXPECT_EQ(b.verdict, Verdict::AdmittedByEviction);
  b.slot.reset();
  EXPECT_EQ(limiter.admit("10.0.0.1").verdict, Verdict::Admitted);  // a no longer counts, though still open
}

TEST(ConnectionLimiterTest, DrainEvictsIdleConnectionsThatLeaveOnDrain) {
  ConnectionLimiter limiter({0, 0});
  std::vector<int> evicted;
  auto http = limiter.admit("a"), ws_idle = limiter.admit("a"), ws_busy = limiter.admit("a");
  ws_idle.slot->leave_on_drain();
  ws_busy.slot->leave_on_drain();
  ASSERT_TRUE(http.slot->idle(recorder(evicted, 1)));
  ASSERT_TRUE(ws_idle.slot->idle(recorder(evicted, 2)));
  limiter.drain();
  EXPECT_EQ(evicted, std::vector<int>{2});
  EXPECT_FALSE(ws_busy.slot->idle(recorder(evicted, 3)));  // its answer ended: it closes
  EXPECT_TRUE(http.slot->idle(recorder(evicted, 1)));      // keep-alive HTTP stays
}

TEST(ConnectionLimiterTest, AddressGroups) {
  namespace ip = boost::asio::ip;
  EXPECT_EQ(address_group(ip::make_address("192.0.2.7")), "192.0.2.7");
  EXPECT_EQ(address_group(ip::make_address("::ffff:192.0.2.7")), "192.0.2.7");
  EXPECT_EQ(address_group(ip::make_address("2001:db8:1:2:3:4:5:6")), "2001:db8:1:2::/64");
  EXPECT_EQ(address_group(ip::make_address("2001:db8:1:2:ffff::1")), "2001:db8:1:2::/64");
}

TEST(ConnectionLimiterTest, DefaultCapKeepsAReserveOfTheOpenFileLimit) {
  EXPECT_EQ(default_max_connections(1024), 1024u - 102 - 64);
  EXPECT_EQ(default_max_connections(20000), 20000u - 2000 - 64);
  EXPECT_EQ(default_max_connections(50), 16u);
}

}  // namespace
}  // namespace parley::serve
