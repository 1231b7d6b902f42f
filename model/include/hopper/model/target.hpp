// The model's target: the same members as hopper::device_target (hopper/target/device_target.cuh), run on
// the executable model, so that a kernel body written once over a target runs here unchanged.
//
// Every thread of the launch is a task (a coroutine under the world's seeded scheduler), so
// lane-divergent code runs as written: `if (lane == 0)` is one task taking the branch. Warp-wide
// operations (__syncwarp, elect, shuffles, votes) meet the warp's 32 tasks at a named barrier;
// __syncthreads meets the CTA's; barrier.cluster the cluster's. Memory goes through views whose
// loads and stores are tracked accesses of model buffers (RAW/WAR-checked); barriers are model
// mbarriers, created when the kernel initialises them and named by the kernel.
//
//   world w(run_options{seed});
//   buffer& in = w.make_global("in", bytes);
//   launch(w, {grid, block, cluster}, [&](target& t) {
//     auto& ring = cta_shared<ring_type>(t, "ring");        // one object per CTA, all its threads
//     auto stages = shared_buffer(t, "stages", n, bytes);   // a tracked shared buffer per CTA
//     body(t, ring, stages, gmem<const uint8_t>(in), ...);   // the kernel's own source
//   });
//   w.run();                                                 // throws model_error on a report
#pragma once
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "hopper/model/barrier.hpp"
#include "hopper/model/memory.hpp"
#include "hopper/model/named_barrier.hpp"
#include "hopper/model/source_location.hpp"
#include "hopper/model/wgmma.hpp"
#include "hopper/model/world.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/objects/phase.hpp"
#include "hopper/ptx/qualifiers.hpp"
#include "hopper/trace/trace.hpp"

namespace hopper::model {

// ---- views ------------------------------------------------------------------------------------

namespace detail {

// `bytes` bytes at `offset` of buffer `b`, as the view of element type E.
template <class E>
class model_view {
 public:
  using element_type = E;
  using value_type = std::remove_cv_t<E>;

  model_view() = default;
  model_view(buffer& b, size_t byte_offset = 0) : b_(&b), off_(byte_offset) {}

  buffer& buf() const {
    if (!b_) scheduler::misuse("a memory view that points at no buffer");
    return *b_;
  }
  size_t offset() const { return off_; }  // in bytes
  bool valid() const { return b_ != nullptr; }

  value_type load(size_t i, src_loc loc = src_loc::current()) const {
    value_type v;
    buf().read(off_ + i * sizeof(E), &v, sizeof(E), loc);
    return v;
  }
  value_type load_volatile(size_t i, src_loc loc = src_loc::current()) const { return load(i, loc); }
  void store(size_t i, const value_type& v, src_loc loc = src_loc::current()) const {
    static_assert(!std::is_const<E>::value, "store through a view of const elements");
    buf().write(off_ + i * sizeof(E), &v, sizeof(E), loc);
  }
  void store_volatile(size_t i, const value_type& v, src_loc loc = src_loc::current()) const { store(i, v, loc); }

 protected:
  buffer* b_ = nullptr;
  size_t off_ = 0;
};

}  // namespace detail

template <class E>
class gmem : public detail::model_view<E> {
 public:
  using detail::model_view<E>::model_view;
  template <class U, class = std::enable_if_t<std::is_same<const U, E>::value && !std::is_const<U>::value>>
  gmem(const gmem<U>& o) : detail::model_view<E>(o.buf(), o.offset()) {}
  gmem operator+(size_t n) const { return gmem(this->buf(), this->off_ + n * sizeof(E)); }
  template <class U>
  gmem<U> as() const {
    return gmem<U>(this->buf(), this->off_);
  }
};

template <class E>
class smem : public detail::model_view<E> {
 public:
  using detail::model_view<E>::model_view;
  template <class U, class = std::enable_if_t<std::is_same<const U, E>::value && !std::is_const<U>::value>>
  smem(const smem<U>& o) : detail::model_view<E>(o.buf(), o.offset()) {}
  smem operator+(size_t n) const { return smem(this->buf(), this->off_ + n * sizeof(E)); }
  template <class U>
  smem<U> as() const {
    return smem<U>(this->buf(), this->off_);
  }
};

// The variable at the same place in a CTA of the cluster (what mapa gives).
template <class E>
class dsmem : public detail::model_view<E> {
 public:
  using detail::model_view<E>::model_view;
};

// 16 bytes in four registers (uint4 on the device); four and two floats (float4, float2).
struct u32x4 {
  uint32_t x, y, z, w;
};
struct f32x4 {
  float x, y, z, w;
};
struct f32x2 {
  float x, y;
};

// An mbarrier object in a CTA's shared storage: the model's barrier, made by its mbarrier.init.
struct mbarrier_slot {
  barrier* b = nullptr;
};

// A barrier of a CTA of the cluster (what mapa gives for a barrier).
struct remote_barrier {
  barrier* b = nullptr;
};

// The grid of one launch: 1-D blocks of `block` threads, `grid` CTAs in clusters of `cluster`.
struct launch_shape {
  uint32_t grid = 1;
  uint32_t block = 32;
  uint32_t cluster = 1;
};

// What the threads of one launch share.
class launch_state {
 public:
  launch_state(world& w, launch_shape s, std::vector<trace::record>* timeline) : w_(w), s_(s), timeline_(timeline) {
    if (s.grid == 0 || s.block == 0 || s.cluster == 0)
      scheduler::misuse("launch with grid " + std::to_string(s.grid) + ", block " + std::to_string(s.block) +
                        ", cluster " + std::to_string(s.cluster) + " (each must be at least 1)");
    if (s.block > 1024)
      scheduler::misuse("launch with a block of " + std::to_string(s.block) + " threads (at most 1024)");
    if (s.grid % s.cluster != 0)
      scheduler::misuse("launch of " + std::to_string(s.grid) + " CTAs in clusters of " + std::to_string(s.cluster) +
                        ": the grid must be a multiple of the cluster size");
    if (s.cluster > 16) scheduler::misuse("clusters of " + std::to_string(s.cluster) + " CTAs (at most 16)");
    const uint64_t threads = uint64_t(s.grid) * s.block, room = w.options().max_threads;
    if (threads > room)
      scheduler::misuse("launch of " + std::to_string(s.grid) + " CTAs of " + std::to_string(s.block) + " threads (" +
                        std::to_string(threads) +
                        " threads) exceeds run_options::max_threads = " + std::to_string(room));
    ctas_.resize(s.grid);
    for (uint32_t c = 0; c < s.grid; ++c) {
      cta& k = ctas_[c];
      k.sync = &w.make_named_barrier("bar.sync 0 of CTA " + std::to_string(c), s.block);
      for (uint32_t wp = 0; wp * 32 < s.block; ++wp) {
        const uint32_t lanes = s.block - wp * 32 < 32 ? s.block - wp * 32 : 32;
        k.warps.push_back(&w.make_named_barrier("warp " + std::to_string(wp) + " of CTA " + std::to_string(c), lanes));
        k.exchange.emplace_back(32, 0);
        k.arrives.emplace_back();
      }
    }
    for (uint32_t c = 0; c < s.grid / s.cluster; ++c)
      clusters_.push_back(
          &w.make_named_barrier("barrier.cluster of cluster " + std::to_string(c), s.cluster * s.block));
  }

