// hopper/objects/limits.hpp: every validator accepts the edges of its range and rejects just outside
// them, with a message that names the bad value.
#include <gtest/gtest.h>

#include <hopper/objects/limits.hpp>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

namespace {

namespace L = hopper::limits;

// Expects std::invalid_argument whose message contains every one of `needles`.
void expect_reject(const std::function<void()>& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "accepted a value that must be rejected";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "message '" << msg << "' lacks '" << n << "'";
  }
}

TEST(Limits, ConstantsMatchPtx) {
  EXPECT_EQ(L::max_arrival_count, 1048575u);
  EXPECT_EQ(L::max_tx_count, 1048575);
  EXPECT_EQ(L::min_tx_count, -1048575);
  EXPECT_EQ(L::max_smem_per_block, 232448u);
  EXPECT_EQ(L::named_barrier_count, 16u);
}

TEST(Limits, ArrivalCount) {
  EXPECT_NO_THROW(L::check_arrival_count(1));
  EXPECT_NO_THROW(L::check_arrival_count(1048575));
  expect_reject([] { L::check_arrival_count(0); }, {"arrival count 0", "1..1048575"});
  expect_reject([] { L::check_arrival_count(1048576); }, {"1048576"});
  expect_reject([] { L::check_arrival_count(5000000, "consumer arrivals"); }, {"consumer arrivals 5000000"});
  static_assert(L::valid_arrival_count(1) && !L::valid_arrival_count(0) && !L::valid_arrival_count(1u << 20));
}

TEST(Limits, TxCount) {
  EXPECT_NO_THROW(L::check_tx_count(1048575));
  EXPECT_NO_THROW(L::check_tx_count(-1048575));
  EXPECT_NO_THROW(L::check_tx_count(0));
  expect_reject([] { L::check_tx_count(1048576); }, {"tx-count 1048576"});
  expect_reject([] { L::check_tx_count(-1048576); }, {"-1048576"});
  EXPECT_NO_THROW(L::check_tx_bytes(0));
  EXPECT_NO_THROW(L::check_tx_bytes(1048575));
  expect_reject([] { L::check_tx_bytes(1u << 20); }, {"expect_tx bytes 1048576"});
}

TEST(Limits, ClusterSize) {
  for (unsigned n : {1u, 2u, 4u, 8u}) EXPECT_NO_THROW(L::check_cluster_size(n));
  EXPECT_NO_THROW(L::check_cluster_size(16, /*non_portable=*/true));
  EXPECT_NO_THROW(L::check_cluster_dims(2, 2, 2));
  expect_reject([] { L::check_cluster_size(0); }, {"0x1x1", "zero extent"});
  expect_reject([] { L::check_cluster_size(16); }, {"cluster size 16", "non-portable"});
  expect_reject([] { L::check_cluster_size(17, true); }, {"cluster size 17", "1..16"});
  expect_reject([] { L::check_cluster_dims(4, 3, 1); }, {"cluster size 12", "4x3x1"});
  expect_reject([] { L::check_cluster_dims(2, 0, 1); }, {"2x0x1"});
}

TEST(Limits, MulticastMask) {
  EXPECT_NO_THROW(L::check_multicast_mask(0x3, 2));
  EXPECT_NO_THROW(L::check_multicast_mask(0xffff, 16));
  expect_reject([] { L::check_multicast_mask(0, 4); }, {"0x0"});
  expect_reject([] { L::check_multicast_mask(0x1f, 4); }, {"0x1f", "cluster size 4"});
}

TEST(Limits, SharedMemoryBudget) {
  EXPECT_NO_THROW(L::check_smem_budget(232448));
  EXPECT_NO_THROW(L::check_smem_budget(1000, 1000));
  expect_reject([] { L::check_smem_budget(232449); }, {"232449", "232448"});
  expect_reject([] { L::check_smem_budget(1001, 1000); }, {"1001", "1000"});
  expect_reject([] { L::check_smem_budget(10, 300000); }, {"budget 300000"});
  expect_reject([] { L::check_smem_budget(240000, L::max_smem_per_block, "ring"); },
                {"ring = 240000 bytes", "limit of 232448 bytes (227 KiB)"});
}

TEST(Limits, BulkCopy) {
  alignas(16) static unsigned char buf[64];
  EXPECT_NO_THROW(L::check_bulk_copy(16, buf, buf + 16));
  EXPECT_NO_THROW(L::check_bulk_copy(1048560, buf, buf));
  expect_reject([] { L::check_bulk_copy(0, buf, buf); }, {"bulk copy size 0"});
  expect_reject([] { L::check_bulk_copy(24, buf, buf); }, {"bulk copy size 24"});
  expect_reject([] { L::check_bulk_copy(1u << 20, buf, buf); }, {"1048576", "tx-count"});
  EXPECT_NO_THROW(L::check_bulk_copy(1u << 20, buf, buf, /*with_mbarrier=*/false));
  char src[24];
  std::snprintf(src, sizeof src, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(buf + 8)));
  expect_reject([] { L::check_bulk_copy(16, buf + 8, buf); }, {std::string("source address ") + src});
  expect_reject([] { L::check_bulk_copy(16, buf, buf + 4); }, {"destination address"});
  expect_reject([] { L::check_bulk_copy(24, buf, buf, true, "stage copy"); }, {"stage copy size 24"});
}

TEST(Limits, NamedBarrier) {
  EXPECT_NO_THROW(L::check_named_barrier(0, 32));
  EXPECT_NO_THROW(L::check_named_barrier(15, 1024));
  expect_reject([] { L::check_named_barrier(16, 64); }, {"named barrier id 16", "0..15"});
  expect_reject([] { L::check_named_barrier(1, 48); }, {"thread count 48"});
  expect_reject([] { L::check_named_barrier(1, 0); }, {"thread count 0"});
  expect_reject([] { L::check_named_barrier(1, 1056); }, {"thread count 1056"});
}

TEST(Limits, SetMaxNReg) {
  EXPECT_NO_THROW(L::check_setmaxnreg(24));
  EXPECT_NO_THROW(L::check_setmaxnreg(256));
  expect_reject([] { L::check_setmaxnreg(16); }, {"setmaxnreg count 16"});
  expect_reject([] { L::check_setmaxnreg(100); }, {"setmaxnreg count 100"});
  expect_reject([] { L::check_setmaxnreg(264); }, {"264"});
}

TEST(Limits, BlockThreads) {
  EXPECT_NO_THROW(L::check_block_threads(1));
  EXPECT_NO_THROW(L::check_block_threads(1024));
  expect_reject([] { L::check_block_threads(0); }, {"block of 0 threads"});
  expect_reject([] { L::check_block_threads(1025); }, {"1025"});
}

}  // namespace
