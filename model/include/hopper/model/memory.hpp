// Shared and global memory with a generic and an async view.
//
// A buffer holds real bytes (so a pipeline run on the model computes real results) and, per
// chunk, who last wrote it and who read it since, in the model's happens-before (clock.hpp).
// The rules, checked on every access:
//   generic read   sees a generic write only if ordered after it (release/acquire, bar.sync);
//                  sees bytes landed by a bulk copy only if it observed the completion of the
//                  mbarrier phase they were counted on; never while a copy into the
//                  chunk is in flight. Otherwise: RAW hazard.
//   async read     (a bulk copy reading shared or global memory) sees a generic write only if the
//                  WRITING task issued fence.proxy.async after the write and that fence is ordered
//                  before the copy's issue. The PTX memory model has no formal rule for
//                  fence.proxy.async; this is its conservative reading (per-thread ordering, then a
//                  block synchronisation): a fence by another thread, or a fence
//                  with no synchronisation, does not count. Otherwise: RAW hazard.
//   any write      must be ordered after every read of the chunk since its last write: a generic
//                  reader's read (it releases the stage after its last read), and a bulk
//                  store's read of its source (only cp.async.bulk.wait_group.read tells the issuer
//                  it is over). Otherwise: WAR hazard.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "hopper/model/error.hpp"
#include "hopper/model/scheduler.hpp"

namespace hopper::model {

enum class space { shared, global };

// One asynchronous copy as the memory sees it: who issued it and when its read and its write
// were retired by the issuer's wait_group.read / wait_group (0: not yet).
struct bulk_op {
  int issuer = -1;
  std::string what;
  bool read_done = false, write_done = false;
  uint64_t read_retired = 0, write_retired = 0;  // issuer's clock at the retiring wait
  // A wgmma.mma_async reading its operands (wgmma.hpp): `wgmma_key` names the issuing warpgroup
  // (>= 0); its read is over for a writer ordered, at least in execution order, after the
  // wgmma.wait_group that retired its wgmma-group in some thread of the warpgroup: retired_by
  // holds (that thread's task, its clock at the wait) for every thread of the warpgroup.
  int wgmma_key = -1;
  std::vector<std::pair<int, uint64_t>> retired_by;
};

// fence.proxy.async times of every task, in its own clock.
struct proxy_fences {
  std::vector<std::vector<uint64_t>> at;
  void add(int t, uint64_t now) {
    if (at.size() <= size_t(t)) at.resize(size_t(t) + 1);
    at[size_t(t)].push_back(now);
  }
  // A fence of task t after time `after` and no later than `until`.
  bool between(int t, uint64_t after, uint64_t until) const {
    if (size_t(t) >= at.size()) return false;
    for (uint64_t f : at[size_t(t)])
      if (f > after && f <= until) return true;
    return false;
  }
};

class buffer {
 public:
  buffer(scheduler& s, const proxy_fences& f, int id, std::string name, space sp, int cta, size_t stages,
         size_t stage_bytes, size_t chunk_bytes)
      : s_(s),
        fences_(f),
        id_(id),
        name_(std::move(name)),
        space_(sp),
        cta_(cta),
        stages_(stages),
        stage_bytes_(stage_bytes),
        chunk_bytes_(chunk_bytes ? chunk_bytes : stage_bytes),
        data_(stages * stage_bytes) {
    if (stages == 0 || stage_bytes == 0)
      scheduler::misuse("buffer '" + name_ + "' with " + std::to_string(stages) + " stages of " +
                        std::to_string(stage_bytes) + " bytes");
    if (stage_bytes % chunk_bytes_ != 0)
      scheduler::misuse("buffer '" + name_ + "': chunk of " + std::to_string(chunk_bytes_) +
                        " bytes does not divide the stage of " + std::to_string(stage_bytes));
    chunks_.resize(data_.size() / chunk_bytes_);
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  space where() const { return space_; }
  int cta() const { return cta_; }
  size_t bytes() const { return data_.size(); }
  size_t stages() const { return stages_; }
  size_t stage_bytes() const { return stage_bytes_; }
  size_t stage_offset(size_t stage) const {
    if (stage >= stages_) scheduler::misuse("buffer '" + name_ + "' has no stage " + std::to_string(stage));
    return stage * stage_bytes_;
  }

  // The host's view before and after a run: no checks, no synchronisation.
  uint8_t* host_data() { return data_.data(); }
  const uint8_t* host_data() const { return data_.data(); }

  // st.shared / st.global by the current task (generic proxy).
  void write(size_t offset, const void* src, size_t n) {
    const int t = s_.current();
    range("st (generic write)", offset, n);
    for (size_t c = first(offset); c <= last(offset, n); ++c) check_write(t, c, s_.clock(t), "generic write");
    const uint64_t now = s_.tick();
    for (size_t c = first(offset); c <= last(offset, n); ++c) {
      chunk& k = chunks_[c];
      k.wk = wkind::generic;
      k.writer = t;
      k.wtime = now;
      k.reads.clear();
      k.async_reads.clear();
    }
    std::memcpy(data_.data() + offset, src, n);
  }
  // ld.shared / ld.global by the current task (generic proxy).
  void read(size_t offset, void* dst, size_t n) {
    const int t = s_.current();
    range("ld (generic read)", offset, n);
    for (size_t c = first(offset); c <= last(offset, n); ++c) check_generic_read(t, c);
    const uint64_t now = s_.tick();
    for (size_t c = first(offset); c <= last(offset, n); ++c) note_read(chunks_[c], t, now);
    std::memcpy(dst, data_.data() + offset, n);
  }
  template <class T>
  void store(size_t index, const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "store of a trivially copyable type");
    write(index * sizeof(T), &v, sizeof(T));
  }
  template <class T>
  T load(size_t index) {
    static_assert(std::is_trivially_copyable<T>::value, "load of a trivially copyable type");
    T v;
    read(index * sizeof(T), &v, sizeof(T));
    return v;
  }

