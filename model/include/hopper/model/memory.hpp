// Shared and global memory with a generic and an async view.
//
// A buffer holds real bytes (so a pipeline run on the model computes real results) and, per
// byte, who last wrote it and who read it since, in the model's happens-before (clock.hpp).
// The rules, checked on every access:
//   generic read   sees a generic write only if ordered after it (release/acquire, bar.sync);
//                  sees bytes landed by a bulk copy only if it observed the completion of the
//                  mbarrier phase they were counted on; never while a copy into the
//                  bytes is in flight. Otherwise: RAW hazard.
//   async read     (a bulk copy reading shared or global memory) sees a generic write only if the
//                  WRITING task issued fence.proxy.async after the write and that fence is ordered
//                  before the copy's issue. The PTX memory model has no formal rule for
//                  fence.proxy.async; this is its conservative reading (per-thread ordering, then a
//                  block synchronisation): a fence by another thread, or a fence
//                  with no synchronisation, does not count. Otherwise: RAW hazard.
//   any write      must be ordered after every read of the bytes since their last write: a generic
//                  reader's read (it releases the stage after its last read), and a bulk
//                  store's read of its source (only cp.async.bulk.wait_group.read tells the issuer
//                  it is over). Otherwise: WAR hazard.
//                  And after their last write: a generic one by happens-before (and, for a copy's
//                  write, through a fence.proxy.async of the writer as for an async read); a copy's
//                  landed bytes once their mbarrier phase is known complete (a bulk store's after
//                  its wait_group). Otherwise: WAW hazard (the earlier write may land last).
#pragma once
#include <algorithm>
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
  // Accesses are tracked to the byte: per 16-byte granule (the unit of every asynchronous copy),
  // each record carries the mask of the bytes it covers, so lanes updating their own words of
  // one granule are as independent as the bytes they touch.
  static constexpr size_t granule = 16;

  buffer(scheduler& s, const proxy_fences& f, int id, std::string name, space sp, int cta, size_t stages,
         size_t stage_bytes)
      : s_(s),
        fences_(f),
        id_(id),
        name_(std::move(name)),
        space_(sp),
        cta_(cta),
        stages_(stages),
        stage_bytes_(stage_bytes) {
    if (stages == 0 || stage_bytes == 0 || stage_bytes > (size_t(1) << 40) / stages)
      scheduler::misuse("buffer '" + name_ + "' with " + std::to_string(stages) + " stages of " +
                        std::to_string(stage_bytes) + " bytes");
    data_.resize(stages * stage_bytes);
    chunks_.resize((data_.size() + granule - 1) / granule);
    obj_ = s.new_objects((data_.size() + 3) / 4);
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

  // st.shared / st.global by the current task (generic proxy), written at `loc`.
  void write(size_t offset, const void* src, size_t n, const src_loc& loc = {}) {
    const int t = s_.current();
    if (loc.known()) s_.at(loc);
    range("st (generic write)", offset, n);
    touch(offset, n, access::write);
    each(offset, n, [&](size_t c, mask_t m) { check_write(t, c, m, s_.clock(t), "generic write", false); });
    const uint64_t now = s_.tick();
    each(offset, n, [&](size_t c, mask_t m) {
      chunk& k = chunks_[c];
      wrec w;
      w.wk = wkind::generic;
      w.writer = t;
      w.wtime = now;
      w.mask = m;
      w.loc = s_.loc(t);
      overwrite(k, w);
    });
    std::memcpy(data_.data() + offset, src, n);
  }
  // ld.shared / ld.global by the current task (generic proxy), written at `loc`.
  void read(size_t offset, void* dst, size_t n, const src_loc& loc = {}) {
    const int t = s_.current();
    if (loc.known()) s_.at(loc);
    range("ld (generic read)", offset, n);
    touch(offset, n, access::read);
    each(offset, n, [&](size_t c, mask_t m) { check_generic_read(t, c, m); });
    const uint64_t now = s_.tick();
    each(offset, n, [&](size_t c, mask_t m) { note_read(chunks_[c], t, now, m, s_.loc(t)); });
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
    touch(offset, sizeof(T), access::write);
    each(offset, sizeof(T), [&](size_t c, mask_t m) {
      if (chunks_[c].inflight)
        raw(c, m,
            s_.where_at(t) + " adds to it atomically while " + chunks_[c].inflight->what + " into it is in flight");
    });
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
  // A bulk copy issued by `issuer` (clock `c`) will write [offset, offset+n) through the async
  // proxy: it must be ordered after every earlier read and write of those bytes, a generic write
  // through a fence.proxy.async of its writer (cross-proxy WAW).
  void async_write_begin(const std::shared_ptr<bulk_op>& op, const hb_clock& c, size_t offset, size_t n) {
    range(op->what.c_str(), offset, n);
    touch(offset, n, access::write);
    each(offset, n, [&](size_t ch, mask_t m) { check_write(op->issuer, ch, m, c, op->what, true); });
    each(offset, n, [&](size_t ch, mask_t m) {
      chunks_[ch].inflight = op;
      drop_reads(chunks_[ch], m);
    });
  }
  // The bytes land, counted on `phase` of barrier `bar` (a copy into shared memory), or
  // visible after the issuer's wait_group (bar < 0: a bulk store into global memory). `bar_name`
  // is the barrier's own name string, kept by reference.
  void async_write_land(const std::shared_ptr<bulk_op>& op, size_t offset, const uint8_t* src, size_t n, int bar,
                        const std::string& bar_name, uint64_t phase) {
    touch(offset, n, access::write);
    each(offset, n, [&](size_t ch, mask_t m) {
      chunk& k = chunks_[ch];
      if (k.inflight == op) k.inflight.reset();
      wrec w;
      w.wk = bar >= 0 ? wkind::phase : wkind::bulk;
      w.bar = bar;
      w.bar_name = bar >= 0 ? &bar_name : nullptr;
      w.bar_phase = phase;
      w.wop = op;
      w.mask = m;
      overwrite(k, w);
    });
    std::memcpy(data_.data() + offset, src, n);
  }
  // A bulk copy issued by op->issuer (clock `c`) reads [offset, offset+n); `track`: the read
  // stays in flight until the issuer's wait_group.read (bulk stores).
  void async_read(const std::shared_ptr<bulk_op>& op, const hb_clock& c, size_t offset, size_t n, bool track) {
    range(op->what.c_str(), offset, n);
    touch(offset, n, access::read);
    each(offset, n, [&](size_t ch, mask_t m) {
      chunk& k = chunks_[ch];
      if (k.inflight) raw(ch, m, op->what + " reads it while " + k.inflight->what + " into it is in flight");
      if (space_ == space::shared) check_written(ch, m, [&] { return op->what + " reads"; });
      for (const wrec& w : k.writes) {
        if (!(w.mask & m)) continue;
        if (w.wk == wkind::generic && !fenced(w, op->issuer, c))
          raw(ch, w.mask & m,
              op->what + " (async proxy) reads the generic write of " + s_.where(w.writer) + w.loc.at() +
                  " with no fence.proxy.async by that task after its write and ordered before the copy");
        if (w.wk == wkind::phase && c.phases(w.bar) <= w.bar_phase)
          raw(ch, w.mask & m,
              op->what + " reads bytes counted on phase " + std::to_string(w.bar_phase) + " of barrier " + *w.bar_name +
                  ", which the issuer has not observed complete");
        if (w.wk == wkind::bulk && (w.wop->write_retired == 0 || c.of(w.wop->issuer) < w.wop->write_retired))
          raw(ch, w.mask & m, op->what + " reads bytes of " + w.wop->what + " not retired by wait_group before it");
      }
      if (track) k.async_reads.push_back(op);
    });
  }
  // A wgmma.mma_async (op->wgmma_key >= 0) reads [offset, offset+n) through the async proxy: the
  // RAW rules of async_read, then the read stays in flight until a wgmma.wait_group of its
  // warpgroup retires it. Per granule only the newest read of each warpgroup is kept: a
  // warpgroup's groups retire in order, so a write ordered after the newest read's retirement is
  // ordered after every older one's.
  void wgmma_read(const std::shared_ptr<bulk_op>& op, const hb_clock& c, size_t offset, size_t n) {
    async_read(op, c, offset, n, false);
    each(offset, n, [&](size_t ch, mask_t) {
      auto& v = chunks_[ch].async_reads;
      for (auto& o : v)
        if (o->wgmma_key == op->wgmma_key) {
          o = op;
          return;
        }
      v.push_back(op);
    });
  }
  void snapshot(size_t offset, size_t n, std::vector<uint8_t>& out) const {
    touch(offset, n, access::read);
    out.assign(data_.begin() + long(offset), data_.begin() + long(offset + n));
  }

 private:
  using mask_t = uint16_t;  // bytes of one granule
  static constexpr mask_t all_bytes = 0xffff;
  enum class wkind { generic, phase, bulk };
  // The last write of the bytes in `mask`.
  struct wrec {
    wkind wk = wkind::generic;
    int writer = -1;
    uint64_t wtime = 0;
    int bar = -1;
    const std::string* bar_name = nullptr;  // the barrier's own name (it outlives the buffer's use)
    uint64_t bar_phase = 0;
    std::shared_ptr<bulk_op> wop;  // the copy whose bytes these are
    mask_t mask = 0;
    src_loc loc;  // where a generic write was made
  };
  // A generic read of the bytes in `mask` by `task` at its time `when`, since their last write.
  struct rrec {
    int task;
    uint64_t when;
    mask_t mask;
    src_loc loc;
  };
  struct chunk {
    std::vector<wrec> writes;                           // disjoint masks; unwritten bytes have none
    std::shared_ptr<bulk_op> inflight;                  // a copy writing here, not landed
    std::vector<rrec> reads;                            // generic reads since the last writes
    std::vector<std::shared_ptr<bulk_op>> async_reads;  // bulk stores and wgmma reading here
  };

  // Its 4-byte words in [off, off+n) as touched by the current step (partial-order reduction):
  // lanes that update their own words do not depend on each other.
  void touch(size_t off, size_t n, access how) const {
    if (!s_.tracking() || n == 0) return;
    for (size_t w = off / 4; w * 4 < off + n; ++w) s_.touch(obj_ + w, how);
  }
  // f(granule, mask of the bytes of [off, off+n) in it) for every granule the range touches.
  template <class F>
  void each(size_t off, size_t n, F&& f) {
    for (size_t c = off / granule; c * granule < off + n; ++c) {
      const size_t lo = std::max(off, c * granule) - c * granule;
      const size_t hi = std::min(off + n, (c + 1) * granule) - c * granule;
      f(c, mask_t(((1u << hi) - 1u) & ~((1u << lo) - 1u)));
    }
  }
  static void drop_reads(chunk& k, mask_t m) {
    for (auto& r : k.reads) r.mask = mask_t(r.mask & ~m);
    k.reads.erase(std::remove_if(k.reads.begin(), k.reads.end(), [](const rrec& r) { return r.mask == 0; }),
                  k.reads.end());
    if (m == all_bytes) k.async_reads.clear();
  }
  // The write `w` becomes the last write of its bytes.
  static void overwrite(chunk& k, const wrec& w) {
    for (auto& o : k.writes) o.mask = mask_t(o.mask & ~w.mask);
    k.writes.erase(std::remove_if(k.writes.begin(), k.writes.end(), [](const wrec& o) { return o.mask == 0; }),
                   k.writes.end());
    k.writes.push_back(w);
    drop_reads(k, w.mask);
  }

  void range(const char* what, size_t offset, size_t n) const {
    if (n == 0 || offset + n > data_.size() || offset + n < offset)
      scheduler::misuse(std::string(what) + " of " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
                        " of buffer '" + name_ + "' (" + std::to_string(data_.size()) + " bytes)");
  }
  std::string at(size_t ch, mask_t m) const {
    size_t lo = 0, hi = granule - 1;
    while (lo < granule && !(m >> lo & 1u)) ++lo;
    while (hi > lo && !(m >> hi & 1u)) --hi;
    const size_t off = ch * granule + lo;
    std::string r = (space_ == space::shared ? "shared buffer '" : "global buffer '") + name_ + "'";
    if (space_ == space::shared) r += " of CTA " + std::to_string(cta_);
    if (stages_ > 1) r += " stage " + std::to_string(off / stage_bytes_);
    r += " (bytes " + std::to_string(off) + ".." + std::to_string(ch * granule + hi) + ")";
    return r;
  }
  // "; <why the writer is not ordered after the reader's event>" (scheduler::unordered_why), or
  // empty. `c`: the writer's clock at the write (a copy's: at its issue).
  std::string story(int reader, uint64_t when, int writer, const hb_clock& c) const {
    const std::string r = s_.unordered_why(reader, when, writer, c.of(writer), false);
    return r.empty() ? r : "; " + r;
  }
  [[noreturn]] void raw(size_t ch, mask_t m, const std::string& why) const {
    throw model_error(error_kind::raw_hazard, at(ch, m) + ": " + why);
  }
  [[noreturn]] void war(size_t ch, mask_t m, const std::string& why) const {
    throw model_error(error_kind::war_hazard, at(ch, m) + ": " + why);
  }
  [[noreturn]] void waw(size_t ch, mask_t m, const std::string& why) const {
    throw model_error(error_kind::waw_hazard, at(ch, m) + ": " + why);
  }

  // A generic write `w` is visible to the async proxy of a copy issued by `issuer` (clock `c`)
  // when its writer fenced (fence.proxy.async) after it, and that fence is ordered before the
  // copy's issue.
  bool fenced(const wrec& w, int issuer, const hb_clock& c) const {
    return fences_.between(w.writer, w.wtime, w.writer == issuer ? c.of(issuer) : c.of(w.writer));
  }

  // Shared memory starts undefined (global memory holds what the host put there): a read of a
  // byte nothing has written reads garbage, usually a stage read before its copy was issued.
  // `who()`: the reader, for the report (built only then: every read checks every chunk).
  template <class Who>
  void check_written(size_t ch, mask_t m, const Who& who) const {
    mask_t covered = 0;
    for (const wrec& w : chunks_[ch].writes) covered = mask_t(covered | w.mask);
    if ((m & ~covered) != 0)
      raw(ch, mask_t(m & ~covered),
          who() +
              " bytes of shared memory that nothing has written (uninitialised: a stage "
              "read before its copy was issued, i.e. before its full barrier's wait?)");
  }

  void check_generic_read(int t, size_t ch, mask_t m) const {
    const chunk& k = chunks_[ch];
    const hb_clock& c = s_.clock(t);
    if (k.inflight)
      raw(ch, m, s_.where_at(t) + " reads it while " + k.inflight->what + " into it is in flight (read before full)");
    if (space_ == space::shared) check_written(ch, m, [&] { return s_.where_at(t) + " reads"; });
    for (const wrec& w : k.writes) {
      const mask_t o = w.mask & m;
      if (!o) continue;
      switch (w.wk) {
        case wkind::generic:
          if (w.writer != t && c.of(w.writer) < w.wtime)
            raw(ch, o,
                s_.where_at(t) + " reads the write of " + s_.where(w.writer) + w.loc.at() +
                    " with no synchronisation ordering them");
          break;
        case wkind::phase:
          if (c.phases(w.bar) <= w.bar_phase)
            raw(ch, o,
                s_.where_at(t) + " reads bytes of " + w.wop->what + " counted on phase " + std::to_string(w.bar_phase) +
                    " of barrier " + *w.bar_name + ", which this task has not observed complete (stale data)");
          break;
        case wkind::bulk:
          if (w.wop->write_retired == 0 || (w.wop->issuer != t && c.of(w.wop->issuer) < w.wop->write_retired))
            raw(ch, o,
                s_.where_at(t) + " reads bytes of " + w.wop->what +
                    " before a cp.async.bulk.wait_group of its issuer ordered before the read");
          break;
      }
    }
  }

  // A write of the bytes `m` (generic by task t, or a copy issued by t; `c` its clock; `async`:
  // through the async proxy) must follow every read of them and every earlier write.
  void check_write(int t, size_t ch, mask_t m, const hb_clock& c, const std::string& op, bool async) const {
    const chunk& k = chunks_[ch];
    // an async op's name already says who issued it; built only for a report (every write checks
    // every chunk)
    const auto what = [&] { return op.find("issued by") != std::string::npos ? op : op + " by " + s_.where_at(t); };
    if (k.inflight) waw(ch, m, what() + " while " + k.inflight->what + " into it is still in flight");
    for (const auto& rd : k.async_reads) {
      if (rd->wgmma_key >= 0) {
        check_wgmma_read_over(t, ch, m, what, c, *rd);
        continue;
      }
      if (rd->read_retired == 0)
        war(ch, m,
            what() + " while " + rd->what +
                " may still be reading it "
                "(no cp.async.bulk.wait_group.read by its issuer)");
      // The read is over once retired; knowing that in execution order is enough (a .relaxed
      // release after wait_group.read), since nothing it wrote is read.
      if (rd->issuer != t && c.exec_of(rd->issuer) < rd->read_retired)
        war(ch, m,
            what() + " is not ordered after the wait_group.read that retired " + rd->what +
                story(rd->issuer, rd->read_retired, t, c));
    }
    for (const rrec& r : k.reads)
      if ((r.mask & m) && r.task != t && c.of(r.task) < r.when) {
        const std::string why = s_.unordered_why(r.task, r.when, t, c.of(t), true);
        war(ch, r.mask & m,
            what() + " while " + s_.where(r.task) + r.loc.at() +
                " may still be reading it (its read is not ordered before this write: " +
                (why.empty() ? std::string(scheduler::stage_rule) : why) + ")");
      }
    for (const wrec& w : k.writes) {
      const mask_t o = w.mask & m;
      if (!o) continue;
      switch (w.wk) {
        case wkind::generic:
          if (w.writer != t && c.of(w.writer) < w.wtime)
            waw(ch, o, what() + " races with the unordered write of " + s_.where(w.writer) + w.loc.at());
          if (async && !fenced(w, t, c))
            waw(ch, o,
                what() + " (async proxy) overwrites the generic write of " + s_.where(w.writer) + w.loc.at() +
                    " with no fence.proxy.async by that task after its write and ordered before the copy: the "
                    "generic write may land after the copy's");
          break;
        case wkind::phase:
          // A copy's bytes are in place once their phase completed; a later write must know that
          // (execution order is enough for a copy, a generic write needs what a read needs).
          if ((async ? c.phases_over(w.bar) : c.phases(w.bar)) <= w.bar_phase)
            waw(ch, o,
                what() + " overwrites bytes of " + w.wop->what + " counted on phase " + std::to_string(w.bar_phase) +
                    " of barrier " + *w.bar_name +
                    ", which it has not observed complete: that copy may land after this write");
          break;
        case wkind::bulk:
          if (w.wop->write_retired == 0 || (w.wop->issuer != t && c.exec_of(w.wop->issuer) < w.wop->write_retired))
            waw(ch, o,
                what() + " overwrites bytes of " + w.wop->what +
                    " before a cp.async.bulk.wait_group of its issuer ordered before it: that copy may land after "
                    "this write");
          break;
      }
    }
  }

  // A write (`what()`, by a task whose clock is c) into bytes a wgmma.mma_async read: the read must
  // have been retired by a wgmma.wait_group of its warpgroup, and the write ordered after that
  // wait in some thread of the warpgroup (execution order is enough: nothing the read produced
  // is in memory).
  template <class What>
  void check_wgmma_read_over(int t, size_t ch, mask_t m, const What& what, const hb_clock& c, const bulk_op& op) const {
    if (op.retired_by.empty())
      war(ch, m,
          what() + " while " + op.what +
              " may still be reading it (no wgmma.wait_group of that warpgroup has "
              "retired its wgmma-group: the operand is in flight from mma_async to that wait)");
    for (const auto& [w, when] : op.retired_by)
      if (c.exec_of(w) >= when) return;
    war(ch, m,
        what() + " is not ordered after the wgmma.wait_group that retired " + op.what +
            " (release the stage to the writer after the wait_group, e.g. an mbarrier arrive it waits on)" +
            story(op.retired_by.front().first, op.retired_by.front().second, t, c));
  }

  // Task t read the bytes m at its time `now`: its older reads of them are superseded.
  static void note_read(chunk& k, int t, uint64_t now, mask_t m, const src_loc& loc) {
    for (auto& r : k.reads)
      if (r.task == t) r.mask = mask_t(r.mask & ~m);
    k.reads.erase(std::remove_if(k.reads.begin(), k.reads.end(), [](const rrec& r) { return r.mask == 0; }),
                  k.reads.end());
    k.reads.push_back({t, now, m, loc});
  }

  scheduler& s_;
  const proxy_fences& fences_;
  uint64_t obj_ = 0;  // the object of its word 0 (the others follow)
  int id_;
  std::string name_;
  space space_;
  int cta_;
  size_t stages_, stage_bytes_;
  std::vector<uint8_t> data_;
  std::vector<chunk> chunks_;
  std::map<size_t, hb_clock> atomic_sync_;  // per atomically accessed offset: what its releases published
};

}  // namespace hopper::model
