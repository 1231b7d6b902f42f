// Shared-window addresses of the model's shared buffers: what cvta.to.shared gives on the device,
// so that a kernel computes wgmma descriptors (and any other 32-bit shared address) the same way
// on both machines.
//
// Every shared buffer of a CTA gets an address in that CTA's window when it is created: the first
// at 1024 (sm_90 reserves the first 1 KiB of a CTA's shared memory for the system), each next one
// at the end of the previous one rounded up to 1024 bytes (the alignment of a 128-byte swizzle
// pattern, so that every buffer can hold TMA boxes and wgmma tiles of every swizzle). The bytes
// from 1024 to the end of the last buffer must fit the 227 KiB a CTA may have
// (limits::max_smem_per_block), or the creation is reported. Addresses follow creation order: a kernel that creates its
// buffers in program order gets the same window on every schedule. resolve() maps an address back to the buffer and
// offset under it, or reports the address when no buffer is there.
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hopper/model/error.hpp"
#include "hopper/model/memory.hpp"
#include "hopper/model/scheduler.hpp"
#include "hopper/objects/limits.hpp"

namespace hopper::model {

class shared_window {
 public:
  static constexpr uint32_t first_address = uint32_t(limits::reserved_smem_per_block);  // the system's
  static constexpr uint32_t alignment = 1024;                                           // a 128-byte swizzle pattern
  static constexpr uint32_t max_bytes = uint32_t(limits::max_smem_per_block);

  // Gives shared buffer `b` (of CTA b.cta()) the next address of its CTA's window.
  void place(buffer& b) {
    if (b.where() != space::shared) return;
    auto& w = ctas_[b.cta()];
    uint32_t at = first_address;
    if (!w.empty()) at = round_up(w.back().base + uint32_t(w.back().b->bytes()));
    const uint64_t end = uint64_t(at) + b.bytes();
    if (end - first_address > max_bytes) {
      std::string have;
      for (const auto& e : w) have += "\n  " + describe(e);
      scheduler::misuse(
          "shared buffer '" + b.name() + "' of CTA " + std::to_string(b.cta()) + " (" + std::to_string(b.bytes()) +
          " bytes, at " + hex(at) + ") does not fit in the CTA's " + "shared window: it would end at " +
          hex(uint32_t(end)) + ", " + std::to_string(end - first_address) + " bytes past " + hex(first_address) +
          ", and a CTA has at most " + std::to_string(max_bytes / 1024) + " KiB (" + std::to_string(max_bytes) +
          " bytes); buffers so far:" + (have.empty() ? std::string(" none") : have));
    }
    w.push_back({at, &b});
  }

  // The window address of byte `offset` of shared buffer `b`.
  uint32_t address(const buffer& b, size_t offset = 0) const {
    if (b.where() != space::shared)
      scheduler::misuse("the shared-window address of '" + b.name() + "', a global buffer");
    auto it = ctas_.find(b.cta());
    if (it != ctas_.end())
      for (const auto& e : it->second)
        if (e.b == &b) {
          if (offset > b.bytes())
            scheduler::misuse("the shared-window address of offset " + std::to_string(offset) + " of '" + b.name() +
                              "' (" + std::to_string(b.bytes()) + " bytes)");
          return e.base + uint32_t(offset);
        }
    scheduler::misuse("shared buffer '" + b.name() + "' has no place in the window of CTA " + std::to_string(b.cta()) +
                      " (made outside the world?)");
  }

  // The buffer of CTA `cta` under window address `addr` and the offset in it, or nullptr.
  std::pair<buffer*, size_t> find(int cta, uint32_t addr) const {
    auto it = ctas_.find(cta);
    if (it == ctas_.end()) return {nullptr, 0};
    for (const auto& e : it->second)
      if (addr >= e.base && addr - e.base < e.b->bytes()) return {e.b, size_t(addr - e.base)};
    return {nullptr, 0};
  }
  // The same, reporting `what` (the access, e.g. "wgmma.mma_async ... reads") when nothing is there:
  // a string, or a callable that builds it, called only then (a wgmma resolves every chunk of its
  // operands, and the description names the descriptor).
  template <class What>
  std::pair<buffer*, size_t> resolve(int cta, uint32_t addr, const What& what) const {
    auto r = find(cta, addr);
    if (r.first) return r;
    std::string access;
    if constexpr (std::is_invocable_v<const What&>)
      access = what();
    else
      access = what;
    std::string have;
    auto it = ctas_.find(cta);
    if (it != ctas_.end())
      for (const auto& e : it->second) have += "\n  " + describe(e);
    throw model_error(
        error_kind::undefined_behavior,
        access + " shared address " + hex(addr) + " of CTA " + std::to_string(cta) +
            ", where no shared buffer is; the CTA's buffers:" + (have.empty() ? std::string(" none") : have));
  }

  static std::string hex(uint32_t v) {
    char s[16];
    std::snprintf(s, sizeof s, "0x%05x", unsigned(v));
    return s;
  }

 private:
  struct entry {
    uint32_t base;
    buffer* b;
  };
  static uint32_t round_up(uint32_t a) { return (a + alignment - 1) / alignment * alignment; }
  static std::string describe(const entry& e) {
    return "'" + e.b->name() + "' at " + hex(e.base) + ".." + hex(e.base + uint32_t(e.b->bytes()) - 1);
  }
  std::map<int, std::vector<entry>> ctas_;
};

}  // namespace hopper::model