  // atom.add / red.add by the current task on element `index`: atomics of tasks never race with
  // each other (they are morally strong in the PTX memory model), so they are checked only
  // against a copy in flight into the same bytes and leave no read or write behind them.
  template <class T>
  // `release` / `acquire` (atom.add.release / .acquire / .acq_rel): the atomics of one location
  // form its release sequence, so a release publishes this task's history to every later acquire
  // of the location, which joins what every release before it published.
  T atomic_add(size_t index, T v, bool release = false, bool acquire = false) {
    static_assert(std::is_arithmetic<T>::value, "atomic_add of an arithmetic type");
    const int t = s_.current();
    s_.yield();
    const size_t offset = index * sizeof(T);
    range("atom.add", offset, sizeof(T));
    for (size_t c = first(offset); c <= last(offset, sizeof(T)); ++c)
      if (chunks_[c].inflight)
        raw(c, s_.where(t) + " adds to it atomically while " + chunks_[c].inflight->what + " into it is in flight");
    T old;
    std::memcpy(&old, data_.data() + offset, sizeof(T));
    const T sum = T(old + v);
    std::memcpy(data_.data() + offset, &sum, sizeof(T));
    s_.tick();
    hb_clock& sync = atomic_sync_[offset];
    if (acquire) s_.clock(t).join(sync);
    if (release) sync.join(s_.clock(t));
    return old;
  }

