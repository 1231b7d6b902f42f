// The pipeline timeline: one fixed-size record per event (acquire, issued, wait, release, ...),
// written per warp into a buffer, then turned into Chrome/Perfetto trace JSON on the host.
//
// The switch is the macro HOPPER_TRACE (define it to 1 before including, or with -DHOPPER_TRACE=1).
// When it is off, no record is written and no code is emitted for it: the pipeline tests
// `Backend::traced` with `if constexpr`, so the SASS of a kernel is the same as without tracing
// (tests/host/pipeline_trace_sass.cpp checks that). The host model writes the same records, so
// one writer and one PNG tool serve both.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include "hopper/ptx/special_registers.cuh"
#endif

#ifndef HOPPER_TRACE
#define HOPPER_TRACE 0
#endif

namespace hopper::trace {

// What happened. A *_begin/*_end pair is a span; issued and release are instants. The consumer's
// compute span is the time between its wait_end and its release of the same stage.
enum class event : uint8_t {
  acquire_begin = 0,  // producer starts waiting for an empty stage (its empty barrier)
  acquire_end = 1,    // the stage is free and its full barrier is armed with its bytes (expect_tx)
  issued = 2,         // the producer has issued the stage's copies (pipeline::issued)
  wait_begin = 3,     // consumer starts waiting for a full stage (try_wait.parity)
  wait_end = 4,       // the stage's bytes have landed and are visible (acquire)
  release = 5,        // consumer's last read is done; arrive on the empty barrier
  drain_begin = 6,    // producer tail: waits until every stage is released (no early exit)
  drain_end = 7,
};

// Short names used in the JSON and by tools/trace_png.py.
inline const char* name(event e) {
  switch (e) {
    case event::acquire_begin:
      return "acquire_begin";
    case event::acquire_end:
      return "acquire_end";
    case event::issued:
      return "issued";
    case event::wait_begin:
      return "wait_begin";
    case event::wait_end:
      return "wait_end";
    case event::release:
      return "release";
    case event::drain_begin:
      return "drain_begin";
    case event::drain_end:
      return "drain_end";
  }
  return "unknown";
}

// One event: 16 bytes so a warp writes it with one vector store.
struct record {
  uint64_t time_ns;  // %globaltimer on the GPU; the model's logical clock on the host
  uint16_t cta;      // linear CTA id in the grid
  uint8_t warp;      // warp index in its CTA
  uint8_t kind;      // trace::event
  uint8_t stage;     // stage index in the ring
  uint8_t role;      // 0 producer, 1 consumer
  uint16_t iter;     // iteration (low 16 bits)
};
static_assert(sizeof(record) == 16, "a trace record is 16 bytes");

// Where a kernel writes: `per_warp` records for each of `warps` warp slots; counts[w] is how many
// slot w wrote (it may exceed per_warp: the surplus is dropped and the host reports it).
struct sink {
  record* records = nullptr;
  uint32_t* counts = nullptr;
  uint32_t per_warp = 0;
  uint32_t warps = 0;
};

#if defined(__CUDACC__)
// Append one record to warp slot `slot` (called by one lane of the warp).
__device__ __forceinline__ void put(const sink& s, uint32_t slot, event e, uint32_t stage, uint32_t iter, uint32_t role,
                                    uint32_t cta, uint32_t warp) {
  if (s.records == nullptr || slot >= s.warps) return;
  const uint32_t n = s.counts[slot]++;  // one writer per slot: no atomic needed
  if (n >= s.per_warp) return;
  record r;
  r.time_ns = ptx::globaltimer();  // one ns clock for all SMs: tracks line up
  r.cta = static_cast<uint16_t>(cta);
  r.warp = static_cast<uint8_t>(warp);
  r.kind = static_cast<uint8_t>(e);
  r.stage = static_cast<uint8_t>(stage);
  r.role = static_cast<uint8_t>(role);
  r.iter = static_cast<uint16_t>(iter);
  s.records[size_t(slot) * s.per_warp + n] = r;
}
#endif

// ---- host side -----------------------------------------------------------------------------

// Chrome trace JSON (chrome://tracing, ui.perfetto.dev): one process per CTA, one thread (track)
// per warp; spans for acquire, wait, compute and drain, instants for issued and release.
// `title` goes into the metadata; times are shown relative to the earliest record.
inline std::string chrome_json(const std::vector<record>& recs, const std::string& title, const std::string& clock) {
  uint64_t t0 = UINT64_MAX;
  for (const record& r : recs) t0 = r.time_ns < t0 ? r.time_ns : t0;
  std::string out;
  out.reserve(recs.size() * 120 + 256);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":\"%s\",\"clock\":\"%s\"},"
                "\"traceEvents\":[\n",
                title.c_str(), clock.c_str());
  out += buf;
  bool first = true;
  auto emit = [&](const char* text) {
    if (!first) out += ",\n";
    first = false;
    out += text;
  };
  // Track names, so a viewer shows "CTA 3" / "warp 0 (producer)".
  std::vector<uint32_t> named;
  for (const record& r : recs) {
    const uint32_t key = (uint32_t(r.cta) << 8) | r.warp;
    bool seen = false;
    for (uint32_t k : named) seen = seen || k == key;
    if (seen) continue;
    named.push_back(key);
    std::snprintf(buf, sizeof buf,
                  "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
                  "\"args\":{\"name\":\"warp %u (%s)\"}}",
                  unsigned(r.cta), unsigned(r.warp), unsigned(r.warp), r.role == 0 ? "producer" : "consumer");
    emit(buf);
    std::snprintf(buf, sizeof buf, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"CTA %u\"}}",
                  unsigned(r.cta), unsigned(r.cta));
    emit(buf);
  }
  // Each record becomes a B/E/i event at microseconds (the JSON unit) with ns resolution.
  for (const record& r : recs) {
    const double us = double(r.time_ns - t0) / 1000.0;
    const event e = static_cast<event>(r.kind);
    const char* ph = "i";
    const char* span = name(e);
    switch (e) {
      case event::acquire_begin:
        ph = "B";
        span = "acquire";
        break;
      case event::acquire_end:
        ph = "E";
        span = "acquire";
        break;
      case event::wait_begin:
        ph = "B";
        span = "wait";
        break;
      case event::wait_end:
        ph = "E";
        span = "wait";
        break;
      case event::drain_begin:
        ph = "B";
        span = "drain";
        break;
      case event::drain_end:
        ph = "E";
        span = "drain";
        break;
      default:
        break;
    }
    std::snprintf(buf, sizeof buf,
                  "{\"ph\":\"%s\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,%s"
                  "\"args\":{\"stage\":%u,\"iter\":%u,\"event\":\"%s\"}}",
                  ph, span, unsigned(r.cta), unsigned(r.warp), us, ph[0] == 'i' ? "\"s\":\"t\"," : "",
                  unsigned(r.stage), unsigned(r.iter), name(e));
    emit(buf);
  }
  // Compute spans: from a consumer's wait_end to its next release on the same warp.
  for (size_t i = 0; i < recs.size(); ++i) {
    const record& a = recs[i];
    if (static_cast<event>(a.kind) != event::wait_end) continue;
    for (size_t j = i + 1; j < recs.size(); ++j) {
      const record& b = recs[j];
      if (b.cta != a.cta || b.warp != a.warp) continue;
      if (static_cast<event>(b.kind) == event::release) {
        std::snprintf(buf, sizeof buf,
                      "{\"ph\":\"X\",\"name\":\"compute\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
                      "\"dur\":%.3f,\"args\":{\"stage\":%u,\"iter\":%u}}",
                      unsigned(a.cta), unsigned(a.warp), double(a.time_ns - t0) / 1000.0,
                      double(b.time_ns - a.time_ns) / 1000.0, unsigned(a.stage), unsigned(a.iter));
        emit(buf);
        break;
      }
      if (static_cast<event>(b.kind) == event::wait_end) break;
    }
  }
  out += "\n]}\n";
  return out;
}

// Gather the records of a sink copied to the host (records: warps * per_warp, counts: warps),
// in per-warp order. Returns how many records were dropped because a slot overflowed.
inline size_t gather(const std::vector<record>& slots, const std::vector<uint32_t>& counts, uint32_t per_warp,
                     std::vector<record>& out) {
  if (slots.size() < counts.size() * size_t(per_warp))
    throw std::invalid_argument("trace::gather: " + std::to_string(slots.size()) + " records for " +
                                std::to_string(counts.size()) + " warps x " + std::to_string(per_warp));
  size_t dropped = 0;
  for (size_t w = 0; w < counts.size(); ++w) {
    const uint32_t n = counts[w] < per_warp ? counts[w] : per_warp;
    dropped += counts[w] - n;
    for (uint32_t i = 0; i < n; ++i) out.push_back(slots[w * per_warp + i]);
  }
  return dropped;
}

// Write `text` to `path`, throwing with the path on failure.
inline void write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("trace: cannot open " + path + " for writing");
  const size_t n = std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  if (n != text.size()) throw std::runtime_error("trace: short write to " + path);
}

}  // namespace hopper::trace
