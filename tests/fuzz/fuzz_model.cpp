// The model's launch options and misuse paths: random run options, launch shapes and short
// programs of barrier operations (init with any count, arrivals, transactions, waits on either
// parity, named barriers, fences) on a small world. Every run ends clean or in a model_error with
// a message; never another exception, a crash, a hang or a sanitizer report.
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"

using namespace hopper_fuzz;
namespace m = hopper::model;

namespace {

struct op {
  uint32_t code, who, bar;
  uint64_t a, b;
};

enum : uint32_t {
  init,
  arrive,
  arrive_count,
  arrive_expect_tx,
  expect_tx,
  arrive_drop,
  try_wait,
  wait,
  inval,
  bar_sync,
  bar_arrive,
  syncthreads,
  syncwarp,
  fence_proxy,
  fence_init,
  cluster_sync,
  op_count
};

// Whether thread t of the block runs an op meant for `who`.
bool runs(uint32_t who, uint32_t t) {
  switch (who) {
    case 0:
      return true;
    case 1:
      return t == 0;
    case 2:
      return t < 32;
    default:
      return t % 2 == 1;
  }
}

void step(m::target& t, const op& o, hopper::pipeline_storage<2, m::target::barrier_type>& s) {
  auto& b = s.full[o.bar];
  switch (o.code) {
    case init:
      t.mbarrier_init(b, uint32_t(o.a), "fuzz", o.bar);
      break;
    case arrive:
      (void)t.mbarrier_arrive(b);
      break;
    case arrive_count:
      (void)t.mbarrier_arrive(b, uint32_t(o.a));
      break;
    case arrive_expect_tx:
      (void)t.mbarrier_arrive_expect_tx(b, uint32_t(o.a));
      break;
    case expect_tx:
      t.mbarrier_expect_tx(b, uint32_t(o.a));
      break;
    case arrive_drop:
      (void)t.mbarrier_arrive_drop(b);
      break;
    case try_wait:
      (void)t.mbarrier_try_wait_parity(b, uint32_t(o.a));
      break;
    case wait:
      t.mbarrier_wait(b, hopper::parity(uint32_t(o.a & 1)));
      break;
    case inval:
      t.mbarrier_inval(b);
      break;
    case bar_sync:
      t.bar_sync(uint32_t(o.a), uint32_t(o.b));
      break;
    case bar_arrive:
      t.bar_arrive(uint32_t(o.a), uint32_t(o.b));
      break;
    case syncthreads:
      t.syncthreads();
      break;
    case syncwarp:
      t.syncwarp();
      break;
    case fence_proxy:
      t.fence_proxy_async();
      break;
    case fence_init:
      t.fence_mbarrier_init_release_cluster();
      break;
    default:
      t.barrier_cluster_arrive_aligned();
      t.barrier_cluster_wait_aligned();
      break;
  }
}

}  // namespace

std::vector<seed> hopper_fuzz_seeds() {
  // seed, step_limit, spurious %, own stack?, stack_bytes, max_threads, grid, block, cluster, ops
  // (count, then code, who, bar, a, b each).
  const seed opts = {wide(1), wide(20000), wide(20), small(0), wide(0), wide(64)};
  return {
      cat({opts,
           {wide(1), wide(64), wide(1), small(3)},
           {small(init), small(1), small(0), wide(64), wide(0)},
           {small(syncthreads), small(0), small(0), wide(0), wide(0)},
           {small(arrive), small(0), small(0), wide(0), wide(0)}}),
      cat({opts,
           {wide(2), wide(32), wide(2), small(4)},
           {small(init), small(1), small(1), wide(1), wide(0)},
           {small(cluster_sync), small(0), small(0), wide(0), wide(0)},
           {small(arrive_expect_tx), small(1), small(1), wide(64), wide(0)},
           {small(wait), small(0), small(1), wide(0), wide(0)}}),
      cat({opts,
           {wide(1), wide(64), wide(1), small(2)},
           {small(bar_sync), small(0), small(0), wide(1), wide(64)},
           {small(bar_arrive), small(2), small(0), wide(2), wide(64)}}),
  };
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  input in(data, size);
  m::run_options o;
  o.seed = in.u64();
  // The harness bounds a run's length so that every input runs in milliseconds; the rejections
  // of larger values are the model's own (model_misuse.cpp tests them).
  const uint64_t limit = in.u64();
  o.step_limit = limit < 20000 ? limit : 20000;
  o.spurious_fail_percent = in.u32();
  const bool own_stack = in.flag();
  const uint64_t stack = in.u64();
  o.stack_bytes = own_stack ? size_t(stack) : 64 * 1024;
  const uint32_t threads = in.u32();
  o.max_threads = threads < 128 ? threads : 128;
  m::launch_shape shape;
  shape.grid = in.u32(), shape.block = in.u32(), shape.cluster = in.u32();
  std::vector<op> prog(in.pick(12));
  for (op& p : prog) {
    p.code = in.pick(op_count), p.who = in.pick(4), p.bar = in.pick(2);
    p.a = in.u64(), p.b = in.u64();
  }
  try {
    m::world w(o);
    m::launch(w, shape, [&prog](m::target& t) {
      auto& s = m::cta_shared<hopper::pipeline_storage<2, m::target::barrier_type>>(t, "fuzz");
      for (const op& p : prog)
        if (runs(p.who, t.thread())) step(t, p, s);
    });
    w.run();
  } catch (const m::model_error& e) {
    require(std::string(e.what()).size() > 0, "a model_error without a message");
  }
  return 0;
}