  // ---- for the copy engine (world.hpp) ----------------------------------------------------
  // A bulk copy issued by `issuer` (clock `c`) will write [offset, offset+n).
  void async_write_begin(const std::shared_ptr<bulk_op>& op, const hb_clock& c, size_t offset, size_t n) {
    range(op->what.c_str(), offset, n);
    for (size_t ch = first(offset); ch <= last(offset, n); ++ch) check_write(op->issuer, ch, c, op->what);
    for (size_t ch = first(offset); ch <= last(offset, n); ++ch) {
      chunks_[ch].inflight = op;
      chunks_[ch].reads.clear();
    }
  }
  // The bytes land, counted on `phase` of barrier `bar` (a copy into shared memory), or
  // visible after the issuer's wait_group (bar < 0: a bulk store into global memory). `bar_name`
  // is the barrier's own name string, kept by reference.
  void async_write_land(const std::shared_ptr<bulk_op>& op, size_t offset, const uint8_t* src, size_t n, int bar,
                        const std::string& bar_name, uint64_t phase) {
    for (size_t ch = first(offset); ch <= last(offset, n); ++ch) {
      chunk& k = chunks_[ch];
      if (k.inflight == op) k.inflight.reset();
      k.wk = bar >= 0 ? wkind::phase : wkind::bulk;
      k.bar = bar;
      k.bar_name = bar >= 0 ? &bar_name : nullptr;
      k.bar_phase = phase;
      k.wop = op;
      k.reads.clear();
    }
    std::memcpy(data_.data() + offset, src, n);
  }
  // A bulk copy issued by op->issuer (clock `c`) reads [offset, offset+n); `track`: the read
  // stays in flight until the issuer's wait_group.read (bulk stores).
  void async_read(const std::shared_ptr<bulk_op>& op, const hb_clock& c, size_t offset, size_t n, bool track) {
    range(op->what.c_str(), offset, n);
    for (size_t ch = first(offset); ch <= last(offset, n); ++ch) {
      chunk& k = chunks_[ch];
      if (k.inflight) raw(ch, op->what + " reads it while " + k.inflight->what + " into it is in flight");
      if (k.wk == wkind::generic &&
          !fences_.between(k.writer, k.wtime, k.writer == op->issuer ? c.of(op->issuer) : c.of(k.writer)))
        raw(ch, op->what + " (async proxy) reads the generic write of " + s_.where(k.writer) +
                    " with no fence.proxy.async by that task after its write and ordered before the copy");
      if (k.wk == wkind::phase && c.phases(k.bar) <= k.bar_phase)
        raw(ch, op->what + " reads bytes counted on phase " + std::to_string(k.bar_phase) + " of barrier " +
                    *k.bar_name + ", which the issuer has not observed complete");
      if (k.wk == wkind::bulk && (k.wop->write_retired == 0 || c.of(k.wop->issuer) < k.wop->write_retired))
        raw(ch, op->what + " reads bytes of " + k.wop->what + " not retired by wait_group before it");
      if (track) k.async_reads.push_back(op);
    }
  }
  // A wgmma.mma_async (op->wgmma_key >= 0) reads [offset, offset+n) through the async proxy: the
  // RAW rules of async_read, then the read stays in flight until a wgmma.wait_group of its
  // warpgroup retires it. Per chunk only the newest read of each warpgroup is kept: a warpgroup's
  // groups retire in order, so a write ordered after the newest read's retirement is ordered
  // after every older one's.
  void wgmma_read(const std::shared_ptr<bulk_op>& op, const hb_clock& c, size_t offset, size_t n) {
    async_read(op, c, offset, n, false);
    for (size_t ch = first(offset); ch <= last(offset, n); ++ch) {
      auto& v = chunks_[ch].async_reads;
      bool kept = false;
      for (auto& o : v)
        if (o->wgmma_key == op->wgmma_key) {
          o = op;
          kept = true;
          break;
        }
      if (!kept) v.push_back(op);
    }
  }
  void snapshot(size_t offset, size_t n, std::vector<uint8_t>& out) const {
    out.assign(data_.begin() + long(offset), data_.begin() + long(offset + n));
  }

 private:
  enum class wkind { none, generic, phase, bulk };
  struct chunk {
    wkind wk = wkind::none;
    int writer = -1;
    uint64_t wtime = 0;
    int bar = -1;
    const std::string* bar_name = nullptr;  // the barrier's own name (it outlives the buffer's use)
    uint64_t bar_phase = 0;
    std::shared_ptr<bulk_op> wop;                       // the copy whose bytes these are
    std::shared_ptr<bulk_op> inflight;                  // a copy writing here, not landed
    std::vector<std::pair<int, uint64_t>> reads;        // generic reads since the last write
    std::vector<std::shared_ptr<bulk_op>> async_reads;  // bulk stores reading here
  };

  size_t first(size_t off) const { return off / chunk_bytes_; }
  size_t last(size_t off, size_t n) const { return (off + n - 1) / chunk_bytes_; }
  void range(const char* what, size_t offset, size_t n) const {
    if (n == 0 || offset + n > data_.size() || offset + n < offset)
      scheduler::misuse(std::string(what) + " of " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
                        " of buffer '" + name_ + "' (" + std::to_string(data_.size()) + " bytes)");
  }
  std::string at(size_t ch) const {
    const size_t off = ch * chunk_bytes_;
    std::string r = (space_ == space::shared ? "shared buffer '" : "global buffer '") + name_ + "'";
    if (space_ == space::shared) r += " of CTA " + std::to_string(cta_);
    if (stages_ > 1) r += " stage " + std::to_string(off / stage_bytes_);
    r += " (bytes " + std::to_string(off) + ".." + std::to_string(off + chunk_bytes_ - 1) + ")";
    return r;
  }
  [[noreturn]] void raw(size_t ch, const std::string& why) const {
    throw model_error(error_kind::raw_hazard, at(ch) + ": " + why);
  }
  [[noreturn]] void war(size_t ch, const std::string& why) const {
    throw model_error(error_kind::war_hazard, at(ch) + ": " + why);
  }

