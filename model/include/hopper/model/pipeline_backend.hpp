// The host backend of hopper::pipeline (include/hopper/pipeline.cuh): the same pipeline class,
// with the model's barriers in place of the hardware's. Each task of the model is one warp, so
// "every lane of the warp" is the task itself (warp_sync does nothing, warp_leader is true).
//
// One backend object per task. It knows the task's CTA, its rank in the cluster and the barrier
// storage of every CTA of the cluster, so that a remote arrive (mapa + arrive.shared::cluster)
// lands on the barrier at the same offset in the peer's storage, as on the GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hopper/model/barrier.hpp"
#include "hopper/model/named_barrier.hpp"
#include "hopper/model/world.hpp"
#include "hopper/pipeline.cuh"
#include "hopper/trace.cuh"

namespace hopper::model {

// What the tasks of one run share: where the pipeline's barriers of each CTA live, the CTA and
// cluster barriers (bar.sync 0 / barrier.cluster), and the timeline.
struct pipeline_host {
  world* w = nullptr;
  std::vector<barrier**> storage;            // per CTA: the first barrier handle of its storage
  std::vector<named_barrier*> cta_sync;      // per CTA: __syncthreads of all its tasks
  std::vector<named_barrier*> cluster_sync;  // per cluster: barrier.cluster of all its tasks
  uint32_t cluster_size = 1;
  std::vector<trace::record>* timeline = nullptr;  // null: no trace kept
};

class pipeline_backend {
 public:
  using barrier_type = barrier*;        // a handle; the pipeline's storage holds one per barrier
  static constexpr bool traced = true;  // the model always keeps the timeline when asked to

  pipeline_backend(pipeline_host& h, int cta, uint32_t warp, bool initialiser)
      : h_(&h), cta_(cta), warp_(warp), initialiser_(initialiser) {
    if (cta < 0 || size_t(cta) >= h.storage.size())
      scheduler::misuse("pipeline_backend: CTA " + std::to_string(cta) + " has no barrier storage (" +
                        std::to_string(h.storage.size()) + " CTAs)");
    if (h.cluster_size == 0 || h.storage.size() % h.cluster_size != 0)
      scheduler::misuse("pipeline_backend: " + std::to_string(h.storage.size()) + " CTAs do not form clusters of " +
                        std::to_string(h.cluster_size));
  }

  int cta() const { return cta_; }
  uint32_t rank() const { return uint32_t(cta_) % h_->cluster_size; }

  bool init_thread() const { return initialiser_; }
  void init(barrier_type& b, uint32_t count, const char* = nullptr, uint32_t = 0) { b->init(count); }
  void fence_init() { h_->w->fence_mbarrier_init(); }
  void sync_cta() { h_->cta_sync.at(size_t(cta_))->sync(); }
  void sync_cluster() { h_->cluster_sync.at(size_t(cta_) / h_->cluster_size)->sync(); }
  void arrive_expect_tx(barrier_type& b, uint32_t bytes) { (void)b->arrive_expect_tx(bytes); }
  // .release orders this task's earlier accesses before the arrival; .relaxed orders nothing,
  // so the model reports a hazard where a consumer's generic reads relied on it.
  template <release_sem S = release_sem::release>
  void arrive(barrier_type& b) {
    (void)b->arrive(1, model_sem<S>());
  }
  // One arrival on the barrier at the same offset in each CTA rank 0..n-1 of this cluster (mapa);
  // the task is the whole warp, so it makes the n arrivals that n lanes make on the GPU.
  template <release_sem S = release_sem::release>
  void arrive_each_cta(barrier_type& b, uint32_t n) {
    for (uint32_t r = 0; r < n; ++r) (void)peer(b, r)->arrive(1, model_sem<S>());
  }
  void wait(barrier_type& b, uint32_t parity, bool /*cluster_scope*/) { b->wait(parity); }
  void warp_sync() {}
  bool warp_leader() const { return true; }

  void record(trace::event e, uint32_t stage, uint32_t iter, uint32_t role) {
    if (!h_->timeline) return;
    trace::record r{};
    r.time_ns = h_->w->steps() * 1000;  // the scheduler's step count, shown as 1 us per step
    r.cta = uint16_t(cta_);
    r.warp = uint8_t(warp_);
    r.kind = uint8_t(e);
    r.stage = uint8_t(stage);
    r.role = uint8_t(role);
    r.iter = uint16_t(iter);
    h_->timeline->push_back(r);
  }

  // The handle at the same position as `b` in the storage of CTA `rank` of this cluster.
  barrier* peer(barrier_type& b, uint32_t rank) const {
    if (rank >= h_->cluster_size)
      scheduler::misuse("pipeline_backend: rank " + std::to_string(rank) + " outside a cluster of " +
                        std::to_string(h_->cluster_size));
    barrier** base = h_->storage[size_t(cta_)];
    const ptrdiff_t off = &b - base;
    const size_t peer_cta = size_t(cta_) - rank_of(cta_) + rank;
    return h_->storage[peer_cta][off];
  }

 private:
  template <release_sem S>
  static constexpr sem model_sem() {
    return S == release_sem::relaxed ? sem::relaxed : sem::release;
  }
  uint32_t rank_of(int cta) const { return uint32_t(cta) % h_->cluster_size; }

  pipeline_host* h_;
  int cta_;
  uint32_t warp_;
  bool initialiser_;
};

}  // namespace hopper::model