  world& w() { return w_; }
  const launch_shape& shape() const { return s_; }
  std::vector<trace::record>* timeline() { return timeline_; }

  // One object of type T per CTA and name, value-initialised by the first thread that asks.
  template <class T>
  T& cta_shared(uint32_t c, const std::string& name) {
    auto& objs = ctas_.at(c).objects;
    auto it = objs.find(name);
    if (it == objs.end()) {
      w_.touch(scheduler::setup_object(int(c)), access::write);
      auto p = std::make_shared<T>();
      object o{std::static_pointer_cast<void>(p), sizeof(T), &typeid(T)};
      it = objs.emplace(name, o).first;
    } else if (*it->second.type != typeid(T)) {
      scheduler::misuse("shared object '" + name + "' of CTA " + std::to_string(c) + " asked for with another type");
    }
    return *static_cast<T*>(it->second.p.get());
  }
  // One tracked shared buffer per CTA and name.
  buffer& shared_buffer(uint32_t c, const std::string& name, size_t stages, size_t stage_bytes) {
    auto& bufs = ctas_.at(c).buffers;
    auto it = bufs.find(name);
    if (it == bufs.end()) w_.touch(scheduler::setup_object(int(c)), access::write);
    if (it == bufs.end()) it = bufs.emplace(name, &w_.make_shared(name, stages, stage_bytes, int(c))).first;
    buffer& b = *it->second;
    if (b.stages() != stages || b.stage_bytes() != stage_bytes)
      scheduler::misuse("shared buffer '" + name + "' of CTA " + std::to_string(c) + " asked for as " +
                        std::to_string(stages) + " x " + std::to_string(stage_bytes) + " bytes, but it is " +
                        std::to_string(b.stages()) + " x " + std::to_string(b.stage_bytes()));
    return b;
  }
  // The buffer of CTA `c` with the name of `b` (b is a shared buffer of another CTA of its cluster).
  buffer& peer_buffer(const buffer& b, uint32_t c) {
    auto& bufs = ctas_.at(c).buffers;
    auto it = bufs.find(b.name());
    w_.touch(scheduler::setup_object(int(c)), access::read);
    if (it == bufs.end())
      throw model_error(error_kind::undefined_behavior, "shared buffer '" + b.name() + "' has no counterpart in CTA " +
                                                            std::to_string(c) + " (mapa to a CTA that never made it)");
    return *it->second;
  }
  // The barrier slot at the same place as `s` (in a cta_shared object of CTA `from`) in CTA `to`.
  mbarrier_slot& peer_slot(const mbarrier_slot& s, uint32_t from, uint32_t to) {
    for (auto& [name, o] : ctas_.at(from).objects) {
      const auto* base = static_cast<const char*>(o.p.get());
      const auto* at = reinterpret_cast<const char*>(&s);
      if (at < base || at >= base + o.bytes) continue;
      auto& peer = ctas_.at(to).objects;
      auto it = peer.find(name);
      w_.touch(scheduler::setup_object(int(to)), access::read);
      if (it == peer.end())
        throw model_error(error_kind::undefined_behavior,
                          "shared object '" + name + "' has no counterpart in CTA " + std::to_string(to));
      return *reinterpret_cast<mbarrier_slot*>(static_cast<char*>(it->second.p.get()) + (at - base));
    }
    scheduler::misuse("a barrier that is not in any cta_shared object of CTA " + std::to_string(from) +
                      " (mapa needs the CTA's shared storage)");
  }

  named_barrier& cta_sync(uint32_t c) { return *ctas_.at(c).sync; }
  named_barrier& warp_sync(uint32_t c, uint32_t warp) { return *ctas_.at(c).warps.at(warp); }
  std::vector<uint64_t>& warp_exchange(uint32_t c, uint32_t warp) { return ctas_.at(c).exchange.at(warp); }
  // The arrives of one warp instruction, gathered from its lanes: (barrier, lane's task).
  std::vector<std::pair<barrier*, int>>& warp_arrives(uint32_t c, uint32_t warp) {
    return ctas_.at(c).arrives.at(warp);
  }
  named_barrier& cluster_sync(uint32_t c) { return *clusters_.at(c / s_.cluster); }
  std::map<uint64_t, bool>& cta_votes(uint32_t c) { return ctas_.at(c).votes; }
  named_barrier& bar(uint32_t c, uint32_t id, uint32_t count) {
    auto& m = ctas_.at(c).named;
    auto it = m.find(id);
    if (it == m.end())
      it = m.emplace(id, &w_.make_named_barrier("bar " + std::to_string(id) + " of CTA " + std::to_string(c), count))
               .first;
    if (it->second->count() != count)
      throw model_error(error_kind::undefined_behavior, "named barrier " + std::to_string(id) + " of CTA " +
                                                            std::to_string(c) + " used with " + std::to_string(count) +
                                                            " threads, but it was first used with " +
                                                            std::to_string(it->second->count()));
    return *it->second;
  }

