// The hardware and PTX limits the seed's mechanisms live within, as plain C++ (no CUDA), and
// host-side validators that reject a bad value with a message naming it. The device library, the
// pipeline and the host model all use these, so a limit is written down once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

// The compile-time predicates are callable from device code too when compiled by nvcc; the file
// needs no CUDA header either way.
#if defined(__CUDACC__)
#define HOPPER_LIMITS_HD __host__ __device__
#else
#define HOPPER_LIMITS_HD
#endif

namespace hopper::limits {

// ---- mbarrier (PTX ISA: mbarrier object contents; seed §11, §12) ---------------------------
inline constexpr uint32_t min_arrival_count = 1;
inline constexpr uint32_t max_arrival_count = (1u << 20) - 1;    // expected/pending arrivals
inline constexpr int64_t max_tx_count = (int64_t{1} << 20) - 1;  // tx-count range is +-(2^20-1)
inline constexpr int64_t min_tx_count = -max_tx_count;
inline constexpr size_t mbarrier_bytes = 8;  // a .b64 object
inline constexpr size_t mbarrier_alignment = 8;

// ---- cp.async.bulk (seed §10, §19) ----------------------------------------------------------
inline constexpr size_t bulk_copy_alignment = 16;  // addresses and sizes: multiples of 16 bytes
inline constexpr size_t bulk_copy_granule = 16;

// ---- clusters (seed §18) ----------------------------------------------------------------------
inline constexpr unsigned max_portable_cluster_size = 8;      // guaranteed on every sm_90 part
inline constexpr unsigned max_nonportable_cluster_size = 16;  // with NonPortableClusterSizeAllowed
inline constexpr unsigned max_multicast_ctas = 16;            // ctaMask is 16 bits

// ---- shared memory, threads, registers (H100/H200, sm_90) ------------------------------------
inline constexpr size_t smem_per_sm = 228 * 1024;
inline constexpr size_t max_smem_per_block = 227 * 1024;  // with the opt-in attribute
inline constexpr size_t max_static_smem_per_block = 48 * 1024;
inline constexpr unsigned warp_size = 32;
inline constexpr unsigned max_threads_per_block = 1024;
inline constexpr unsigned named_barrier_count = 16;  // ids 0..15; 0 is __syncthreads'
inline constexpr unsigned min_setmaxnreg = 24;
inline constexpr unsigned max_setmaxnreg = 256;

// ---- compile-time predicates (usable in static_assert) ---------------------------------------
HOPPER_LIMITS_HD constexpr bool valid_arrival_count(uint64_t n) {
  return n >= min_arrival_count && n <= max_arrival_count;
}
HOPPER_LIMITS_HD constexpr bool valid_tx_count(int64_t tx) { return tx >= min_tx_count && tx <= max_tx_count; }
HOPPER_LIMITS_HD constexpr bool valid_tx_bytes(uint64_t b) { return b <= uint64_t(max_tx_count); }
HOPPER_LIMITS_HD constexpr bool valid_cluster_size(uint64_t n, bool non_portable = false) {
  return n >= 1 && n <= (non_portable ? max_nonportable_cluster_size : max_portable_cluster_size);
}
HOPPER_LIMITS_HD constexpr bool valid_named_barrier_id(uint64_t id) { return id < named_barrier_count; }
HOPPER_LIMITS_HD constexpr bool valid_named_barrier_threads(uint64_t t) {
  return t >= warp_size && t <= max_threads_per_block && t % warp_size == 0;
}
HOPPER_LIMITS_HD constexpr bool valid_setmaxnreg(uint64_t n) {
  return n >= min_setmaxnreg && n <= max_setmaxnreg && n % 8 == 0;
}
HOPPER_LIMITS_HD constexpr bool valid_bulk_copy_bytes(uint64_t b) {
  return b > 0 && b % bulk_copy_granule == 0 && b <= 0xffffffffull;
}

// ---- host validators: throw std::invalid_argument naming the bad value -------------------------
namespace detail {
[[noreturn]] inline void reject(const std::string& what) { throw std::invalid_argument("hopper: " + what); }
}  // namespace detail

// An mbarrier's expected arrival count (mbarrier.init) or an arrive's count: 1..2^20-1.
inline void check_arrival_count(uint64_t count, const char* what = "arrival count") {
  if (!valid_arrival_count(count))
    detail::reject(std::string(what) + " " + std::to_string(count) + " is outside 1.." +
                   std::to_string(max_arrival_count));
}

// A tx-count value or change (expect_tx adds, complete_tx subtracts): within +-(2^20-1).
inline void check_tx_count(int64_t tx, const char* what = "tx-count") {
  if (!valid_tx_count(tx))
    detail::reject(std::string(what) + " " + std::to_string(tx) + " is outside -" + std::to_string(max_tx_count) +
                   ".." + std::to_string(max_tx_count));
}

// Bytes announced by one expect_tx / arrive.expect_tx (and so the bytes one phase can wait for).
inline void check_tx_bytes(uint64_t bytes, const char* what = "expect_tx bytes") {
  if (!valid_tx_bytes(bytes))
    detail::reject(std::string(what) + " " + std::to_string(bytes) + " exceeds the tx-count limit " +
                   std::to_string(max_tx_count));
}

// A cluster shape: every extent >= 1, product 1..8 (1..16 when non_portable is allowed).
inline void check_cluster_dims(uint64_t x, uint64_t y, uint64_t z, bool non_portable = false) {
  if (x == 0 || y == 0 || z == 0)
    detail::reject("cluster dims " + std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z) +
                   " have a zero extent");
  const uint64_t n = x * y * z;
  if (!valid_cluster_size(n, non_portable))
    detail::reject("cluster size " + std::to_string(n) + " (" + std::to_string(x) + "x" + std::to_string(y) + "x" +
                   std::to_string(z) + ") is outside 1.." +
                   std::to_string(non_portable ? max_nonportable_cluster_size : max_portable_cluster_size) +
                   (non_portable ? "" : " (16 needs the non-portable cluster size attribute)"));
}
inline void check_cluster_size(uint64_t n, bool non_portable = false) { check_cluster_dims(n, 1, 1, non_portable); }

