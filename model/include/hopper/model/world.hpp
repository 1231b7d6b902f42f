// The model's public entry point: a world owns the scheduler, the barriers, the buffers and the
// copy engine of one program run.
//
// API for a pipeline written once over a "barrier backend" (see also docs/model.md):
//   world w(run_options{seed});                       // one program, one run
//   barrier& b = w.make_barrier("full[0]", cta);       // an mbarrier in CTA cta's shared memory
//   buffer& s = w.make_shared("A", stages, stage_bytes, cta);   buffer& g = w.make_global("in", bytes);
//   named_barrier& sync = w.make_named_barrier("bar 0", tasks);  // bar.sync / cluster barrier
//   w.spawn("producer", [&] { ... }, cta);             // tasks: ordinary C++
//   w.run();                                           // throws model_error on any report
// Inside a task, per barrier: b.init(count); b.arrive(count) -> token; b.arrive_expect_tx(bytes);
//   b.expect_tx(bytes); b.complete_tx(bytes); b.arrive_drop(count); b.arrive_no_complete(count);
//   b.wait(parity) (blocks the task); b.try_wait(parity) (may fail spuriously); b.test_wait(parity);
//   b.wait_phase(k) (checks that phase k is current or previous); b.test_wait(token); b.inval().
// Memory: s.write/read/store/load (generic proxy, RAW/WAR-checked); w.fence_proxy_async();
//   w.fence_mbarrier_init(); w.cp_async_bulk_shared_global(dst, off, src, off, bytes, bar) (the
//   copy engine lands the bytes later, then complete_tx on bar); ..._multicast({{dst, bar}, ...});
//   w.cp_async_bulk_global_shared(dst, off, src, off, bytes) with commit_group / wait_group(n) /
//   wait_group_read(n); w.cp_async_bulk_tensor_shared_global(dst, off, tensor, coords,
//   bar): one box of a tensor_view (ranks 1-5, zeros outside the tensor, the map's swizzle).
// Trace: run_options::trace keeps every event (task, CTA, scheduler step); write_chrome_trace.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "hopper/model/barrier.hpp"
#include "hopper/model/memory.hpp"
#include "hopper/model/named_barrier.hpp"
#include "hopper/model/scheduler.hpp"
#include "hopper/model/shared_window.hpp"
#include "hopper/objects/swizzle.hpp"

namespace hopper::model {

// A tensor in a global buffer as a tensor map describes it (hopper/objects/tensor_map.hpp): element size,
// dims in elements (dims[0] contiguous), byte strides of dims 1.., the box in elements, and the
// shared-memory swizzle of the box.
struct tensor_view {
  buffer* mem = nullptr;
  uint32_t elem_bytes = 1;
  std::vector<uint64_t> dims;
  std::vector<uint64_t> strides;
  std::vector<uint32_t> box;
  hopper::swizzle sw = hopper::swizzle::none;

  size_t box_bytes() const {
    size_t n = elem_bytes;
    for (uint32_t b : box) n *= b;
    return n;
  }
};

class world : public scheduler {
 public:
  explicit world(run_options o = {}) : scheduler(o) {}

  barrier& make_barrier(std::string name, int cta = 0) {
    if (cta < 0) misuse("barrier '" + name + "' in CTA " + std::to_string(cta));
    made_in(cta);
    barriers_.push_back(std::make_unique<barrier>(*this, int(barriers_.size()), std::move(name), cta));
    return *barriers_.back();
  }
  barrier& find_barrier(const std::string& name) {
    for (auto& b : barriers_)
      if (b->name() == name) return *b;
    misuse("unknown barrier '" + name + "'");
  }
  // A barrier handle must belong to this world (a barrier of another run is a misuse).
  barrier& checked(barrier& b) {
    for (auto& o : barriers_)
      if (o.get() == &b) return b;
    misuse("barrier '" + b.name() + "' does not belong to this world");
  }