 private:
  struct object {
    std::shared_ptr<void> p;
    size_t bytes;
    const std::type_info* type;
  };
  struct cta {
    std::map<std::string, object> objects;
    std::map<std::string, buffer*> buffers;
    named_barrier* sync = nullptr;
    std::vector<named_barrier*> warps;
    std::vector<std::vector<uint64_t>> exchange;                 // per warp: one slot per lane
    std::vector<std::vector<std::pair<barrier*, int>>> arrives;  // per warp: see warp_arrives
    std::map<uint64_t, bool> votes;                              // __syncthreads_or: generation -> OR so far
    std::map<uint32_t, named_barrier*> named;
  };
  world& w_;
  launch_shape s_;
  std::vector<trace::record>* timeline_;
  std::vector<cta> ctas_;
  std::vector<named_barrier*> clusters_;
};

// ---- the target -------------------------------------------------------------------------------

// A tensor map with the call site of the tensor copy that takes it. A tensor copy's parameters end
// with its coordinates (a parameter pack), so no default argument can follow them; the implicit
// conversion from the map takes the caller's file and line instead (a converting constructor's
// default argument is evaluated at the call, in the caller).
struct tensor_map_at {
  const tensor_view& view;
  src_loc loc;
  tensor_map_at(const tensor_view& v, src_loc l = src_loc::current())  // implicit: converts at the call
      : view(v), loc(l) {}
};

class target {
 public:
  using barrier_type = mbarrier_slot;
  using tensor_map_type = tensor_view;
  using u32x4 = model::u32x4;
  using f32x4 = model::f32x4;
  using f32x2 = model::f32x2;
  template <class E>
  using gmem_t = gmem<E>;
  template <class E>
  using smem_t = smem<E>;
  template <class E>
  using dsmem_t = dsmem<E>;
  static constexpr bool traced = true;  // records go to the launch's timeline when it has one
  static constexpr bool on_device = false;

  target(launch_state& l, uint32_t cta, uint32_t thread) : l_(&l), cta_(cta), tid_(thread) {}

  // ---- identity -----------------------------------------------------------------------------
  uint32_t thread() const { return tid_; }
  uint32_t lane() const { return tid_ % 32u; }
  uint32_t warp() const { return tid_ / 32u; }
  uint32_t warpgroup() const { return tid_ / 128u; }
  uint32_t block_threads() const { return l_->shape().block; }
  uint32_t block() const { return cta_; }
  uint32_t grid() const { return l_->shape().grid; }
  uint32_t cluster_rank() const { return cta_ % l_->shape().cluster; }
  uint32_t cluster_size() const { return l_->shape().cluster; }

  // What only the host sets up (the CTA's objects and stage memory, the world) is not a member: a
  // body receives this object, and what it can call here it can call on the device too. The
  // launch's lambda, the model's kernel entry, sets up through the free functions below.
  friend world& world_of(const target& t);
  template <class T>
  friend T& cta_shared(const target& t, const std::string& name);
  friend smem<uint8_t> shared_buffer(const target& t, const std::string& name, size_t stages, size_t stage_bytes);
  friend wgmma_warpgroup& wgmma_unit(const target& t);

  // ---- memory -------------------------------------------------------------------------------
  template <class E>
  u32x4 ld_shared_v4_u32(smem<E> p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    u32x4 v;
    p.buf().read(p.offset(), &v, 16);
    return v;
  }
  template <class E>
  void st_global_v4_u32(gmem<E> p, u32x4 v, src_loc loc = src_loc::current()) const {
    w().at(loc);
    p.buf().write(p.offset(), &v, 16);
  }
  template <class E>
  void st_global_cs_v4_u32(gmem<E> p, u32x4 v, src_loc loc = src_loc::current()) const {
    w().at(loc);
    p.buf().write(p.offset(), &v, 16);
  }
  template <class E>
  void st_global_L2_cache_hint_v4_u32(gmem<E> p, u32x4 v, uint64_t policy, src_loc loc = src_loc::current()) const {
    w().at(loc);
    check_policy(policy, "st.global.L2::cache_hint");
    p.buf().write(p.offset(), &v, 16);
  }
  template <class E>
  E atomic_add(gmem<E> p, size_t i, E v, src_loc loc = src_loc::current()) const {
    w().at(loc);
    if (p.offset() % sizeof(E) != 0) scheduler::misuse("atom.add at a misaligned offset");
    return p.buf().template atomic_add<E>(p.offset() / sizeof(E) + i, v);
  }
  // st.global.cg / ld.global.cg (cached in L2 only): ordinary tracked accesses on the model.
  template <class E>
  void st_global_cg(gmem<E> p, const E& v, src_loc loc = src_loc::current()) const {
    w().at(loc);
    p.store(0, v, loc);
  }
  template <class E>
  std::remove_const_t<E> ld_global_cg(gmem<E> p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    return p.load(0, loc);
  }
  // atom{.sem}.gpu.global.add.s32: .acq_rel releases and acquires through the location.
  template <ptx::sem S, class E>
  E atom_add_gpu(gmem<E> p, E v, src_loc loc = src_loc::current()) const {
    w().at(loc);
    static_assert(S == ptx::sem::relaxed || S == ptx::sem::acquire || S == ptx::sem::release || S == ptx::sem::acq_rel,
                  "atom: .sem must be relaxed, acquire, release or acq_rel");
    if (p.offset() % sizeof(E) != 0) scheduler::misuse("atom.add at a misaligned offset");
    return p.buf().template atomic_add<E>(p.offset() / sizeof(E), v, S == ptx::sem::release || S == ptx::sem::acq_rel,
                                          S == ptx::sem::acquire || S == ptx::sem::acq_rel);
  }
  template <class E>
  dsmem<E> mapa(smem<E> p, uint32_t rank) const {
    return dsmem<E>(l_->peer_buffer(p.buf(), peer_cta(rank, "mapa")), p.offset());
  }
  remote_barrier mapa(barrier_type& b, uint32_t rank) const {
    return remote_barrier{l_->peer_slot(b, cta_, peer_cta(rank, "mapa")).b};
  }

