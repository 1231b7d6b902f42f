// The streaming program of apps/pipeline_stream.cuh, on the executable model: one cluster of CTAs,
// a producer task and consumer-warp tasks per CTA, hopper::pipeline over the model's barriers,
// cp.async.bulk (multicast in clusters) from a global source, every consumer reading and checking
// every tile. Mutations plant the classic pipeline bugs, so tests can show that the model reports
// them. Used by tests/host/pipeline_model.cpp and by the showcase when there is no GPU.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/pipeline_backend.hpp"
#include "hopper/pipeline.cuh"

namespace hopper::apps {

using namespace hopper::model;

enum class mutant {
  none,
  producer_parity_0,    // the producer starts on parity 0, as if every stage were full
  consumer_parity_1,    // the consumer starts on parity 1: reads before the first copy lands
  skip_release,         // one consumer warp skips one release
  empty_count_minus_1,  // empty barrier expects one consumer warp fewer than there are
  empty_count_plus_1,   // ... one more
  bytes_minus_16,       // full barrier armed with 16 bytes fewer than the copies deliver
  bytes_plus_16,        // ... 16 more
  no_drain,             // the producer exits without draining (peers still arrive)
  release_before_read,  // a consumer releases the stage before its last read of it
  relaxed_release,      // consumers read with generic loads but release with .relaxed
};

inline const char* name(mutant m) {
  switch (m) {
    case mutant::none: return "none";
    case mutant::producer_parity_0: return "producer_parity_0";
    case mutant::consumer_parity_1: return "consumer_parity_1";
    case mutant::skip_release: return "skip_release";
    case mutant::empty_count_minus_1: return "empty_count_minus_1";
    case mutant::empty_count_plus_1: return "empty_count_plus_1";
    case mutant::bytes_minus_16: return "bytes_minus_16";
    case mutant::bytes_plus_16: return "bytes_plus_16";
    case mutant::no_drain: return "no_drain";
    case mutant::release_before_read: return "release_before_read";
    case mutant::relaxed_release: return "relaxed_release";
  }
  return "?";
}

struct host_case {
  uint32_t stages = 2, warpgroups = 1, cluster = 1, tiles = 4;
  uint32_t stage_bytes = 64;
  bool multicast = false;
  uint32_t warps_per_group = 4;  // consumer warps per warpgroup (tasks)
  uint64_t seed = 1;
  mutant m = mutant::none;
};

inline std::string describe(const host_case& c) {
  return "stages=" + std::to_string(c.stages) + " warpgroups=" + std::to_string(c.warpgroups) + "x" +
         std::to_string(c.warps_per_group) + " cluster=" + std::to_string(c.cluster) +
         (c.multicast ? " multicast" : "") + " tiles=" + std::to_string(c.tiles) +
         " stage_bytes=" + std::to_string(c.stage_bytes) + " seed=" + std::to_string(c.seed) +
         " mutant=" + name(c.m);
}

// The word at position i of source tile t: distinct across tiles and positions.
inline uint32_t word_of(size_t tile, size_t i) {
  uint64_t z = (uint64_t(tile) << 32) ^ (i * 0x9E3779B97F4A7C15ull) ^ 0x5bd1e995u;
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return uint32_t(z ^ (z >> 29));
}

struct stream_outcome {
  bool reported = false;
  error_kind kind{};
  std::string message;
  uint64_t bad_words = 0, checked_words = 0;
  std::vector<hopper::trace::record> timeline;
};

// One run of the streaming program (the model twin of apps/pipeline_stream.cuh).
template <int S>
stream_outcome run_once(const host_case& c, bool keep_timeline = false) {
  using pipe_t = hopper::pipeline<S, pipeline_backend>;
  run_options o;
  o.seed = c.seed;
  stream_outcome out;
  world w(o);
  const uint32_t ctas = c.cluster;  // one cluster: its CTAs are the interesting part
  const uint32_t cw = c.warpgroups * c.warps_per_group;
  const bool mc = c.multicast && c.cluster > 1;
  const uint32_t slice = mc ? c.stage_bytes / c.cluster : c.stage_bytes;
  const size_t words = c.stage_bytes / 4;
  const size_t src_tiles = mc ? c.tiles : size_t(ctas) * c.tiles;

  buffer& src = w.make_global("src", src_tiles * c.stage_bytes, 16);
  for (size_t t = 0; t < src_tiles; ++t)
    for (size_t i = 0; i < words; ++i) {
      const uint32_t v = word_of(t, i);
      std::memcpy(src.host_data() + t * c.stage_bytes + i * 4, &v, 4);
    }

  std::vector<typename pipe_t::storage> st(ctas);
  std::vector<buffer*> stage_buf(ctas);
  pipeline_host host;
  host.w = &w;
  host.cluster_size = c.cluster;
  host.timeline = keep_timeline ? &out.timeline : nullptr;
  for (uint32_t b = 0; b < ctas; ++b) {
    for (int s = 0; s < S; ++s) {
      st[b].full[s] = &w.make_barrier("full[" + std::to_string(s) + "]", int(b));
      st[b].empty[s] = &w.make_barrier("empty[" + std::to_string(s) + "]", int(b));
    }
    host.storage.push_back(&st[b].full[0]);
    stage_buf[b] = &w.make_shared("stages", S, c.stage_bytes, int(b), slice);
    host.cta_sync.push_back(&w.make_named_barrier("bar.sync 0 of CTA " + std::to_string(b), 1 + cw));
  }
  host.cluster_sync.push_back(&w.make_named_barrier("barrier.cluster", ctas * (1 + cw)));

  hopper::pipeline_params p{cw, c.cluster, mc};
  if (c.m == mutant::empty_count_minus_1) p.consumer_warps = cw - 1;
  if (c.m == mutant::empty_count_plus_1) p.consumer_warps = cw + 1;
  uint64_t& bad = out.bad_words;
  uint64_t& checked = out.checked_words;

  for (uint32_t b = 0; b < ctas; ++b) {
    const uint32_t rank = b % c.cluster;
    w.spawn("producer", [&, b, rank] {
      pipeline_backend be(host, int(b), 0, true);
      pipe_t pipe = pipe_t::init(st[b], p, be);
      auto s = c.m == mutant::producer_parity_0 ? typename pipe_t::state(0, hopper::parity(0)) : pipe.producer_start();
      for (; s.iter() < c.tiles; ++s) {
        uint32_t bytes = c.stage_bytes;
        if (c.m == mutant::bytes_minus_16 && s.iter() == c.tiles / 2) bytes -= 16;
        if (c.m == mutant::bytes_plus_16 && s.iter() == c.tiles / 2) bytes += 16;
        pipe.acquire(s, bytes);
        const size_t off = size_t(s.index()) * c.stage_bytes;
        if (mc) {
          std::vector<world::target> all;
          for (uint32_t r = 0; r < c.cluster; ++r) {
            const uint32_t peer = b - rank + r;
            all.push_back({stage_buf[peer], st[peer].full[s.index()]});
          }
          w.cp_async_bulk_shared_global_multicast(all, off + size_t(rank) * slice, src,
                                                  size_t(s.iter()) * c.stage_bytes + size_t(rank) * slice, slice);
        } else {
          w.cp_async_bulk_shared_global(*stage_buf[b], off, src, (size_t(b) * c.tiles + s.iter()) * c.stage_bytes,
                                        c.stage_bytes, *pipe.full(s));
        }
        pipe.commit(s);
      }
      if (c.m != mutant::no_drain) pipe.drain(s);
    }, int(b));
    for (uint32_t k = 0; k < cw; ++k) {
      w.spawn("consumer " + std::to_string(k), [&, b, k] {
        pipeline_backend be(host, int(b), 1 + k, false);
        pipe_t pipe = pipe_t::init(st[b], p, be);
        auto s = c.m == mutant::consumer_parity_1 ? typename pipe_t::state(0, hopper::parity(1)) : pipe.consumer_start();
        std::vector<uint32_t> got(words);
        for (; s.iter() < c.tiles; ++s) {
          pipe.wait(s);
          const size_t off = size_t(s.index()) * c.stage_bytes;
          const bool early = c.m == mutant::release_before_read && k == 0 && s.iter() == 0;
          if (early) pipe.release(s);
          stage_buf[b]->read(off, got.data(), c.stage_bytes);
          const size_t tile = mc ? s.iter() : size_t(b) * c.tiles + s.iter();
          for (size_t i = 0; i < words; ++i) bad += got[i] != word_of(tile, i);
          checked += words;
          const bool skip = c.m == mutant::skip_release && k == cw - 1 && s.iter() == c.tiles / 2;
          if (!early && !skip) {
            if (c.m == mutant::relaxed_release)
              pipe.template release<hopper::release_sem::relaxed>(s);  // nothing orders the reads
            else
              pipe.release(s);
          }
        }
      }, int(b));
    }
  }
  try {
    w.run();
  } catch (const model_error& e) {
    out.reported = true;
    out.kind = e.kind();
    out.message = e.what();
  }
  return out;
}

inline stream_outcome run_case(const host_case& c, bool keep_timeline = false) {
  switch (c.stages) {
    case 1: return run_once<1>(c, keep_timeline);
    case 2: return run_once<2>(c, keep_timeline);
    case 3: return run_once<3>(c, keep_timeline);
    case 4: return run_once<4>(c, keep_timeline);
    case 5: return run_once<5>(c, keep_timeline);
    case 6: return run_once<6>(c, keep_timeline);
    case 7: return run_once<7>(c, keep_timeline);
    case 8: return run_once<8>(c, keep_timeline);
    case 9: return run_once<9>(c, keep_timeline);
    case 10: return run_once<10>(c, keep_timeline);
  }
  throw std::invalid_argument("stages = " + std::to_string(c.stages) + " not instantiated (1..10)");
}

}  // namespace hopper::apps