  buffer& make_shared(std::string name, size_t stages, size_t stage_bytes, int cta = 0) {
    buffers_.push_back(std::make_unique<buffer>(*this, fences_, int(buffers_.size()), std::move(name), space::shared,
                                                cta, stages, stage_bytes));
    window_.place(*buffers_.back());  // its address in the CTA's shared window (shared_window.hpp)
    return *buffers_.back();
  }
  // The shared-window addresses of every CTA's shared buffers (what cvta.to.shared gives).
  const shared_window& smem_window() const { return window_; }
  buffer& make_global(std::string name, size_t bytes) {
    buffers_.push_back(
        std::make_unique<buffer>(*this, fences_, int(buffers_.size()), std::move(name), space::global, -1, 1, bytes));
    return *buffers_.back();
  }
  named_barrier& make_named_barrier(std::string name, unsigned count) {
    named_.push_back(std::make_unique<named_barrier>(*this, std::move(name), count));
    return *named_.back();
  }

  // fence.proxy.async.shared::cta: this task's earlier generic writes become
  // readable by the async proxy for copies ordered after this fence.
  void fence_proxy_async() {
    const int t = current();
    yield();
    const uint64_t now = tick();
    fences_.add(t, now);
    for (auto& b : barriers_) b->on_fence_mbarrier_init(t, now, true);
    record("fence.proxy.async", "");
  }
  // fence.mbarrier_init.release.cluster: this task's earlier mbarrier.init become
  // visible to other CTAs of the cluster and to the async proxy, once synchronised.
  void fence_mbarrier_init() {
    const int t = current();
    yield();
    const uint64_t now = tick();
    for (auto& b : barriers_) b->on_fence_mbarrier_init(t, now, false);
    record("fence.mbarrier_init.release.cluster", "");
  }

  struct target {
    buffer* dst;
    barrier* bar;
  };

  // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [bar]:
  // the bytes land later, then complete_tx(size) on bar.
  void cp_async_bulk_shared_global(buffer& dst, size_t dst_off, buffer& src, size_t src_off, size_t bytes,
                                   barrier& bar) {
    issue_g2s({{&dst, &bar}}, dst_off, src, src_off, bytes, "cp.async.bulk.shared::cluster.global");
  }
  // ... .multicast::cluster [dst], [src], size, [bar], ctaMask: the same offsets in every target
  // CTA, complete_tx on each target's barrier.
  void cp_async_bulk_shared_global_multicast(const std::vector<target>& targets, size_t dst_off, buffer& src,
                                             size_t src_off, size_t bytes) {
    issue_g2s(targets, dst_off, src, src_off, bytes, "cp.async.bulk.shared::cluster.global.multicast::cluster");
  }

  // cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
  //   [dst], [tensorMap, {c0, ...}], [bar]: one box at `coords` (elements, may lie
  //   partly or wholly outside the tensor: those elements land as zeros) into dst + dst_off, box
  //   rows in order, with the view's swizzle; the barrier counts the whole box's bytes.
  void cp_async_bulk_tensor_shared_global(buffer& dst, size_t dst_off, const tensor_view& src,
                                          const std::vector<int64_t>& coords, barrier& bar) {
    issue_tensor_g2s({{&dst, &bar}}, dst_off, src, coords,
                     "cp.async.bulk.tensor.shared::cluster.global.tile.mbarrier::complete_tx::bytes");
  }
  // ... .multicast::cluster: the same box into every (buffer, barrier) of `targets`.
  void cp_async_bulk_tensor_shared_global_multicast(const std::vector<target>& targets, size_t dst_off,
                                                    const tensor_view& src, const std::vector<int64_t>& coords) {
    issue_tensor_g2s(
        targets, dst_off, src, coords,
        "cp.async.bulk.tensor.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster");
  }

  // cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size: reads the source
  // later, writes global memory later; retired by wait_group.read / wait_group.
  void cp_async_bulk_global_shared(buffer& dst, size_t dst_off, buffer& src, size_t src_off, size_t bytes) {
    const int t = current();
    yield();
    if (dst.where() != space::global || src.where() != space::shared)
      misuse("cp.async.bulk.global.shared::cta from '" + src.name() + "' to '" + dst.name() +
             "': needs shared -> global");
    if (src.cta() != task_cta(t))
      misuse("cp.async.bulk.global.shared::cta by " + where_at(t) + " from the shared buffer of CTA " +
             std::to_string(src.cta()));
    check_bytes("cp.async.bulk.global.shared::cta", bytes, dst_off, src_off);
    auto op = std::make_shared<bulk_op>();
    op->issuer = t;
    op->what = "bulk store '" + src.name() + "'+" + std::to_string(src_off) + " -> '" + dst.name() + "'+" +
               std::to_string(dst_off) + " issued by " + where_at(t);
    tick();
    const hb_clock c = clock(t);
    src.async_read(op, c, src_off, bytes, true);
    dst.async_write_begin(op, c, dst_off, bytes);
    open_group(t).push_back(op);
    record("cp.async.bulk.global.shared::cta", src.name(), [&] { return std::to_string(bytes) + " bytes"; });
    post_async("read of " + op->what, [this, op, &src, &dst, src_off, dst_off, bytes] {
      auto data = std::make_shared<std::vector<uint8_t>>();
      src.snapshot(src_off, bytes, *data);
      op->read_done = true;
      touch(groups_object(op->issuer), access::write);
      post_async("write of " + op->what, [this, op, &dst, dst_off, bytes, data] {
        dst.async_write_land(op, dst_off, data->data(), bytes, -1, "", 0);
        op->write_done = true;
        touch(groups_object(op->issuer), access::write);
      });
    });
  }
  // cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [tensorMap, {c0, ...}], [src]:
  // the box at src + src_off (laid out with the view's swizzle) is read later
  // and its rows inside the tensor are written later (rows outside are clipped; a row's end is
  // written to its 16-byte chunk's end, as the copy engine writes whole chunks); retired by
  // wait_group.read / wait_group like a bulk store.
  void cp_async_bulk_tensor_global_shared(const tensor_view& v, const std::vector<int64_t>& coords, buffer& src,
                                          size_t src_off) {
    const int t = current();
    yield();
    const std::string name = "cp.async.bulk.tensor.global.shared::cta.tile.bulk_group";
    const size_t bytes = check_tensor(v, coords, src_off, name);
    if (src.where() != space::shared || src.cta() != task_cta(t))
      misuse(name + " by " + where_at(t) + " from '" + src.name() + "', not a shared buffer of its own CTA");
    std::string at;
    for (size_t d = 0; d < coords.size(); ++d) at += (d ? ", " : "") + std::to_string(coords[d]);
    auto op = std::make_shared<bulk_op>();
    op->issuer = t;
    op->what = "tensor store '" + src.name() + "'+" + std::to_string(src_off) + " -> '" + v.mem->name() + "' box {" +
               at + "} issued by " + where_at(t);
    tick();
    const hb_clock c = clock(t);
    src.async_read(op, c, src_off, bytes, true);
    for_each_box_row(
        v, coords, [&](size_t g, size_t, size_t n) { v.mem->async_write_begin(op, c, g, n); }, true);
    open_group(t).push_back(op);
    record(name, src.name(), [&] { return std::to_string(bytes) + " bytes"; });
    post_async("read of " + op->what, [this, op, v, coords, &src, src_off, bytes] {
      std::vector<uint8_t> image;
      src.snapshot(src_off, bytes, image);
      auto box = std::make_shared<std::vector<uint8_t>>(bytes);
      for (size_t o = 0; o < bytes; o += 16)
        std::copy_n(image.begin() + long(hopper::swizzle_offset(v.sw, uint32_t(o))), 16, box->begin() + long(o));
      op->read_done = true;
      touch(groups_object(op->issuer), access::write);
      post_async("write of " + op->what, [this, op, v, coords, box] {
        for_each_box_row(
            v, coords,
            [&](size_t g, size_t at_box, size_t n) {
              v.mem->async_write_land(op, g, box->data() + at_box, n, -1, "", 0);
            },
            true);
        op->write_done = true;
        touch(groups_object(op->issuer), access::write);
      });
    });
  }

  // cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size,
  // [bar]: from this CTA's shared memory into a shared buffer of a CTA of the cluster
  // (dst and bar in that CTA); the source is read when the bytes land, then complete_tx(size) on
  // bar. The source may be rewritten only after the destination's phase is known complete.
  void cp_async_bulk_shared_cluster_shared_cta(buffer& dst, size_t dst_off, buffer& src, size_t src_off, size_t bytes,
                                               barrier& bar) {
    const int t = current();
    yield();
    const char* name = "cp.async.bulk.shared::cluster.shared::cta";
    if (src.where() != space::shared || src.cta() != task_cta(t))
      misuse(std::string(name) + " by " + where_at(t) + " from '" + src.name() +
             "', not a shared buffer of its own CTA");
    check_bytes(name, bytes, dst_off, src_off);
    tick();
    const hb_clock c = clock(t);
    check_targets({{&dst, &bar}}, name);
    auto op = std::make_shared<bulk_op>();
    op->issuer = t;
    op->what = "bulk copy '" + src.name() + "'+" + std::to_string(src_off) + " (CTA " + std::to_string(src.cta()) +
               ") -> '" + dst.name() + "'+" + std::to_string(dst_off) + " (CTA " + std::to_string(dst.cta()) +
               ") issued by " + where_at(t);
    src.async_read(op, c, src_off, bytes, false);
    land_in_targets({{&dst, &bar}}, op, c, dst_off, bytes, name, [&src, src_off, bytes] {
      std::vector<uint8_t> data;
      src.snapshot(src_off, bytes, data);
      return data;
    });
  }

  // cp.async.bulk.commit_group
  void cp_async_bulk_commit_group() {
    const int t = current();
    yield();
    auto& g = groups(t);
    g.committed.push_back(std::move(g.open));
    g.open.clear();
    record("cp.async.bulk.commit_group", "");
  }
  // cp.async.bulk.wait_group N: all but the N most recent groups complete.
  void cp_async_bulk_wait_group(unsigned n) { wait_groups(n, false); }
  // cp.async.bulk.wait_group.read N: their sources may be overwritten.
  void cp_async_bulk_wait_group_read(unsigned n) { wait_groups(n, true); }

 private:
  struct task_groups {
    std::vector<std::shared_ptr<bulk_op>> open;
    std::deque<std::vector<std::shared_ptr<bulk_op>>> committed;
  };
  task_groups& groups(int t) {
    if (groups_.size() <= size_t(t)) groups_.resize(size_t(t) + 1);
    return groups_[size_t(t)];
  }
  std::vector<std::shared_ptr<bulk_op>>& open_group(int t) { return groups(t).open; }

  void wait_groups(unsigned n, bool read_only) {
    const int t = current();
    yield();
    // By task index, not by reference: another task's first group may grow groups_.
    auto done = [this, t, n, read_only] {
      const auto& g = groups(t);
      for (size_t i = 0; i + n < g.committed.size(); ++i)
        for (auto& op : g.committed[i])
          if (!(read_only ? op->read_done : op->write_done)) return false;
      return true;
    };
    if (!done())
      block_until(done, [this, t, n, read_only] {
        return std::string(read_only ? "cp.async.bulk.wait_group.read " : "cp.async.bulk.wait_group ") +
               std::to_string(n) + " of " + where_at(t);
      });
    touch(groups_object(t), access::acquire);
    // Groups retired for reading only stay listed until a full wait retires their writes.
    auto& g = groups(t);
    const uint64_t now = tick();
    const size_t older = g.committed.size() > n ? g.committed.size() - n : 0;
    for (size_t i = 0; i < older; ++i)
      for (auto& op : g.committed[i]) {
        if (!op->read_retired) op->read_retired = now;
        if (!read_only) op->write_retired = now;
      }
    if (!read_only) g.committed.erase(g.committed.begin(), g.committed.begin() + long(older));
    record(read_only ? "cp.async.bulk.wait_group.read" : "cp.async.bulk.wait_group", "",
           [&] { return std::to_string(n); });
  }