  // ---- mbarrier -----------------------------------------------------------------------------
  void mbarrier_init(barrier_type& b, uint32_t count, const char* name = nullptr, uint32_t index = 0,
                     src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().touch(scheduler::setup_object(int(cta_)), access::read);
    if (!b.b) {
      std::string n = name ? std::string(name) + "[" + std::to_string(index) + "]" : std::string("mbarrier");
      b.b = &w().make_barrier(n, int(cta_));
    }
    b.b->init(count);
  }
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  uint64_t mbarrier_arrive(barrier_type& b, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.arrive");
    if (faulted(fault_kind::arrive_dropped, x.name())) {
      w().yield();
      return 0;
    }
    return token(x.arrive(1, arrive_sem<S>()));
  }
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  uint64_t mbarrier_arrive_expect_tx(barrier_type& b, uint32_t bytes, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.arrive.expect_tx");
    if (faulted(fault_kind::expect_tx_short, x.name()) && bytes >= 16) bytes -= 16;
    return token(x.arrive_expect_tx(bytes, arrive_sem<S>()));
  }
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  uint64_t mbarrier_arrive(barrier_type& b, uint32_t count, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.arrive");
    if (faulted(fault_kind::arrive_dropped, x.name())) {
      w().yield();
      return 0;
    }
    return token(x.arrive(count, arrive_sem<S>()));
  }
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  uint64_t mbarrier_arrive_drop(barrier_type& b, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.arrive_drop");
    if (faulted(fault_kind::arrive_dropped, x.name())) {
      w().yield();
      return 0;
    }
    return token(x.arrive_drop(1, arrive_sem<S>()));
  }
  template <ptx::scope SC = ptx::scope::cta>
  void mbarrier_expect_tx(barrier_type& b, uint32_t bytes, src_loc loc = src_loc::current()) const {
    w().at(loc);
    bar(b, "mbarrier.expect_tx").expect_tx(bytes);
  }
  void mbarrier_inval(barrier_type& b, src_loc loc = src_loc::current()) const {
    w().at(loc);
    bar(b, "mbarrier.inval").inval();
  }
  // The token of an arrive is its phase on the model (the device's is the barrier's state).
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  bool mbarrier_test_wait(barrier_type& b, uint64_t token, src_loc loc = src_loc::current()) const {
    w().at(loc);
    (void)wait_sem<S>();
    mbarrier_token tok;
    tok.phase = token;
    return bar(b, "mbarrier.test_wait").test_wait(tok);
  }
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  bool mbarrier_try_wait(barrier_type& b, uint64_t token, src_loc loc = src_loc::current()) const {
    return mbarrier_test_wait<S, SC>(b, token, loc);
  }
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  void mbarrier_arrive(remote_barrier r, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = remote(r, "mbarrier.arrive.shared::cluster");
    if (faulted(fault_kind::arrive_dropped, x.name())) return w().yield();
    (void)x.arrive(1, arrive_sem<S>(), SC);
  }
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  void mbarrier_arrive_expect_tx(remote_barrier r, uint32_t bytes, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = remote(r, "mbarrier.arrive.expect_tx.shared::cluster");
    if (faulted(fault_kind::expect_tx_short, x.name()) && bytes >= 16) bytes -= 16;
    (void)x.arrive_expect_tx(bytes, arrive_sem<S>(), SC);
  }
  // mapa + mbarrier.arrive.shared::cluster, one instruction of the converged warp: lanes 0..n-1
  // arrive, lane r on CTA r's barrier. An
  // instruction issues for all its active lanes at once (a warp is never preempted inside one),
  // so the lanes meet and the last to come performs every lane's arrive in one step, each
  // knowing, in execution order, that the others' are done: lane 0's arrive on CTA 0 is then
  // ordered after lane 1's on CTA 1, which is what a protocol that waits on CTA 0's barrier and
  // then arrives on CTA 1's relies on (one-sided multicast).
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  void mbarrier_arrive_shared_cluster_lanes(barrier_type& b, uint32_t n, src_loc loc = src_loc::current()) const {
    w().at(loc);
    auto& parts = l_->warp_arrives(cta_, warp());
    if (lane() < n) {
      barrier& x = remote(mapa(b, lane()), "mbarrier.arrive.shared::cluster");
      if (!faulted(fault_kind::arrive_dropped, x.name())) parts.push_back({&x, w().current()});
    }
    named_barrier& nb = l_->warp_sync(cta_, warp());
    nb.wait(nb.arrive([this, &parts] {
      world& wd = w();
      std::vector<uint64_t> when(parts.size());
      for (size_t i = 0; i < parts.size(); ++i) when[i] = wd.clock(parts[i].second).tick_own(parts[i].second);
      for (auto& [bar, t] : parts)
        for (size_t i = 0; i < parts.size(); ++i) wd.clock(t).saw(parts[i].second, when[i]);
      for (size_t i = 0; i < parts.size(); ++i)
        parts[i].first->arrive_in_step(parts[i].second, when[i], arrive_sem<S>());
      parts.clear();
    }));
  }
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  bool mbarrier_try_wait_parity(barrier_type& b, uint32_t p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.try_wait.parity");
    return x.try_wait(p ^ uint32_t(faulted(fault_kind::parity_flipped, x.name())), wait_sem<S>());
  }
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  bool mbarrier_test_wait_parity(barrier_type& b, uint32_t p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.test_wait.parity");
    return x.test_wait(p ^ uint32_t(faulted(fault_kind::parity_flipped, x.name())), wait_sem<S>());
  }
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  void mbarrier_wait(barrier_type& b, parity p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    barrier& x = bar(b, "mbarrier.try_wait.parity");
    x.wait(p.value() ^ uint32_t(faulted(fault_kind::parity_flipped, x.name())), wait_sem<S>());
  }

  // ---- fences -------------------------------------------------------------------------------
  // The model's fence.proxy.async covers every state space.
  void fence_proxy_async(src_loc loc = src_loc::current()) const {
    w().at(loc);
    if (faulted(fault_kind::proxy_fence_dropped, "fence.proxy.async")) return w().yield();
    w().fence_proxy_async();
  }
  void fence_proxy_async_shared_cta(src_loc loc = src_loc::current()) const { fence_proxy_async(loc); }
  void fence_proxy_async_shared_cluster(src_loc loc = src_loc::current()) const { fence_proxy_async(loc); }
  void fence_proxy_async_global(src_loc loc = src_loc::current()) const { fence_proxy_async(loc); }
  void fence_mbarrier_init_release_cluster(src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().fence_mbarrier_init();
  }
  // fence.acq_rel / fence.sc: the model orders through its barriers' release/acquire only; a
  // fence here is a scheduling point.
  template <ptx::scope SC = ptx::scope::gpu>
  void fence_acq_rel(src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().yield();
  }
  template <ptx::scope SC = ptx::scope::gpu>
  void fence_sc(src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().yield();
  }

