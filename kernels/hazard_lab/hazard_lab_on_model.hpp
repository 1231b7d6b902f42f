// The hazard lab's cases run on the executable model from the plan the CUDA launcher runs
// (kernels/hazard_lab/hazard_lab_plan.hpp): the very bodies the GPU runs
// (kernels/hazard_lab/hazard_lab_body.hpp) instantiated with the model's target, with the plan's
// grid, cluster, shared memory and buffers, one task per thread. A run ends at the model's first
// report, which is kept; a clean run returns what the kernels' own counters found.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "kernels/hazard_lab/hazard_lab_body.hpp"
#include "kernels/hazard_lab/hazard_lab_plan.hpp"

namespace hopper::kernels::hazard_lab::on_model {

namespace hm = hopper::model;

// One case run on the model: the report, if any, and else what the kernels' counters found.
struct lab_run {
  bool clean = true;
  hm::error_kind kind = hm::error_kind::api_misuse;
  std::string message;
  result counted{};    // trials and words as planned; failures and wrong words as counted
  uint64_t steps = 0;  // scheduler steps of the case's kernel
};

namespace detail {

// The mbarrier objects of each kernel, as one cta_shared object per CTA (the GPU kernels declare
// each as its own __shared__ variable; the bodies take references to them).
struct landed_slots {
  hm::mbarrier_slot landed;
};
struct refill_slots {
  hm::mbarrier_slot full, empty, refilled;
};
struct flag_slots {
  hm::mbarrier_slot flag;
};

inline hm::buffer& make_counters(hm::world& w) { return w.make_global("counters", sizeof(counters)); }  // zeroed

inline void add_counters(const hm::buffer& b, lab_run& r) {
  counters c{};
  std::memcpy(&c, b.host_data(), sizeof c);
  r.counted.failures += c.failed_trials;
  r.counted.wrong_words += c.wrong_words;
}

// Runs `w`; a report ends the case (clean = false) and is kept.
inline bool run_world(hm::world& w, lab_run& r) {
  try {
    w.run();
  } catch (const hm::model_error& e) {
    r.clean = false;
    r.kind = e.kind();
    r.message = e.what();
  }
  r.steps = w.steps();
  return r.clean;
}

// check_slots, the second kernel of the cases checked after: a fresh world (the kernel boundary)
// holding the first kernel's output. A report here is a fault of the checker itself, kept as the
// run's report.
inline void check_slots(const plan& p, uint64_t seed, const hm::buffer& first_out, lab_run& r) {
  hm::world w(hm::run_options{seed});
  hm::buffer& out = w.make_global("out", first_out.bytes());
  std::memcpy(out.host_data(), first_out.host_data(), out.bytes());
  hm::buffer& cb = make_counters(w);
  hm::launch(w, {p.check_grid, uint32_t(kThreads), 1}, [&](hm::target& t) {
    check_slots_body(t, hm::gmem<const uint32_t>(out), p.k.runs, p.words, p.k.seed, p.expect_xor,
                     hm::gmem<counters>(cb));
  });
  lab_run check;
  if (!run_world(w, check)) {
    r.clean = false;
    r.kind = check.kind;
    r.message = "check_slots on the model reported: " + check.message;
    return;
  }
  add_counters(cb, r);
}

// The case's kernel, Protect as the plan's config says.
template <bool Protect>
void launch_case(hm::world& w, const plan& p, hm::buffer* out, hm::buffer* first, hm::buffer* refill,
                 hm::buffer* reference, hm::buffer* cb) {
  const hm::launch_shape shape{p.grid, p.block, p.cluster};
  const int runs = p.k.runs, words = p.words;
  switch (p.c) {
    case hazard_case::raw_proxy_bulk_store:
    case hazard_case::war_store_source_reuse:
      hm::launch(w, shape, [&p, out, runs, words](hm::target& t) {
        const auto s = hm::shared_buffer(t, "tile", 1, p.smem_bytes).as<uint32_t>();
        const hm::gmem<uint32_t> o(*out);
        if (p.c == hazard_case::raw_proxy_bulk_store)
          raw_proxy_bulk_store_body<hm::target, Protect>(t, s, o, runs, words, p.k.seed);
        else
          war_store_source_reuse_body<hm::target, Protect>(t, s, o, runs, words, p.k.seed);
      });
      return;
    case hazard_case::raw_proxy_dsmem_copy:
      hm::launch(w, shape, [&p, out, runs, words](hm::target& t) {
        const auto s = hm::shared_buffer(t, "smem", 1, p.smem_bytes).as<uint32_t>();  // tile, then inbox
        auto& b = hm::cta_shared<landed_slots>(t, "barriers");
        raw_proxy_dsmem_copy_body<hm::target, Protect>(t, s, {b.landed}, hm::gmem<uint32_t>(*out), runs, words,
                                                       p.k.seed);
      });
      return;
    case hazard_case::war_refill_before_release:
      hm::launch(w, shape, [&p, first, refill, reference, cb, runs, words](hm::target& t) {
        const auto s = hm::shared_buffer(t, "stage", 1, p.smem_bytes).as<uint32_t>();
        auto& b = hm::cta_shared<refill_slots>(t, "barriers");
        war_refill_before_release_body<hm::target, Protect>(
            t, s, {b.full, b.empty, b.refilled}, hm::gmem<const uint32_t>(*first), hm::gmem<const uint32_t>(*refill),
            hm::gmem<const uint32_t>(*reference), runs, words, p.k.consumer_delay, hm::gmem<counters>(*cb));
      });
      return;
    case hazard_case::release_acquire_mbarrier:
      hm::launch(w, shape, [&p, cb, runs, words](hm::target& t) {
        const auto s = hm::shared_buffer(t, "data", 1, p.smem_bytes).as<uint32_t>();
        auto& b = hm::cta_shared<flag_slots>(t, "barriers");
        release_acquire_mbarrier_body<hm::target, Protect>(t, s, {b.flag}, runs, words, p.k.seed, p.expect_xor,
                                                           hm::gmem<counters>(*cb));
      });
      return;
  }
}

}  // namespace detail

// Runs plan `p` on the model, as hazard_lab::run launches it on the GPU, with scheduler options
// `o` (a seed, or explore_por's chooser). check_slots runs in a fresh world with o.seed.
inline lab_run run(const plan& p, const hm::run_options& o) {
  hm::world w(o);
  lab_run r;
  r.counted = p.empty_result();
  const bool after = p.checked_after();
  hm::buffer* out = after ? &w.make_global("out", p.out_bytes) : nullptr;
  hm::buffer* cb = nullptr;
  if (out != nullptr) std::memset(out->host_data(), out_poison, out->bytes());
  hm::buffer *first = nullptr, *refill = nullptr;
  if (p.src_bytes != 0) {
    first = &w.make_global("first", p.src_bytes);
    refill = &w.make_global("refill", p.src_bytes);
    std::vector<uint32_t> h(2 * p.src_bytes / 4);
    p.fill_sources(h.data(), h.data() + p.src_bytes / 4);
    std::memcpy(first->host_data(), h.data(), p.src_bytes);
    std::memcpy(refill->host_data(), h.data() + p.src_bytes / 4, p.src_bytes);
  }
  if (!after) cb = &detail::make_counters(w);
  // The consumers expect first[] ^ expect_xor: for a planted fault that is refill[].
  hm::buffer* reference = p.k.plant_fault ? refill : first;
  if (p.k.protect)
    detail::launch_case<true>(w, p, out, first, refill, reference, cb);
  else
    detail::launch_case<false>(w, p, out, first, refill, reference, cb);
  if (!detail::run_world(w, r)) return r;
  if (out != nullptr)
    detail::check_slots(p, o.seed, *out, r);
  else if (cb != nullptr)
    detail::add_counters(*cb, r);
  return r;
}

}  // namespace hopper::kernels::hazard_lab::on_model