  void check_bytes(const char* op, size_t bytes, size_t dst_off, size_t src_off) const {
    if (bytes == 0 || bytes % 16 != 0)
      misuse(std::string(op) + ": size " + std::to_string(bytes) + " is not a positive multiple of 16");
    if (dst_off % 16 != 0 || src_off % 16 != 0)
      misuse(std::string(op) + ": offsets " + std::to_string(dst_off) + ", " + std::to_string(src_off) +
             " are not 16-byte aligned");
    if (bytes > uint32_t(mbarrier_state::max_tx))
      misuse(std::string(op) + ": size " + std::to_string(bytes) + " exceeds the tx-count range");
  }

  void issue_g2s(const std::vector<target>& targets, size_t dst_off, buffer& src, size_t src_off, size_t bytes,
                 const char* name) {
    const int t = current();
    yield();
    if (targets.empty()) misuse(std::string(name) + " with no destination");
    if (src.where() != space::global) misuse(std::string(name) + " from '" + src.name() + "', not a global buffer");
    check_bytes(name, bytes, dst_off, src_off);
    tick();
    const hb_clock c = clock(t);
    check_targets(targets, name);
    auto op = std::make_shared<bulk_op>();
    op->issuer = t;
    op->what = std::string("bulk copy '") + src.name() + "'+" + std::to_string(src_off) + " -> '" +
               targets[0].dst->name() + "'+" + std::to_string(dst_off) + " issued by " + where_at(t);
    src.async_read(op, c, src_off, bytes, false);
    land_in_targets(targets, op, c, dst_off, bytes, name, [&src, src_off, bytes] {
      std::vector<uint8_t> data;
      src.snapshot(src_off, bytes, data);
      return data;
    });
  }

  // The box's rows: for every box row (all coordinates but the innermost) whose coordinates lie
  // inside the tensor, the in-bounds part of it: f(byte offset in the tensor's buffer, byte offset
  // in the unswizzled box, bytes). A store (`whole_chunks`) writes whole 16-byte chunks, as the
  // hardware does: a row whose in-bounds part ends inside a chunk is written to the chunk's end
  // (within the box), past the tensor's innermost extent.
  template <class F>
  static void for_each_box_row(const tensor_view& v, const std::vector<int64_t>& coords, F&& f,
                               bool whole_chunks = false) {
    const size_t rank = v.dims.size();
    const size_t row_bytes = size_t(v.box[0]) * v.elem_bytes;
    size_t rows = 1;
    for (size_t d = 1; d < rank; ++d) rows *= v.box[d];
    const int64_t lo = std::max<int64_t>(coords[0], 0);
    const int64_t hi = std::min<int64_t>(coords[0] + int64_t(v.box[0]), int64_t(v.dims[0]));
    for (size_t r = 0; r < rows; ++r) {
      size_t rest = r, src = 0;
      bool inside = hi > lo;
      for (size_t d = 1; d < rank; ++d) {
        const int64_t c = coords[d] + int64_t(rest % v.box[d]);
        rest /= v.box[d];
        if (c < 0 || c >= int64_t(v.dims[d]))
          inside = false;
        else
          src += size_t(c) * v.strides[d - 1];
      }
      if (!inside) continue;
      size_t end = size_t(hi) * v.elem_bytes;
      if (whole_chunks) end = std::min((end + 15) / 16 * 16, size_t(coords[0] + int64_t(v.box[0])) * v.elem_bytes);
      f(src + size_t(lo) * v.elem_bytes, r * row_bytes + size_t(lo - coords[0]) * v.elem_bytes,
        end - size_t(lo) * v.elem_bytes);
    }
  }