  // ---- bulk copies --------------------------------------------------------------------------
  template <class D, class S>
  void cp_async_bulk_shared_cluster_global(smem<D> dst, gmem<S> src, uint32_t bytes, barrier_type& b,
                                           src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().cp_async_bulk_shared_global(dst.buf(), dst.offset(), src.buf(), src.offset(), bytes,
                                    bar(b, "cp.async.bulk.shared::cluster.global"));
  }
  template <class D, class S>
  void cp_async_bulk_shared_cluster_global(smem<D> dst, gmem<S> src, uint32_t bytes, barrier_type& b, uint64_t policy,
                                           src_loc loc = src_loc::current()) const {
    w().at(loc);
    check_policy(policy, "cp.async.bulk.L2::cache_hint");
    cp_async_bulk_shared_cluster_global(dst, src, bytes, b, loc);
  }
  template <class D, class S>
  void cp_async_bulk_shared_cluster_global_multicast(smem<D> dst, gmem<S> src, uint32_t bytes, barrier_type& b,
                                                     uint16_t cta_mask, src_loc loc = src_loc::current()) const {
    w().at(loc);
    const char* op = "cp.async.bulk.shared::cluster.global.multicast::cluster";
    w().cp_async_bulk_shared_global_multicast(multicast_targets(dst.buf(), b, cta_mask, op), dst.offset(), src.buf(),
                                              src.offset(), bytes);
  }
  template <class D, class S>
  void cp_async_bulk_global_shared_cta(gmem<D> dst, smem<S> src, uint32_t bytes,
                                       src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().cp_async_bulk_global_shared(dst.buf(), dst.offset(), src.buf(), src.offset(), bytes);
  }
  template <class D, class S>
  void cp_async_bulk_global_shared_cta(gmem<D> dst, smem<S> src, uint32_t bytes, uint64_t policy,
                                       src_loc loc = src_loc::current()) const {
    w().at(loc);
    check_policy(policy, "cp.async.bulk.global.shared::cta.L2::cache_hint");
    cp_async_bulk_global_shared_cta(dst, src, bytes, loc);
  }
  template <class D, class S>
  void cp_async_bulk_shared_cluster_shared_cta(dsmem<D> dst, smem<S> src, uint32_t bytes, remote_barrier r,
                                               src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().cp_async_bulk_shared_cluster_shared_cta(dst.buf(), dst.offset(), src.buf(), src.offset(), bytes,
                                                remote(r, "cp.async.bulk.shared::cluster.shared::cta"));
  }
  // cp.async.bulk.prefetch.L2.global: no effect on the data; the range must lie in the buffer.
  template <class S>
  void cp_async_bulk_prefetch_L2_global(gmem<S> src, uint32_t bytes, src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().yield();
    if (bytes == 0 || bytes % 16 != 0 || src.offset() % 16 != 0 || src.offset() + bytes > src.buf().bytes())
      scheduler::misuse("cp.async.bulk.prefetch.L2.global of " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(src.offset()) + " of '" + src.buf().name() + "' (" +
                        std::to_string(src.buf().bytes()) + " bytes; size and offset multiples of 16)");
  }
  void cp_async_bulk_commit_group(src_loc loc = src_loc::current()) const {
    w().at(loc);
    w().cp_async_bulk_commit_group();
  }
  template <int N>
  void cp_async_bulk_wait_group(src_loc loc = src_loc::current()) const {
    w().at(loc);
    if (faulted(fault_kind::bulk_wait_dropped, "cp.async.bulk.wait_group")) return w().yield();
    w().cp_async_bulk_wait_group(unsigned(N));
  }
  template <int N>
  void cp_async_bulk_wait_group_read(src_loc loc = src_loc::current()) const {
    w().at(loc);
    if (faulted(fault_kind::bulk_wait_dropped, "cp.async.bulk.wait_group.read")) return w().yield();
    w().cp_async_bulk_wait_group_read(unsigned(N));
  }

  // ---- tensor copies ------------------------------------------------------------------------
  // A tensor copy ends with its coordinates, so its call site comes with the tensor map
  // (tensor_map_at, converted at the call).
  template <class D, class... C>
  void cp_async_bulk_tensor_shared_cluster_global(smem<D> dst, tensor_map_at map, barrier_type& b, C... c) const {
    w().at(map.loc);
    w().cp_async_bulk_tensor_shared_global(dst.buf(), dst.offset(), map.view, tensor_coords(c...),
                                           bar(b, "cp.async.bulk.tensor.shared::cluster.global"));
  }
  template <class D, class... C>
  void cp_async_bulk_tensor_shared_cluster_global_hint(smem<D> dst, tensor_map_at map, barrier_type& b, uint64_t policy,
                                                       C... c) const {
    w().at(map.loc);
    check_policy(policy, "cp.async.bulk.tensor.L2::cache_hint");
    cp_async_bulk_tensor_shared_cluster_global(dst, map, b, c...);
  }
  template <class D, class... C>
  void cp_async_bulk_tensor_shared_cluster_global_multicast(smem<D> dst, tensor_map_at map, barrier_type& b,
                                                            uint16_t cta_mask, C... c) const {
    w().at(map.loc);
    const char* op = "cp.async.bulk.tensor.shared::cluster.global.multicast::cluster";
    w().cp_async_bulk_tensor_shared_global_multicast(multicast_targets(dst.buf(), b, cta_mask, op), dst.offset(),
                                                     map.view, tensor_coords(c...));
  }
  template <class S, class... C>
  void cp_async_bulk_tensor_global_shared_cta(tensor_map_at map, smem<S> src, C... c) const {
    w().at(map.loc);
    w().cp_async_bulk_tensor_global_shared(map.view, tensor_coords(c...), src.buf(), src.offset());
  }
  template <class S, class... C>
  void cp_async_bulk_tensor_global_shared_cta_hint(tensor_map_at map, smem<S> src, uint64_t policy, C... c) const {
    w().at(map.loc);
    check_policy(policy, "cp.async.bulk.tensor.global.shared::cta.L2::cache_hint");
    cp_async_bulk_tensor_global_shared_cta(map, src, c...);
  }
  template <class... C>
  void cp_async_bulk_prefetch_tensor_L2_global(tensor_map_at map, C...) const {
    w().at(map.loc);
    w().yield();
    if (!map.view.mem) scheduler::misuse("cp.async.bulk.prefetch.tensor of a tensor_view without a buffer");
    if (sizeof...(C) != map.view.dims.size())
      scheduler::misuse("cp.async.bulk.prefetch.tensor with " + std::to_string(sizeof...(C)) +
                        " coordinates for a rank-" + std::to_string(map.view.dims.size()) + " tensor");
  }
  void prefetch_tensormap(const tensor_view&) const { w().yield(); }
  // createpolicy.fractional: an opaque policy; the model only checks that copies get one.
  uint64_t createpolicy_fractional_L2_evict_first() const { return kPolicy | 1u; }
  uint64_t createpolicy_fractional_L2_evict_normal() const { return kPolicy | 2u; }
  uint64_t createpolicy_fractional_L2_evict_last() const { return kPolicy | 3u; }