  void check_generic_read(int t, size_t ch) const {
    const chunk& k = chunks_[ch];
    const hb_clock& c = s_.clock(t);
    if (k.inflight)
      raw(ch, s_.where(t) + " reads it while " + k.inflight->what + " into it is in flight (read before full)");
    switch (k.wk) {
      case wkind::generic:
        if (k.writer != t && c.of(k.writer) < k.wtime)
          raw(ch, s_.where(t) + " reads the write of " + s_.where(k.writer) + " with no synchronisation ordering them");
        break;
      case wkind::phase:
        if (c.phases(k.bar) <= k.bar_phase)
          raw(ch, s_.where(t) + " reads bytes of " + k.wop->what + " counted on phase " + std::to_string(k.bar_phase) +
                      " of barrier " + *k.bar_name + ", which this task has not observed complete (stale data)");
        break;
      case wkind::bulk:
        if (k.wop->write_retired == 0 || (k.wop->issuer != t && c.of(k.wop->issuer) < k.wop->write_retired))
          raw(ch, s_.where(t) + " reads bytes of " + k.wop->what +
                      " before a cp.async.bulk.wait_group of its issuer ordered before the read");
        break;
      case wkind::none:
        break;
    }
  }

  // A write (generic by task t, or a copy issued by t with clock c) must follow every read.
  void check_write(int t, size_t ch, const hb_clock& c, const std::string& op) const {
    const chunk& k = chunks_[ch];
    // an async op's name already says who issued it
    const std::string what = op.find("issued by") != std::string::npos ? op : op + " by " + s_.where(t);
    if (k.inflight) war(ch, what + " while " + k.inflight->what + " into it is still in flight");
    for (const auto& rd : k.async_reads) {
      if (rd->wgmma_key >= 0) {
        check_wgmma_read_over(ch, what, c, *rd);
        continue;
      }
      if (rd->read_retired == 0)
        war(ch, what + " while " + rd->what +
                    " may still be reading it "
                    "(no cp.async.bulk.wait_group.read by its issuer)");
      // The read is over once retired; knowing that in execution order is enough (a .relaxed
      // release after wait_group.read), since nothing it wrote is read.
      if (rd->issuer != t && c.exec_of(rd->issuer) < rd->read_retired)
        war(ch, what + " is not ordered after the wait_group.read that retired " + rd->what);
    }
    for (const auto& [r, when] : k.reads)
      if (r != t && c.of(r) < when) {
        const std::string relaxed = s_.relaxed_arrive_after(r, when);
        war(ch, what + " while " + s_.where(r) +
                    " may still be reading it (its read is not ordered before this write: " +
                    (relaxed.empty() ? std::string("a stage is released after its last read") : relaxed) + ")");
      }
    if (k.wk == wkind::generic && k.writer != t && c.of(k.writer) < k.wtime)
      war(ch, what + " races with the unordered write of " + s_.where(k.writer));
  }

  // A write (`what`, by a task whose clock is c) into bytes a wgmma.mma_async read: the read must
  // have been retired by a wgmma.wait_group of its warpgroup, and the write ordered after that
  // wait in some thread of the warpgroup (execution order is enough: nothing the read produced
  // is in memory).
  void check_wgmma_read_over(size_t ch, const std::string& what, const hb_clock& c, const bulk_op& op) const {
    if (op.retired_by.empty())
      war(ch, what + " while " + op.what +
                  " may still be reading it (no wgmma.wait_group of that warpgroup has "
                  "retired its wgmma-group: the operand is in flight from mma_async to that wait)");
    for (const auto& [m, when] : op.retired_by)
      if (c.exec_of(m) >= when) return;
    war(ch, what + " is not ordered after the wgmma.wait_group that retired " + op.what +
                " (release the stage to the writer after the wait_group, e.g. an mbarrier arrive it waits on)");
  }

  void note_read(chunk& k, int t, uint64_t now) {
    for (auto& r : k.reads)
      if (r.first == t) {
        r.second = now;
        return;
      }
    k.reads.push_back({t, now});
  }

  scheduler& s_;
  const proxy_fences& fences_;
  int id_;
  std::string name_;
  space space_;
  int cta_;
  size_t stages_, stage_bytes_, chunk_bytes_;
  std::vector<uint8_t> data_;
  std::vector<chunk> chunks_;
  std::map<size_t, hb_clock> atomic_sync_;  // per atomically accessed offset: what its releases published
};

}  // namespace hopper::model