  // The checks every tensor copy makes (the tensor map's rules); returns the box's bytes.
  size_t check_tensor(const tensor_view& v, const std::vector<int64_t>& coords, size_t dst_off,
                      const std::string& op_name) const {
    const size_t rank = v.dims.size();
    if (!v.mem) misuse(op_name + " from a tensor_view without a buffer");
    if (v.mem->where() != space::global) misuse(op_name + " from '" + v.mem->name() + "', not a global buffer");
    if (rank < 1 || rank > 5) misuse(op_name + ": rank " + std::to_string(rank) + " (1 to 5)");
    if (v.strides.size() != rank - 1 || v.box.size() != rank || coords.size() != rank)
      misuse(op_name + ": " + std::to_string(v.strides.size()) + " strides, " + std::to_string(v.box.size()) +
             " box dims and " + std::to_string(coords.size()) + " coordinates for a rank-" + std::to_string(rank) +
             " tensor (needs rank - 1, rank, rank)");
    for (size_t d = 0; d < rank; ++d)
      if (v.box[d] < 1 || v.box[d] > 256)
        misuse(op_name + ": box dimension " + std::to_string(d) + " is " + std::to_string(v.box[d]) + " (1 to 256)");
    for (size_t d = 0; d + 1 < rank; ++d)
      if (v.strides[d] % 16 != 0)
        misuse(op_name + ": stride of dimension " + std::to_string(d + 1) + " is " + std::to_string(v.strides[d]) +
               " bytes, not a multiple of 16");
    const size_t row_bytes = size_t(v.box[0]) * v.elem_bytes;
    if (row_bytes % 16 != 0)
      misuse(op_name + ": a box row is " + std::to_string(row_bytes) + " bytes, not a multiple of 16");
    if (v.sw != hopper::swizzle::none && row_bytes != hopper::swizzle_bytes(v.sw))
      misuse(op_name + ": a swizzled box row must span the swizzle (" + std::to_string(hopper::swizzle_bytes(v.sw)) +
             " bytes), not " + std::to_string(row_bytes));
    if (dst_off % hopper::swizzle_alignment(v.sw) != 0)
      misuse(op_name + ": shared-memory offset " + std::to_string(dst_off) + " is not " +
             std::to_string(hopper::swizzle_alignment(v.sw)) + "-byte aligned");
    const size_t bytes = v.box_bytes();
    if (bytes > uint32_t(mbarrier_state::max_tx))
      misuse(op_name + ": a box of " + std::to_string(bytes) + " bytes exceeds the tx-count range");
    return bytes;
  }

  void issue_tensor_g2s(const std::vector<target>& targets, size_t dst_off, const tensor_view& v,
                        const std::vector<int64_t>& coords, const char* name) {
    const int t = current();
    yield();
    const std::string op_name = name;
    const size_t rank = v.dims.size();
    const size_t bytes = check_tensor(v, coords, dst_off, op_name);
    if (targets.empty()) misuse(op_name + " with no destination");
    tick();
    const hb_clock c = clock(t);
    check_targets(targets, name);
    std::string at;
    for (size_t d = 0; d < rank; ++d) at += (d ? ", " : "") + std::to_string(coords[d]);
    auto op = std::make_shared<bulk_op>();
    op->issuer = t;
    op->what = "tensor copy '" + v.mem->name() + "' box {" + at + "} -> '" + targets[0].dst->name() + "'+" +
               std::to_string(dst_off) + " issued by " + where_at(t);
    for_each_box_row(v, coords, [&](size_t src, size_t, size_t n) { v.mem->async_read(op, c, src, n, false); });
    land_in_targets(targets, op, c, dst_off, bytes, name, [v, coords, bytes] {
      // The box as the copy engine writes it: zeros outside the tensor, 16-byte chunks swizzled.
      std::vector<uint8_t> box(bytes, 0), image(bytes), part;
      for_each_box_row(v, coords, [&](size_t src, size_t at_box, size_t n) {
        v.mem->snapshot(src, n, part);
        std::copy(part.begin(), part.end(), box.begin() + long(at_box));
      });
      for (size_t o = 0; o < bytes; o += 16)
        std::copy_n(box.begin() + long(o), 16, image.begin() + long(hopper::swizzle_offset(v.sw, uint32_t(o))));
      return image;
    });
  }