  // ---- sync ---------------------------------------------------------------------------------
  void syncthreads(src_loc loc = src_loc::current()) const {
    w().at(loc);
    l_->cta_sync(cta_).sync();
  }
  bool syncthreads_or(bool p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    named_barrier& nb = l_->cta_sync(cta_);
    auto& votes = l_->cta_votes(cta_);
    const uint64_t gen = nb.generation();
    votes[gen] = votes[gen] || p;
    nb.wait(nb.arrive());
    return votes[gen];
  }
  void syncwarp(src_loc loc = src_loc::current()) const {
    w().at(loc);
    l_->warp_sync(cta_, warp()).sync();
  }
  void bar_sync(uint32_t id, uint32_t count, src_loc loc = src_loc::current()) const {
    w().at(loc);
    l_->bar(cta_, check_bar(id, count), count).sync();
  }
  void bar_arrive(uint32_t id, uint32_t count, src_loc loc = src_loc::current()) const {
    w().at(loc);
    if (!w().options().faults.empty() && faulted(fault_kind::bar_arrive_dropped, "bar " + std::to_string(id)))
      return w().yield();
    (void)l_->bar(cta_, check_bar(id, count), count).arrive();
  }
  void barrier_cluster_arrive_aligned(src_loc loc = src_loc::current()) {
    w().at(loc);
    cluster_gen_ = l_->cluster_sync(cta_).arrive();
  }
  void barrier_cluster_wait_aligned(src_loc loc = src_loc::current()) const {
    w().at(loc);
    l_->cluster_sync(cta_).wait(cluster_gen_);
  }
  // elect.sync with a full mask: lane 0, once the warp has met.
  bool elect_one(src_loc loc = src_loc::current()) const {
    w().at(loc);
    syncwarp(loc);
    return lane() == 0;
  }
  // __shfl_sync(0xffffffff, v, src), __shfl_xor_sync(0xffffffff, v, mask) and
  // __ballot_sync(0xffffffff, p), through the warp's slots.
  uint32_t shfl_sync(uint32_t v, uint32_t src_lane, src_loc loc = src_loc::current()) const {
    w().at(loc);
    return uint32_t(exchange(v, loc)[src_lane % 32u]);
  }
  uint32_t shfl_xor_sync(uint32_t v, uint32_t lane_mask, src_loc loc = src_loc::current()) const {
    w().at(loc);
    return uint32_t(exchange(v, loc)[(lane() ^ lane_mask) % 32u]);
  }
  uint32_t ballot_sync(bool p, src_loc loc = src_loc::current()) const {
    w().at(loc);
    const auto all = exchange(p ? 1u : 0u, loc);
    uint32_t m = 0;
    for (uint32_t i = 0; i < all.size(); ++i) m |= uint32_t(all[i] != 0) << i;
    return m;
  }

  // The registers per thread each warp of the CTA has asked for (0: no setmaxnreg yet). PTX ISA,
  // setmaxnreg: registers come from a pool kept per CTA, and .inc blocks until enough are free in
  // it. The CTA holds limits::launch_regs_per_thread for each of its threads at launch, and
  // setmaxnreg only moves registers inside that pool: once the warps that have asked (the others
  // counted at the least they could give back, 24) want more than the pool, a setmaxnreg.inc
  // waits for ever on the GPU, whatever the order.
  struct register_split {
    std::vector<uint32_t> regs;
  };
  void register_split_to(uint32_t n, const char* what) const {
    auto& s = l_->template cta_shared<register_split>(cta_, "<setmaxnreg>");
    const uint32_t warps = (block_threads() + 31u) / 32u;
    if (s.regs.empty()) s.regs.assign(warps, 0u);
    s.regs.at(warp()) = n;
    uint64_t asked = 0;
    for (uint32_t r : s.regs) asked += r != 0 ? r : limits::min_setmaxnreg;
    const uint64_t pool = uint64_t(warps) * limits::launch_regs_per_thread(block_threads());
    if (asked > pool)
      scheduler::misuse(std::string(what) + " " + std::to_string(n) + " in warp " + std::to_string(warp()) +
                        " of CTA " + std::to_string(cta_) + ": its warps ask for " + std::to_string(asked / warps) +
                        "." + std::to_string(asked % warps * 100 / warps) + " registers per thread on average, " +
                        "beyond the " + std::to_string(limits::launch_regs_per_thread(block_threads())) + " a CTA of " +
                        std::to_string(block_threads()) +
                        " threads holds at launch; on the GPU a setmaxnreg.inc waits for ever");
  }

  // ---- faults (fault.hpp) -------------------------------------------------------------------
  // Whether the run plants the kernel's own fault `hook` (run_options::faults, kernel_hook): the
  // device target's answer is constant false.
  bool planted(const char* hook) const { return faulted(fault_kind::kernel_hook, hook); }

