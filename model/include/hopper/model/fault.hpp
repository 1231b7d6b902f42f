// Faults the model's target injects into a kernel at run time (run_options::faults): each changes
// one kind of operation, where the barrier it acts on (or the hook, or the instruction's PTX
// spelling for a fence or a wait) has a name that starts with `where` (empty: everywhere). So one build of a kernel
// runs every planted bug, its source carries none, and the GPU build is the kernel itself: a hook the kernel asks about
// (target::planted) is constant false on the device target.
//
//   run_options o;
//   o.faults = {{fault_kind::expect_tx_short, "K full"}};   // every K full[s] armed 16 bytes short
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hopper::model {

enum class fault_kind {
  expect_tx_short,      // mbarrier.arrive.expect_tx on the barrier (local or remote) arms 16 bytes fewer
  parity_flipped,       // waits on the barrier wait for the other parity (a wrong initial parity)
  arrive_dropped,       // mbarrier.arrive{_drop} (every form but expect_tx, local, remote or a warp's
                        // lanes on their CTAs) on the barrier does nothing
  proxy_fence_dropped,  // fence.proxy.async (every form) does nothing
  wgmma_wait_short,     // wgmma.wait_group N leaves N + 1 groups in flight (one fewer retired)
  bar_arrive_dropped,   // bar.arrive on the named barrier "bar <id>" does nothing
  bulk_wait_dropped,    // cp.async.bulk.wait_group{.read} (the spelling starts with `where`) does nothing
  kernel_hook,          // target::planted("<where>") is true: a fault only the kernel can express
};

inline const char* to_string(fault_kind k) {
  switch (k) {
    case fault_kind::expect_tx_short:
      return "expect_tx_short";
    case fault_kind::parity_flipped:
      return "parity_flipped";
    case fault_kind::arrive_dropped:
      return "arrive_dropped";
    case fault_kind::proxy_fence_dropped:
      return "proxy_fence_dropped";
    case fault_kind::wgmma_wait_short:
      return "wgmma_wait_short";
    case fault_kind::bar_arrive_dropped:
      return "bar_arrive_dropped";
    case fault_kind::bulk_wait_dropped:
      return "bulk_wait_dropped";
    case fault_kind::kernel_hook:
      return "kernel_hook";
  }
  return "?";
}

struct fault {
  fault_kind kind;
  std::string where;  // a prefix of the barrier's (or hook's) name; empty: every one
};

// Whether `faults` plants `kind` on an object named `name`.
inline bool planted(const std::vector<fault>& faults, fault_kind kind, std::string_view name = {}) {
  for (const fault& f : faults)
    if (f.kind == kind && name.substr(0, f.where.size()) == f.where) return true;
  return false;
}

}  // namespace hopper::model