  // Every copy into shared memory: the destinations must be shared buffers whose CTA holds the
  // barrier, in a CTA still running.
  void check_targets(const std::vector<target>& targets, const std::string& name) {
    for (auto& tg : targets) {
      if (!tg.dst || !tg.bar) misuse(name + " with a null destination or barrier");
      checked(*tg.bar);
      if (tg.dst->where() != space::shared) misuse(name + " into '" + tg.dst->name() + "', not a shared buffer");
      if (tg.dst->cta() != tg.bar->cta())
        misuse(name + " into '" + tg.dst->name() + "' of CTA " + std::to_string(tg.dst->cta()) +
               " signalling barrier '" + tg.bar->name() + "' of CTA " + std::to_string(tg.bar->cta()));
      if (!in_task() || task_cta(current()) != tg.dst->cta()) touch(cta_object(tg.dst->cta()), access::read);
      if (cta_exited(tg.dst->cta()))
        tg.bar->state().fail(name, "copy into CTA " + std::to_string(tg.dst->cta()) + ", which has exited");
    }
  }

  // The writes of copy `op` into every destination begin now; later the copy engine lands
  // `image()` (the bytes as they arrive, taken at landing time) in each and counts them on its
  // barrier (complete_tx).
  template <class Image>
  void land_in_targets(const std::vector<target>& targets, const std::shared_ptr<bulk_op>& op, const hb_clock& c,
                       size_t dst_off, size_t bytes, const char* name, Image image) {
    for (auto& tg : targets) tg.dst->async_write_begin(op, c, dst_off, bytes);
    record(name, targets[0].dst->name(), [&] { return std::to_string(bytes) + " bytes on " + targets[0].bar->name(); });
    for (auto& tg : targets) {
      buffer* dst = tg.dst;
      barrier* bar = tg.bar;
      const std::string engine = std::string(name) + " (copy engine)";
      post_async("landing of " + op->what, [this, op, c, dst, bar, dst_off, bytes, image, engine] {
        const std::vector<uint8_t> data = image();
        touch(cta_object(dst->cta()), access::read);
        if (cta_exited(dst->cta()))
          bar->state().fail(engine, op->what + " lands in CTA " + std::to_string(dst->cta()) + ", which has exited");
        dst->async_write_land(op, dst_off, data.data(), bytes, bar->id(), bar->name(), bar->state().phase());
        bar->complete_tx_from_async(uint32_t(bytes), op->issuer, c, op->what);
      });
    }
  }

  // A barrier made while the program runs (by the mbarrier.init of its slot) changes what the
  // CTA's slots hold.
  void made_in(int cta) {
    if (in_task()) touch(setup_object(cta), access::write);
  }

  proxy_fences fences_;
  shared_window window_;
  std::vector<std::unique_ptr<barrier>> barriers_;
  std::vector<std::unique_ptr<buffer>> buffers_;
  std::vector<std::unique_ptr<named_barrier>> named_;
  std::vector<task_groups> groups_;
};

}  // namespace hopper::model
