// The hardware and PTX limits that Hopper's asynchronous machinery lives within, as plain C++
// (no CUDA), and host-side validators that reject a bad value with a message naming it. The
// device library, the pipeline, the kernels' launchers and the host model all take their limits
// from here, so each is written down once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "hopper/hd.hpp"

namespace hopper::limits {

// ---- mbarrier (PTX ISA: "Size and alignment of mbarrier object", "Contents of the mbarrier
// object": the expected and pending arrival counts and the tx-count are 20-bit fields) ---------
inline constexpr uint32_t min_arrival_count = 1;
inline constexpr uint32_t max_arrival_count = (1u << 20) - 1;    // expected/pending arrivals
inline constexpr int64_t max_tx_count = (int64_t{1} << 20) - 1;  // tx-count range is +-(2^20-1)
inline constexpr int64_t min_tx_count = -max_tx_count;
inline constexpr size_t mbarrier_bytes = 8;  // a .b64 object
inline constexpr size_t mbarrier_alignment = 8;

// ---- cp.async.bulk (PTX ISA: "Data Movement and Conversion Instructions: cp.async.bulk") -------
inline constexpr size_t bulk_copy_alignment = 16;  // addresses and sizes: multiples of 16 bytes
inline constexpr size_t bulk_copy_granule = 16;
inline constexpr uint64_t max_bulk_copy_bytes = 0xffffffffull;  // the size operand is a .u32

// ---- clusters (CUDA Programming Guide: "Thread Block Clusters") --------------------------------
inline constexpr unsigned max_portable_cluster_size = 8;      // guaranteed on every sm_90 part
inline constexpr unsigned max_nonportable_cluster_size = 16;  // with NonPortableClusterSizeAllowed
inline constexpr unsigned max_multicast_ctas = 16;            // ctaMask is 16 bits

// ---- shared memory, threads, registers (H100/H200, sm_90) ------------------------------------
inline constexpr size_t smem_per_sm = 228 * 1024;
inline constexpr size_t max_smem_per_block = 227 * 1024;  // with the opt-in attribute
inline constexpr size_t max_static_smem_per_block = 48 * 1024;
inline constexpr size_t reserved_smem_per_block = 1024;  // taken by the system from every block
inline constexpr unsigned warp_size = 32;
inline constexpr unsigned max_threads_per_block = 1024;
inline constexpr unsigned named_barrier_count = 16;  // ids 0..15; 0 is __syncthreads'
inline constexpr unsigned min_setmaxnreg = 24;
inline constexpr unsigned max_setmaxnreg = 256;
inline constexpr unsigned registers_per_sm = 65536;

// ---- compile-time predicates (usable in static_assert, and in device code under nvcc) -------
HOPPER_HD constexpr bool valid_arrival_count(uint64_t n) { return n >= min_arrival_count && n <= max_arrival_count; }
HOPPER_HD constexpr bool valid_tx_count(int64_t tx) { return tx >= min_tx_count && tx <= max_tx_count; }
HOPPER_HD constexpr bool valid_tx_bytes(uint64_t b) { return b <= uint64_t(max_tx_count); }
HOPPER_HD constexpr bool valid_cluster_size(uint64_t n, bool non_portable = false) {
  return n >= 1 && n <= (non_portable ? max_nonportable_cluster_size : max_portable_cluster_size);
}
HOPPER_HD constexpr bool valid_named_barrier_id(uint64_t id) { return id < named_barrier_count; }
HOPPER_HD constexpr bool valid_named_barrier_threads(uint64_t t) {
  return t >= warp_size && t <= max_threads_per_block && t % warp_size == 0;
}
HOPPER_HD constexpr bool valid_setmaxnreg(uint64_t n) {
  return n >= min_setmaxnreg && n <= max_setmaxnreg && n % 8 == 0;
}
// The registers per thread a CTA of `threads` holds at launch when its kernel is compiled for one
// CTA per SM (__launch_bounds__(threads, 1)): the register file shared out, a multiple of 8, at
// most 256. setmaxnreg moves registers between the CTA's warps inside this pool only: an
// setmaxnreg.inc beyond what the others' setmaxnreg.dec released waits for ever.
HOPPER_HD constexpr unsigned launch_regs_per_thread(uint64_t threads) {
  const uint64_t share = threads == 0 ? 0 : registers_per_sm / threads;
  return unsigned(share < max_setmaxnreg ? share : max_setmaxnreg) / 8u * 8u;
}
// Whether `producers` warpgroups at `producer` registers per thread and `consumers` warpgroups at
// `consumer` fit the launch pool of one CTA of their threads (128 per warpgroup).
HOPPER_HD constexpr bool register_split_fits(unsigned producers, unsigned producer, unsigned consumers,
                                             unsigned consumer) {
  return uint64_t(producers) * producer + uint64_t(consumers) * consumer <=
         uint64_t(producers + consumers) * launch_regs_per_thread(uint64_t(producers + consumers) * 128u);
}
HOPPER_HD constexpr bool valid_bulk_copy_bytes(uint64_t b) {
  return b > 0 && b % bulk_copy_granule == 0 && b <= max_bulk_copy_bytes;
}

// ---- host validators: throw std::invalid_argument naming the bad value -------------------------
// Each takes `what`, the name of the checked quantity as its caller knows it, so that a validator
// built on them (hopper::validate for the pipeline, the copy's launchers) reports its own names.

// Every rejection of the library's host validators: std::invalid_argument("hopper: " + why).
[[noreturn]] inline void reject(const std::string& why) { throw std::invalid_argument("hopper: " + why); }

namespace detail {
inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
// " (227 KiB)" for a whole number of KiB, else nothing.
inline std::string kib(uint64_t bytes) {
  return bytes % 1024 == 0 ? " (" + std::to_string(bytes / 1024) + " KiB)" : std::string();
}
}  // namespace detail

// An mbarrier's expected arrival count (mbarrier.init) or an arrive's count: 1..2^20-1.
inline void check_arrival_count(uint64_t count, const std::string& what = "arrival count") {
  if (!valid_arrival_count(count))
    reject(what + " " + std::to_string(count) + " is outside 1.." + std::to_string(max_arrival_count));
}

// A tx-count value or change (expect_tx adds, complete_tx subtracts): within +-(2^20-1).
inline void check_tx_count(int64_t tx, const std::string& what = "tx-count") {
  if (!valid_tx_count(tx))
    reject(what + " " + std::to_string(tx) + " is outside -" + std::to_string(max_tx_count) + ".." +
           std::to_string(max_tx_count));
}

// Bytes announced by one expect_tx / arrive.expect_tx (and so the bytes one phase can wait for).
inline void check_tx_bytes(uint64_t bytes, const std::string& what = "expect_tx bytes") {
  if (!valid_tx_bytes(bytes))
    reject(what + " " + std::to_string(bytes) + " exceeds the mbarrier tx-count limit " + std::to_string(max_tx_count));
}

// A cluster shape: every extent >= 1, product 1..8 (1..16 when non_portable is allowed).
inline void check_cluster_dims(uint64_t x, uint64_t y, uint64_t z, bool non_portable = false) {
  if (x == 0 || y == 0 || z == 0)
    reject("cluster dims " + std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z) +
           " have a zero extent");
  const uint64_t n = x * y * z;
  if (!valid_cluster_size(n, non_portable))
    reject("cluster size " + std::to_string(n) + " (" + std::to_string(x) + "x" + std::to_string(y) + "x" +
           std::to_string(z) + ") is outside 1.." +
           std::to_string(non_portable ? max_nonportable_cluster_size : max_portable_cluster_size) +
           (non_portable ? "" : " (16 needs the non-portable cluster size attribute)"));
}
inline void check_cluster_size(uint64_t n, bool non_portable = false) { check_cluster_dims(n, 1, 1, non_portable); }