  // ---- other --------------------------------------------------------------------------------
  template <uint32_t N>
  void setmaxnreg_inc() const {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: count must be a multiple of 8 in 24..256");
    register_split_to(N, "setmaxnreg.inc");
  }
  template <uint32_t N>
  void setmaxnreg_dec() const {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: count must be a multiple of 8 in 24..256");
    register_split_to(N, "setmaxnreg.dec");
  }
  // One launch at a time on the model: the prerequisite grid has completed.
  void griddepcontrol_wait() const { w().yield(); }
  void griddepcontrol_launch_dependents() const { w().yield(); }
  // The scheduler's step count: a spin on it yields at each poll.
  long long clock64() const {
    w().yield();
    return (long long)w().steps();
  }

  // ---- shared-window addresses and tensor cores (shared_window.hpp, wgmma.hpp) --------------
  // cvta.to.shared: the address of v in this CTA's shared window (the buffer's base + offset).
  template <class E>
  uint32_t smem_addr(smem<E> v) const {
    const buffer& b = v.buf();
    if (b.where() != space::shared || b.cta() != int(cta_))
      scheduler::misuse("smem_addr by " + who() + " of '" + b.name() + "', not a shared buffer of its CTA");
    return w().smem_window().address(b, v.offset());
  }
  // wgmma.fence / mma_async / commit_group / wait_group N of this thread's warpgroup: the 128
  // threads meet at each (.sync.aligned); the operands are read from the shared buffers under the
  // descriptors' addresses; d is written when mma_async is issued (see wgmma.hpp for the rules).
  void wgmma_fence(src_loc loc = src_loc::current()) const {
    w().at(loc);
    tensor_cores().fence(w(), tid_ % 128u);
  }
  template <int N, int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
  void wgmma_m64nNk16_f32_bf16_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, bool scale_d,
                                    src_loc loc = src_loc::current()) const {
    w().at(loc);
    static_assert(ptx::wgmma_n_instantiated(N),
                  "wgmma .m64nNk16 bf16: N = 64, 80, 128, 160, 192 or 256, as on the device");
    static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
    static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
    static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
    static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
    wgmma_mma_args a;
    a.n = N, a.scale_a = ScaleA, a.scale_b = ScaleB, a.trans_a = TransA, a.trans_b = TransB;
    a.desc_a = desc_a, a.desc_b = desc_b, a.scale_d = scale_d;
    tensor_cores().mma_async(w(), tid_ % 128u, a, d);
  }
  // The form with A in registers: a holds this thread's A fragment (eight bf16, two a register).
  template <int N, int ScaleA = 1, int ScaleB = 1, int TransB = 0>
  void wgmma_m64nNk16_f32_bf16_bf16(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b, bool scale_d,
                                    src_loc loc = src_loc::current()) const {
    w().at(loc);
    static_assert(ptx::wgmma_rs_n_instantiated(N),
                  "wgmma .m64nNk16 bf16, A in registers: N = 64, 128, 192 or 256, as on the device");
    static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
    static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
    static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
    wgmma_mma_args args;
    args.n = N, args.scale_a = ScaleA, args.scale_b = ScaleB, args.trans_b = TransB;
    args.a_in_registers = true, args.desc_b = desc_b, args.scale_d = scale_d;
    tensor_cores().mma_async(w(), tid_ % 128u, args, d, a);
  }
  void wgmma_commit_group(src_loc loc = src_loc::current()) const {
    w().at(loc);
    tensor_cores().commit_group(w(), tid_ % 128u);
  }
  template <int N>
  void wgmma_wait_group(src_loc loc = src_loc::current()) const {
    w().at(loc);
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
    const bool short_wait = N < 7 && faulted(fault_kind::wgmma_wait_short, "wgmma.wait_group");
    tensor_cores().wait_group(w(), tid_ % 128u, unsigned(N) + unsigned(short_wait));
  }
  // The register hazard is not modelled (the model writes d, and reads an A fragment, at issue):
  // nothing to do.
  template <class E, int R>
  void wgmma_fence_operand(E (&)[R]) const {}
  // ---- call sites ---------------------------------------------------------------------------
  // The pipeline's callers' call sites (hopper/source_location.hpp): pinned for the members the
  // pipeline calls on their behalf.
  using source_location_type = src_loc;
  void pin_source(const src_loc& loc) const { w().pin(loc); }
  void unpin_source() const { w().unpin(); }

  // ---- traces (hopper/trace/trace.hpp) -------------------------------------------------------------
  void record(trace::event e, uint32_t stage, uint32_t iter, uint32_t role) const {
    auto* tl = l_->timeline();
    if (!tl || lane() != 0) return;
    trace::record r{};
    r.time_ns = w().steps() * 1000;  // the scheduler's step count, shown as 1 us per step
    r.cta = uint16_t(cta_);
    r.warp = uint8_t(warp());
    r.kind = uint8_t(e);
    r.stage = uint8_t(stage);
    r.role = uint8_t(role);
    r.iter = uint16_t(iter);
    tl->push_back(r);
  }

 private:
  world& w() const { return l_->w(); }
  // The model's tensor core of this thread's warpgroup.
  wgmma_warpgroup& tensor_cores() const {
    return l_->template cta_shared<wgmma_cta>(cta_, "(tensor cores)")
        .warpgroup(int(cta_), warpgroup(), block_threads());
  }

  static constexpr uint64_t kPolicy = 0x1000000000000000ull;

  // A tensor copy's coordinates are the instruction's .s32 operands: a value outside int32 (the
  // device would truncate it to another box) is reported with its position and value.
  template <class... C>
  static std::vector<int64_t> tensor_coords(C... c) {
    static_assert((std::is_integral<C>::value && ...), "tensor coordinates are integers");
    std::vector<int64_t> v;
    size_t d = 0;
    auto one = [&](auto x) {
      const bool fits = std::is_signed<decltype(x)>::value ? int64_t(x) >= INT32_MIN && int64_t(x) <= INT32_MAX
                                                           : uint64_t(x) <= uint64_t(INT32_MAX);
      if (!fits)
        throw model_error(error_kind::undefined_behavior, "cp.async.bulk.tensor: coordinate " + std::to_string(d) +
                                                              " is " + std::to_string(x) +
                                                              ", outside the instruction's 32-bit signed range");
      v.push_back(int64_t(x));
      ++d;
    };
    (one(c), ...);
    return v;
  }

