// The hazard lab's kernels (kernels/hazard_lab/hazard_lab.cuh) on the model:
// the very bodies the GPU runs (kernels/hazard_lab/hazard_lab_body.hpp), instantiated with the model's
// target, one task per thread of 128-thread blocks. Where the GPU can only count what it happened
// to see, the model must report every unprotected case, as the hazard it demonstrates, in every
// seed, naming the buffer and the CTA; and every protected case must run clean with the data the
// kernels' own checks expect (their counters find no failure). A planted fault proves that those
// counters count, through the model as on the GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "kernels/hazard_lab/hazard_lab_body.hpp"

using namespace hopper::model;
namespace hl = hopper::kernels::hazard_lab;

namespace {

enum class lab_case {
  raw_proxy_bulk_store,
  raw_proxy_dsmem_copy,
  war_refill_before_release,
  war_store_source_reuse,
  release_acquire_mbarrier,
};

const char* name_of(lab_case c) {
  switch (c) {
    case lab_case::raw_proxy_bulk_store:
      return "raw_proxy_bulk_store";
    case lab_case::raw_proxy_dsmem_copy:
      return "raw_proxy_dsmem_copy";
    case lab_case::war_refill_before_release:
      return "war_refill_before_release";
    case lab_case::war_store_source_reuse:
      return "war_store_source_reuse";
    case lab_case::release_acquire_mbarrier:
      return "release_acquire_mbarrier";
  }
  return "?";
}

// What hazard_lab::config sets on the GPU, at the model's scale (the GPU runs 264 blocks x 256
// runs of 4 KiB tiles).
struct lab_config {
  bool protect = true;
  int blocks = 2;          // 2 CTAs: one cluster of 2 for the DSMEM case
  int runs = 3;            // a WAR on reuse needs a second run; a third reuses parity 0
  int tile_bytes = 256;    // 64 words: half the block writes one word each
  int consumer_delay = 0;  // war_refill: clock64 polls between a consumer's reads
  bool plant_fault = false;
};

// The mbarrier objects of each kernel, as one cta_shared object per CTA (the GPU kernels declare
// each as its own __shared__ variable; the bodies take references to them).
struct landed_slots {
  mbarrier_slot landed;
};
struct refill_slots {
  mbarrier_slot full, empty, refilled;
};
struct flag_slots {
  mbarrier_slot flag;
};

// One case run on the model: the report, if any, and else what the kernels' counters found.
struct lab_run {
  bool clean = true;
  error_kind kind = error_kind::api_misuse;
  std::string message;
  uint64_t trials = 0, words = 0;
  uint64_t failures = 0, wrong_words = 0;
  uint64_t steps = 0;  // scheduler steps of the case's kernel
};

constexpr uint32_t kBlock = uint32_t(hl::kThreads);

// The trial data's seed, per model seed (hazard_lab::config::seed on the GPU).
uint64_t data_seed(uint64_t seed) { return 0x5eed000000ull ^ (seed * 0x100000001b3ull); }

buffer& make_counters(world& w) { return w.make_global("counters", sizeof(hl::counters)); }  // zeroed

void add_counters(const buffer& b, lab_run& r) {
  hl::counters c{};
  std::memcpy(&c, b.host_data(), sizeof c);
  r.failures += c.failed_trials;
  r.wrong_words += c.wrong_words;
}

// Runs `w`; a report ends the case (clean = false) and is kept.
bool run_world(world& w, lab_run& r) {
  try {
    w.run();
  } catch (const model_error& e) {
    r.clean = false;
    r.kind = e.kind();
    r.message = e.what();
  }
  r.steps = w.steps();
  return r.clean;
}

// check_slots, the second kernel of the bulk-store cases: a fresh world (the kernel boundary)
// holding the first kernel's output. A report here would be a fault of the checker itself.
void check_slots(uint64_t seed, const buffer& first_out, int runs, int words, uint64_t dseed, uint32_t expect_xor,
                 lab_run& r) {
  world w(run_options{seed});
  buffer& out = w.make_global("out", first_out.bytes());
  std::memcpy(out.host_data(), first_out.host_data(), out.bytes());
  buffer& cb = make_counters(w);
  const auto slots = uint32_t(out.bytes() / (size_t(words) * 4u));
  launch(w, {slots, kBlock, 1}, [&](target& t) {
    hl::check_slots_body(t, gmem<const uint32_t>(out), runs, words, dseed, expect_xor, gmem<hl::counters>(cb));
  });
  lab_run check;
  if (!run_world(w, check)) {
    ADD_FAILURE() << "check_slots on the model reported: " << check.message;
    return;
  }
  add_counters(cb, r);
}

// One case, as hazard_lab::run launches it, on the model with scheduler seed `seed` (or, under
// explore_por, the steps `chooser` picks).
lab_run run_case(lab_case c, const lab_config& k, uint64_t seed, step_chooser* chooser = nullptr) {
  run_options opt{seed};
  opt.chooser = chooser;
  world w(opt);
  lab_run r;
  const int words = k.tile_bytes / 4;
  const size_t tile = size_t(k.tile_bytes);
  const uint64_t dseed = data_seed(seed);
  const uint32_t expect_xor = k.plant_fault ? 0xFFFFFFFFu : 0u;
  const auto blocks = uint32_t(k.blocks);
  r.trials = uint64_t(c == lab_case::raw_proxy_dsmem_copy ? k.blocks / 2 : k.blocks) * uint64_t(k.runs);
  r.words = uint64_t(words);
  switch (c) {
    case lab_case::raw_proxy_bulk_store:
    case lab_case::war_store_source_reuse: {
      buffer& out = w.make_global("out", size_t(k.blocks) * size_t(k.runs) * tile);
      std::memset(out.host_data(), 0xA5, out.bytes());  // poison, as on the GPU
      launch(w, {blocks, kBlock, 1}, [&](target& t) {
        const auto s = shared_buffer(t, "tile", 1, tile).as<uint32_t>();
        const gmem<uint32_t> o(out);
        if (c == lab_case::raw_proxy_bulk_store) {
          if (k.protect)
            hl::raw_proxy_bulk_store_body<target, true>(t, s, o, k.runs, words, dseed);
          else
            hl::raw_proxy_bulk_store_body<target, false>(t, s, o, k.runs, words, dseed);
        } else {
          if (k.protect)
            hl::war_store_source_reuse_body<target, true>(t, s, o, k.runs, words, dseed);
          else
            hl::war_store_source_reuse_body<target, false>(t, s, o, k.runs, words, dseed);
        }
      });
      if (run_world(w, r)) check_slots(seed, out, k.runs, words, dseed, expect_xor, r);
      return r;
    }
    case lab_case::raw_proxy_dsmem_copy: {
      buffer& out = w.make_global("out", size_t(k.blocks / 2) * size_t(k.runs) * tile);
      std::memset(out.host_data(), 0xA5, out.bytes());
      launch(w, {blocks, kBlock, 2}, [&](target& t) {
        const auto s = shared_buffer(t, "smem", 1, 2 * tile).as<uint32_t>();  // tile, then inbox
        auto& b = cta_shared<landed_slots>(t, "barriers");
        const gmem<uint32_t> o(out);
        if (k.protect)
          hl::raw_proxy_dsmem_copy_body<target, true>(t, s, {b.landed}, o, k.runs, words, dseed);
        else
          hl::raw_proxy_dsmem_copy_body<target, false>(t, s, {b.landed}, o, k.runs, words, dseed);
      });
      if (run_world(w, r)) check_slots(seed, out, k.runs, words, dseed, expect_xor, r);
      return r;
    }
    case lab_case::war_refill_before_release: {
      // first[] = pattern(seed, block, 0, i), refill[] = its complement: every word differs.
      buffer& first = w.make_global("first", size_t(k.blocks) * tile);
      buffer& refill = w.make_global("refill", size_t(k.blocks) * tile);
      for (int b = 0; b < k.blocks; ++b)
        for (int i = 0; i < words; ++i) {
          const uint32_t v = hl::pattern(dseed, uint32_t(b), 0, uint32_t(i));
          const uint32_t nv = ~v;
          std::memcpy(first.host_data() + (size_t(b) * size_t(words) + size_t(i)) * 4, &v, 4);
          std::memcpy(refill.host_data() + (size_t(b) * size_t(words) + size_t(i)) * 4, &nv, 4);
        }
      buffer& cb = make_counters(w);
      // The consumers expect first[] ^ expect_xor: for a planted fault that is refill[].
      buffer& reference = k.plant_fault ? refill : first;
      launch(w, {blocks, kBlock, 1}, [&](target& t) {
        const auto s = shared_buffer(t, "stage", 1, tile).as<uint32_t>();
        auto& b = cta_shared<refill_slots>(t, "barriers");
        const gmem<const uint32_t> a(first), f(refill), ref(reference);
        const gmem<hl::counters> cs(cb);
        if (k.protect)
          hl::war_refill_before_release_body<target, true>(t, s, {b.full, b.empty, b.refilled}, a, f, ref, k.runs,
                                                           words, k.consumer_delay, cs);
        else
          hl::war_refill_before_release_body<target, false>(t, s, {b.full, b.empty, b.refilled}, a, f, ref, k.runs,
                                                            words, k.consumer_delay, cs);
      });
      if (run_world(w, r)) add_counters(cb, r);
      return r;
    }
    case lab_case::release_acquire_mbarrier: {
      buffer& cb = make_counters(w);
      launch(w, {blocks, kBlock, 1}, [&](target& t) {
        const auto s = shared_buffer(t, "data", 1, tile).as<uint32_t>();
        auto& b = cta_shared<flag_slots>(t, "barriers");
        const gmem<hl::counters> cs(cb);
        if (k.protect)
          hl::release_acquire_mbarrier_body<target, true>(t, s, {b.flag}, k.runs, words, dseed, expect_xor, cs);
        else
          hl::release_acquire_mbarrier_body<target, false>(t, s, {b.flag}, k.runs, words, dseed, expect_xor, cs);
      });
      if (run_world(w, r)) add_counters(cb, r);
      return r;
    }
  }
  ADD_FAILURE() << "unknown case";
  return r;
}

constexpr uint64_t kSeeds = 100;  // scheduler seeds per variant

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Protected: clean in every seed, every trial's data as the kernels' checks expect.
void expect_clean(lab_case c, lab_config k) {
  k.protect = true;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t steps = 0;
  for (uint64_t s = 1; s <= kSeeds; ++s) {
    const lab_run r = run_case(c, k, s);
    steps += r.steps;
    ASSERT_TRUE(r.clean) << name_of(c) << " with its protection, seed " << s << ": " << r.message;
    EXPECT_EQ(r.failures, 0u) << name_of(c) << " with its protection, seed " << s << ": failed trials";
    EXPECT_EQ(r.wrong_words, 0u) << name_of(c) << " with its protection, seed " << s << ": wrong words";
  }
  std::printf("SUMMARY hazard_model %s protected: %llu/%llu seeds clean, 0 failed trials (%.2f s, %llu steps)\n",
              name_of(c), (unsigned long long)kSeeds, (unsigned long long)kSeeds, seconds_since(t0),
              (unsigned long long)steps);
}

// The number after the first "of CTA " in `m` (-1: none).
int cta_named(const std::string& m) {
  const auto at = m.find("of CTA ");
  return at == std::string::npos ? -1 : std::atoi(m.c_str() + at + 7);
}

// Unprotected: every seed reports `kind`, on shared buffer `buf` of one of `ctas`, with `words`.
void expect_flagged_always(lab_case c, lab_config k, error_kind kind, const std::string& buf,
                           const std::vector<int>& ctas, const std::vector<std::string>& words) {
  k.protect = false;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t flagged = 0;
  std::string first;
  for (uint64_t s = 1; s <= kSeeds; ++s) {
    const lab_run r = run_case(c, k, s);
    if (r.clean) {
      ADD_FAILURE() << name_of(c) << " unprotected, seed " << s << ": not flagged (" << r.failures << " failed trials)";
      continue;
    }
    ++flagged;
    if (first.empty()) first = r.message;
    EXPECT_EQ(r.kind, kind) << name_of(c) << " unprotected, seed " << s << ": " << r.message;
    const std::string at = "shared buffer '" + buf + "' of CTA ";
    EXPECT_NE(r.message.find(at), std::string::npos) << "missing \"" << at << "\" in: " << r.message;
    const int cta = cta_named(r.message);
    bool cta_ok = false;
    for (int x : ctas) cta_ok = cta_ok || x == cta;
    EXPECT_TRUE(cta_ok) << name_of(c) << ": CTA " << cta << " named in: " << r.message;
    for (const auto& wd : words)
      EXPECT_NE(r.message.find(wd), std::string::npos) << "missing '" << wd << "' in: " << r.message;
  }
  std::printf("SUMMARY hazard_model %s unprotected %llu/%llu seeds flagged (%.2f s): %s\n", name_of(c),
              (unsigned long long)flagged, (unsigned long long)kSeeds, seconds_since(t0), first.c_str());
}

// Protected with a planted fault: every trial failed exactly once and every word counted wrong.
void expect_planted_fault_counted(lab_case c, lab_config k) {
  k.protect = true;
  k.plant_fault = true;
  for (uint64_t s = 1; s <= 3; ++s) {
    const lab_run r = run_case(c, k, s);
    ASSERT_TRUE(r.clean) << name_of(c) << " planted fault, seed " << s << ": " << r.message;
    EXPECT_EQ(r.failures, r.trials) << name_of(c) << " planted fault, seed " << s;
    EXPECT_EQ(r.wrong_words, r.trials * r.words) << name_of(c) << " planted fault, seed " << s;
  }
}

TEST(HazardLabModel, RawAcrossProxiesBulkStore) {
  const lab_config k;
  expect_clean(lab_case::raw_proxy_bulk_store, k);
  expect_flagged_always(lab_case::raw_proxy_bulk_store, k, error_kind::raw_hazard, "tile", {0, 1},
                        {"fence.proxy.async", "bulk store 'tile'", "(async proxy) reads the generic write"});
  expect_planted_fault_counted(lab_case::raw_proxy_bulk_store, k);
}

TEST(HazardLabModel, RawAcrossProxiesDsmemCopy) {
  const lab_config k;
  expect_clean(lab_case::raw_proxy_dsmem_copy, k);
  // The source tile is in CTA 0 of the cluster; the copy lands in CTA 1's inbox.
  expect_flagged_always(
      lab_case::raw_proxy_dsmem_copy, k, error_kind::raw_hazard, "smem", {0},
      {"fence.proxy.async", "bulk copy 'smem'+0 (CTA 0) -> 'smem'+" + std::to_string(k.tile_bytes) + " (CTA 1)"});
  expect_planted_fault_counted(lab_case::raw_proxy_dsmem_copy, k);
}

TEST(HazardLabModel, WarRefillBeforeConsumersRelease) {
  const lab_config k;
  expect_clean(lab_case::war_refill_before_release, k);
  // The refill is issued while consumers have read the stage and not released it.
  expect_flagged_always(lab_case::war_refill_before_release, k, error_kind::war_hazard, "stage", {0, 1},
                        {"bulk copy 'refill'", "may still be reading it", "released after its last read"});
  expect_planted_fault_counted(lab_case::war_refill_before_release, k);
}

TEST(HazardLabModel, WarRefillWithConsumerWork) {
  // Consumers that poll clock64 between reads (the GPU test's 200 cycles of work per word) yield
  // to the scheduler there, so the refill may land in the middle of their reads: still a WAR
  // first, when the refill is issued.
  lab_config k;
  k.consumer_delay = 3;
  k.tile_bytes = 512;  // 128 words: more than one read per consumer
  expect_clean(lab_case::war_refill_before_release, k);
  expect_flagged_always(lab_case::war_refill_before_release, k, error_kind::war_hazard, "stage", {0, 1},
                        {"bulk copy 'refill'", "may still be reading it"});
}

TEST(HazardLabModel, WarBulkStoreSourceReusedBeforeWaitGroupRead) {
  const lab_config k;
  expect_clean(lab_case::war_store_source_reuse, k);
  expect_flagged_always(lab_case::war_store_source_reuse, k, error_kind::war_hazard, "tile", {0, 1},
                        {"generic write", "bulk store 'tile'", "wait_group.read"});
  expect_planted_fault_counted(lab_case::war_store_source_reuse, k);
}

TEST(HazardLabModel, ReleaseAcquireThroughMbarrier) {
  const lab_config k;
  expect_clean(lab_case::release_acquire_mbarrier, k);
  // A relaxed arrive releases nothing and a relaxed wait acquires nothing: warp 2's reads are not
  // ordered after warp 1's writes.
  expect_flagged_always(lab_case::release_acquire_mbarrier, k, error_kind::raw_hazard, "data", {0, 1},
                        {"(warp 2 lane", "reads the write of task 'thread", "(warp 1 lane", "no synchronisation"});
  expect_planted_fault_counted(lab_case::release_acquire_mbarrier, k);
}

// Every schedule, up to the order of independent steps (explore_por), of each case with two
// trials (a reuse), in one CTA (two for the DSMEM copy, a cluster): protected, clean in every
// class with every trial's data right; unprotected, reported as the hazard its seeds report.
exploration explore_case(lab_case c, lab_config k, uint64_t& failed_trials, uint64_t max_runs) {
  k.runs = 2;
  k.blocks = c == lab_case::raw_proxy_dsmem_copy ? 2 : 1;
  failed_trials = 0;
  return explore_por(
      [&](const run_options& o) {
        const lab_run r = run_case(c, k, 1, o.chooser);
        outcome out;
        out.ok = r.clean;
        out.kind = r.kind;
        out.message = r.message;
        if (r.clean && !o.chooser->ended_early()) failed_trials += r.failures;
        return out;
      },
      max_runs);
}

TEST(HazardLabModel, EveryScheduleOfEachCase) {
  struct expected {
    lab_case c;
    error_kind kind;
  };
  for (const expected& x : {expected{lab_case::raw_proxy_bulk_store, error_kind::raw_hazard},
                            expected{lab_case::raw_proxy_dsmem_copy, error_kind::raw_hazard},
                            expected{lab_case::war_refill_before_release, error_kind::war_hazard},
                            expected{lab_case::war_store_source_reuse, error_kind::war_hazard}}) {
    lab_config k;
    k.protect = true;
    uint64_t failed = 0;
    const exploration ok = explore_case(x.c, k, failed, 20000);
    EXPECT_TRUE(ok.complete) << name_of(x.c) << ": " << ok.summary();
    EXPECT_TRUE(ok.clean()) << name_of(x.c) << ": " << ok.summary();
    EXPECT_EQ(failed, 0u) << name_of(x.c) << ": failed trials in a clean class";
    k.protect = false;
    // Unprotected, a run ends at its report, so the classes are those of the prefixes up to it:
    // the first 20 runs of the exploration, each reported.
    const exploration bad = explore_case(x.c, k, failed, 20);
    EXPECT_EQ(bad.failures, bad.runs) << name_of(x.c) << " unprotected: " << bad.summary();
    for (const outcome& o : bad.failed) EXPECT_EQ(o.kind, x.kind) << o.message;
    std::printf(
        "SUMMARY hazard_model %s: protected clean in all %llu schedule classes; unprotected reported in "
        "%llu of %llu runs%s\n",
        name_of(x.c), (unsigned long long)ok.classes(), (unsigned long long)bad.failures, (unsigned long long)bad.runs,
        bad.complete ? " (every class)" : "");
  }
}

}  // namespace