// A multicast CTA mask: non-empty, only ranks below the cluster size.
inline void check_multicast_mask(uint32_t mask, unsigned cluster_size) {
  check_cluster_size(cluster_size, true);
  if (mask == 0) detail::reject("multicast cta mask 0x0 selects no CTA");
  if (cluster_size < 32 && (mask >> cluster_size) != 0)
    detail::reject("multicast cta mask 0x" +
                   [&] {
                     char buf[16];
                     std::snprintf(buf, sizeof buf, "%x", mask);
                     return std::string(buf);
                   }() +
                   " names a rank >= cluster size " + std::to_string(cluster_size));
}

// Shared memory a kernel asks for against a budget (default: the opt-in maximum per block).
inline void check_smem_budget(uint64_t bytes, uint64_t budget = max_smem_per_block) {
  if (budget > max_smem_per_block)
    detail::reject("shared-memory budget " + std::to_string(budget) + " exceeds the per-block maximum " +
                   std::to_string(max_smem_per_block));
  if (bytes > budget)
    detail::reject("shared memory " + std::to_string(bytes) + " bytes exceeds the budget of " + std::to_string(budget) +
                   " bytes");
}

// One cp.async.bulk: size a non-zero multiple of 16 that fits the u32 operand; both addresses
// 16-byte aligned. With a barrier, the bytes must also fit one phase's tx-count.
inline void check_bulk_copy(uint64_t bytes, const void* src, const void* dst, bool with_mbarrier = true) {
  if (!valid_bulk_copy_bytes(bytes))
    detail::reject("bulk copy size " + std::to_string(bytes) + " is not a non-zero multiple of 16 within 32 bits");
  if (with_mbarrier && !valid_tx_bytes(bytes))
    detail::reject("bulk copy size " + std::to_string(bytes) + " exceeds the tx-count limit " +
                   std::to_string(max_tx_count) + " of one mbarrier phase");
  const auto s = reinterpret_cast<uintptr_t>(src), d = reinterpret_cast<uintptr_t>(dst);
  if (s % bulk_copy_alignment != 0)
    detail::reject("bulk copy source address " + std::to_string(s) + " is not 16-byte aligned");
  if (d % bulk_copy_alignment != 0)
    detail::reject("bulk copy destination address " + std::to_string(d) + " is not 16-byte aligned");
}

// A named barrier: id 0..15, thread count a multiple of 32 in 32..1024.
inline void check_named_barrier(uint64_t id, uint64_t threads) {
  if (!valid_named_barrier_id(id))
    detail::reject("named barrier id " + std::to_string(id) + " is outside 0.." +
                   std::to_string(named_barrier_count - 1));
  if (!valid_named_barrier_threads(threads))
    detail::reject("named barrier thread count " + std::to_string(threads) + " is not a multiple of 32 in 32..1024");
}

// A setmaxnreg register count: 24..256, a multiple of 8.
inline void check_setmaxnreg(uint64_t regs) {
  if (!valid_setmaxnreg(regs))
    detail::reject("setmaxnreg count " + std::to_string(regs) + " is not a multiple of 8 in 24..256");
}

// Threads per block: 1..1024.
inline void check_block_threads(uint64_t threads) {
  if (threads == 0 || threads > max_threads_per_block)
    detail::reject("block of " + std::to_string(threads) + " threads is outside 1.." +
                   std::to_string(max_threads_per_block));
}

}  // namespace hopper::limits