  // The .sem an mbarrier arrive or wait takes, checked at compile time as the PTX layer does.
  template <ptx::sem S>
  static constexpr ptx::sem arrive_sem() {
    static_assert(S == ptx::sem::release || S == ptx::sem::relaxed, "mbarrier arrive: .sem must be release or relaxed");
    return S;
  }
  template <ptx::sem S>
  static constexpr ptx::sem wait_sem() {
    static_assert(S == ptx::sem::acquire || S == ptx::sem::relaxed, "mbarrier wait: .sem must be acquire or relaxed");
    return S;
  }
  static uint64_t token(const mbarrier_token& t) { return t.phase; }

  // The acting task and the call site of its operation (the caller of the target member).
  std::string who() const { return w().where_at(w().current()); }

  // Whether the run plants fault `k` on the object named `name` (no allocation when none is planted).
  bool faulted(fault_kind k, std::string_view name) const {
    const auto& f = w().options().faults;
    return !f.empty() && model::planted(f, k, name);
  }
  barrier& bar(barrier_type& b, const char* op) const {
    w().touch(scheduler::setup_object(int(cta_)), access::read);  // b.b is set by the first init
    if (!b.b)
      throw model_error(error_kind::undefined_behavior, std::string(op) + " by " + who() + " on a barrier of CTA " +
                                                            std::to_string(cta_) +
                                                            " that no thread has initialised (mbarrier.init)");
    return *b.b;
  }
  barrier& remote(remote_barrier r, const char* op) const {
    if (!r.b)
      throw model_error(error_kind::undefined_behavior,
                        std::string(op) + " by " + who() + " on a peer CTA's barrier that was never initialised");
    return *r.b;
  }
  uint32_t peer_cta(uint32_t rank, const char* op) const {
    const uint32_t n = l_->shape().cluster;
    if (rank >= n)
      throw model_error(error_kind::undefined_behavior, std::string(op) + " by " + who() + " to rank " +
                                                            std::to_string(rank) + " of a cluster of " +
                                                            std::to_string(n) + " CTAs");
    return cta_ - cta_ % n + rank;
  }
  // The (buffer, barrier) of every CTA of the mask: the same buffer name and barrier place.
  std::vector<world::target> multicast_targets(buffer& dst, barrier_type& b, uint16_t mask, const char* op) const {
    const uint32_t n = l_->shape().cluster;
    if (mask == 0)
      throw model_error(error_kind::undefined_behavior, std::string(op) + " by " + who() + " with ctaMask 0");
    if (n < 16 && (mask >> n) != 0) {
      char m[8];
      std::snprintf(m, sizeof m, "0x%04x", unsigned(mask));
      throw model_error(error_kind::undefined_behavior,
                        std::string(op) + " by " + who() + " with ctaMask " + m + ": bit " +
                            std::to_string(31 - __builtin_clz(unsigned(mask))) + " is outside the cluster of " +
                            std::to_string(n) + " CTAs");
    }
    std::vector<world::target> out;
    for (uint32_t r = 0; r < n; ++r) {
      if (!(mask >> r & 1u)) continue;
      const uint32_t c = cta_ - cta_ % n + r;
      barrier* pb = l_->peer_slot(b, cta_, c).b;
      if (!pb)
        throw model_error(error_kind::undefined_behavior, std::string(op) + " by " + who() +
                                                              " signals the barrier of CTA " + std::to_string(c) +
                                                              ", which no thread has initialised");
      out.push_back({&l_->peer_buffer(dst, c), pb});
    }
    return out;
  }
  static void check_policy(uint64_t policy, const char* op) {
    if ((policy & ~uint64_t(3)) != kPolicy)
      scheduler::misuse(std::string(op) + " with a cache policy that no createpolicy made");
  }
  static uint32_t check_bar(uint32_t id, uint32_t count) {
    if (id > 15)
      throw model_error(error_kind::undefined_behavior, "named barrier id " + std::to_string(id) + " (0..15)");
    if (count == 0 || count % 32 != 0 || count > 1024)
      throw model_error(error_kind::undefined_behavior, "named barrier " + std::to_string(id) + " with " +
                                                            std::to_string(count) +
                                                            " threads (a multiple of 32 in 32..1024)");
    return id;
  }
  std::vector<uint64_t> exchange(uint64_t v, src_loc loc) const {
    auto& slots = l_->warp_exchange(cta_, warp());
    slots[lane()] = v;
    syncwarp(loc);
    std::vector<uint64_t> all = slots;
    syncwarp(loc);  // no lane writes its slot again before every lane has read
    return all;
  }

  launch_state* l_;
  uint32_t cta_;
  uint32_t tid_;
  uint64_t cluster_gen_ = 0;
};

// ---- host-side setup, for the launch's lambda ------------------------------------------------

// The world the thread runs in.
inline world& world_of(const target& t) { return t.w(); }
// The CTA's one object of type T named `name` (barrier storage): the same object for all its threads.
template <class T>
T& cta_shared(const target& t, const std::string& name) {
  return t.l_->template cta_shared<T>(t.cta_, name);
}
// A shared buffer of `stages` x `stage_bytes` bytes of the thread's CTA (its accesses tracked to the
// byte), the same buffer for all its threads.
inline smem<uint8_t> shared_buffer(const target& t, const std::string& name, size_t stages, size_t stage_bytes) {
  return smem<uint8_t>(t.l_->shared_buffer(t.cta_, name, stages, stage_bytes));
}
// The model's tensor core of the thread's warpgroup (for tests that drive wgmma directly).
inline wgmma_warpgroup& wgmma_unit(const target& t) { return t.tensor_cores(); }

// Spawns one task per thread of the grid, each running body(target&). Run the world afterwards.
// `timeline`, if given, receives the pipeline's trace records.
template <class Body>
std::shared_ptr<launch_state> launch(world& w, launch_shape s, Body body,
                                     std::vector<trace::record>* timeline = nullptr) {
  auto st = std::make_shared<launch_state>(w, s, timeline);
  for (uint32_t c = 0; c < s.grid; ++c)
    for (uint32_t t = 0; t < s.block; ++t)
      w.spawn(
          "thread " + std::to_string(t) + " (warp " + std::to_string(t / 32) + " lane " + std::to_string(t % 32) + ")",
          [st, c, t, body] {
            target tg(*st, c, t);
            body(tg);
          },
          int(c));
  return st;
}

}  // namespace hopper::model