// A multicast CTA mask: non-empty, only ranks below the cluster size.
inline void check_multicast_mask(uint32_t mask, unsigned cluster_size) {
  check_cluster_size(cluster_size, true);
  if (mask == 0) reject("multicast cta mask 0x0 selects no CTA");
  if (cluster_size < 32 && (mask >> cluster_size) != 0)
    reject("multicast cta mask " + detail::hex(mask) + " names a rank >= cluster size " + std::to_string(cluster_size));
}

// Shared memory a kernel asks for against a budget (default: the opt-in maximum per block).
inline void check_smem_budget(uint64_t bytes, uint64_t budget = max_smem_per_block,
                              const std::string& what = "shared memory") {
  if (budget > max_smem_per_block)
    reject("shared-memory budget " + std::to_string(budget) + " exceeds the per-block maximum " +
           std::to_string(max_smem_per_block));
  if (bytes > budget)
    reject(what + " = " + std::to_string(bytes) + " bytes exceeds the shared-memory limit of " +
           std::to_string(budget) + " bytes" + detail::kib(budget));
}

// One cp.async.bulk: size a non-zero multiple of 16 that fits the u32 operand; both addresses
// 16-byte aligned. With a barrier, the bytes must also fit one phase's tx-count.
inline void check_bulk_copy(uint64_t bytes, const void* src, const void* dst, bool with_mbarrier = true,
                            const std::string& what = "bulk copy") {
  if (!valid_bulk_copy_bytes(bytes))
    reject(what + " size " + std::to_string(bytes) + " is not a non-zero multiple of 16 within 32 bits");
  if (with_mbarrier && !valid_tx_bytes(bytes))
    reject(what + " size " + std::to_string(bytes) + " exceeds the tx-count limit " + std::to_string(max_tx_count) +
           " of one mbarrier phase");
  const auto s = reinterpret_cast<uintptr_t>(src), d = reinterpret_cast<uintptr_t>(dst);
  if (s % bulk_copy_alignment != 0) reject(what + " source address " + detail::hex(s) + " is not 16-byte aligned");
  if (d % bulk_copy_alignment != 0) reject(what + " destination address " + detail::hex(d) + " is not 16-byte aligned");
}

// A named barrier: id 0..15, thread count a multiple of 32 in 32..1024.
inline void check_named_barrier(uint64_t id, uint64_t threads) {
  if (!valid_named_barrier_id(id))
    reject("named barrier id " + std::to_string(id) + " is outside 0.." + std::to_string(named_barrier_count - 1));
  if (!valid_named_barrier_threads(threads))
    reject("named barrier thread count " + std::to_string(threads) + " is not a multiple of 32 in 32..1024");
}

// A setmaxnreg register count: 24..256, a multiple of 8.
inline void check_setmaxnreg(uint64_t regs) {
  if (!valid_setmaxnreg(regs))
    reject("setmaxnreg count " + std::to_string(regs) + " is not a multiple of 8 in 24..256");
}

// Threads per block: 1..1024.
inline void check_block_threads(uint64_t threads) {
  if (threads == 0 || threads > max_threads_per_block)
    reject("block of " + std::to_string(threads) + " threads is outside 1.." + std::to_string(max_threads_per_block));
}

}  // namespace hopper::limits
