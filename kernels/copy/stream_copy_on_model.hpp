// The streaming copies launched on the executable model from the plan their CUDA launchers
// launch (kernels/copy/stream_copy_plan.hpp): the same entry's body
// (kernels/copy/stream_copy_body.hpp), block, shared memory, tensor maps' shape and grid, every
// thread a task. What the model tests and the showcase's no-GPU path share. The grid is the
// plan's on a model device of model_sms SMs, where every CTA the config asks for fits.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "kernels/copy/stream_copy_body.hpp"
#include "kernels/copy/stream_copy_plan.hpp"
#include "kernels/dispatch.hpp"

namespace hopper::kernels::on_model {

using hopper::model::buffer;
using hopper::model::gmem;
using hopper::model::launch;
using hopper::model::model_error;
using hopper::model::run_options;
using hopper::model::target;
using hopper::model::world;

inline constexpr uint32_t model_sms = 2;

// Runtime stage count and lag to the body's template parameters (the counts the tests use).
template <class F>
inline void with_stages(uint32_t stages, F&& f) {
  if (!one_of<2, 3, 4>(stages))
    throw std::invalid_argument("stages = " + std::to_string(stages) + " is not instantiated on the model (2, 3, 4)");
  with_value<2, 3, 4>(stages, f);
}
template <class F>
inline void with_lag(uint32_t lag, F&& f) {
  with_value<0, 1, 2>(lag, f);
}

// The plan's grid on the model device: model_sms SMs, blocks_per_sm CTAs fitting on each.
inline uint32_t grid_of(const copy_plan& p) { return p.grid(model_sms, p.blocks_per_sm); }

// The 2-D plan's tensor map over `b`, as stream_copy_2d_plan encodes it on the GPU.
inline hopper::model::tensor_view map_of(const copy_plan& p, buffer& b) {
  hopper::model::tensor_view v;
  v.mem = &b;
  v.elem_bytes = stream_copy_2d_elem_bytes;
  v.dims = {stream_copy_2d_row_elems, p.rows};
  v.strides = {stream_copy_2d_row_bytes};
  v.box = {stream_copy_2d_row_elems, p.box_rows};
  return v;
}

// The ldst entry's instance for the plan's store kind and transform, run by one thread.
template <int S>
void ldst_instance(const copy_plan& p, target& t, typename pipeline<S, target>::storage& ring,
                   hopper::model::smem<uint8_t> stages, gmem<uint8_t> d, gmem<const uint8_t> s) {
  using hopper::kernels::detail::st_kind;
  auto run = [&](auto kind, auto axpb) {
    ldst_body<S, decltype(axpb)::value, decltype(kind)::value>(t, ring, stages, d, s, p.bytes, p.stage_bytes, p.knobs,
                                                               p.a, p.b);
  };
  auto with_kind = [&](auto axpb) {
    if (p.store == st_kind::cs)
      run(std::integral_constant<st_kind, st_kind::cs>{}, axpb);
    else if (p.store == st_kind::hint)
      run(std::integral_constant<st_kind, st_kind::hint>{}, axpb);
    else
      run(std::integral_constant<st_kind, st_kind::wb>{}, axpb);
  };
  if (p.axpb)
    with_kind(std::true_type{});
  else
    with_kind(std::false_type{});
}

// The plan's entry, instantiated with S stages and its store lag, launched into `w`.
template <int S>
void launch_stages(world& w, const copy_plan& p, buffer& dst, buffer& src) {
  using ring_t = typename hopper::pipeline<S, target>::storage;
  const hopper::model::launch_shape shape{grid_of(p), p.threads, 1};
  auto ring_of = [](target& t) -> ring_t& { return hopper::model::cta_shared<ring_t>(t, "ring"); };
  auto stages_of = [&p](target& t) { return hopper::model::shared_buffer(t, "stages", p.ring_stages, p.stage_bytes); };
  switch (p.entry) {
    case copy_entry::ldst:
      launch(w, shape, [&p, &dst, &src, ring_of, stages_of](target& t) {
        ldst_instance<S>(p, t, ring_of(t), stages_of(t), gmem<uint8_t>(dst), gmem<const uint8_t>(src));
      });
      return;
    case copy_entry::copy_1d:
      return with_lag(p.store_lag, [&](auto lg) {
        launch(w, shape, [&p, &dst, &src, ring_of, stages_of](target& t) {
          copy_1d_body<S, decltype(lg)::value>(t, ring_of(t), stages_of(t), gmem<uint8_t>(dst),
                                               gmem<const uint8_t>(src), p.bytes, p.stage_bytes, p.knobs);
        });
      });
    case copy_entry::copy_2d:
      return with_lag(p.store_lag, [&](auto lg) {
        launch(w, shape, [&p, &dst, &src, ring_of, stages_of, dv = map_of(p, dst), sv = map_of(p, src)](target& t) {
          copy_2d_body<S, decltype(lg)::value>(t, ring_of(t), stages_of(t), dv, sv, gmem<uint8_t>(dst),
                                               gmem<const uint8_t>(src), p.bytes, p.rows, p.box_rows, p.knobs);
        });
      });
    case copy_entry::axpb_bf16:
      return with_lag(p.store_lag, [&](auto lg) {
        launch(w, shape, [&p, &dst, &src, ring_of, stages_of](target& t) {
          auto& ready = hopper::model::cta_shared<hopper::kernels::detail::ready_barriers<S, target>>(t, "ready");
          axpb_body<S, decltype(lg)::value>(t, ring_of(t), ready, stages_of(t), gmem<uint16_t>(dst),
                                            gmem<const uint16_t>(src), p.bytes / 2u, p.a, p.b, p.stage_bytes, p.knobs);
        });
      });
  }
}

// Launches plan `p` into `w`: `dst` and `src` must be the buffers whose host addresses the plan
// was made (and checked) with. Run `w` afterwards, while `p` lives (every thread reads it).
inline void launch_copy(world& w, const copy_plan& p, buffer& dst, buffer& src) {
  if (p.dst != dst.host_data() || p.src != src.host_data())
    throw std::invalid_argument("hopper: launch_copy on the model: the plan was made for other buffers than '" +
                                dst.name() + "' and '" + src.name() + "'");
  if (p.empty()) return;
  with_stages(p.stages, [&](auto st) { launch_stages<decltype(st)::value>(w, p, dst, src); });
}

struct outcome {
  std::string error;  // empty: the run was clean
  std::vector<uint8_t> out;
};

// One world made with `o` (deeper task stacks), holding `in` as "src" and a poisoned "dst".
struct copy_world {
  world w;
  buffer& src;
  buffer& dst;

  copy_world(run_options o, const std::vector<uint8_t>& in, uint8_t poison)
      : w(deeper(o)), src(w.make_global("src", in.size())), dst(w.make_global("dst", in.size())) {
    std::memcpy(src.host_data(), in.data(), in.size());
    std::memset(dst.host_data(), poison, in.size());
  }

  // Launches the plan `make(dst, src)` gives, runs the world, and returns the report and dst.
  template <class Make>
  outcome run(Make&& make) {
    const copy_plan p = make(static_cast<void*>(dst.host_data()), static_cast<const void*>(src.host_data()));
    launch_copy(w, p, dst, src);
    outcome r;
    try {
      w.run();
    } catch (const model_error& e) {
      r.error = e.what();
    }
    r.out.assign(dst.host_data(), dst.host_data() + dst.bytes());
    return r;
  }

 private:
  static run_options deeper(run_options o) {
    o.stack_bytes = 64 * 1024;
    return o;
  }
};

// One run of stream_copy_1d(dst, src, in.size(), c) on the model, its world made with `o`.
inline outcome run_copy_1d(const stream_copy_config& c, const std::vector<uint8_t>& in, run_options o) {
  copy_world cw(o, in, 0xA5);
  return cw.run([&](void* d, const void* s) { return copy_plan::copy_1d(d, s, in.size(), c); });
}

inline outcome run_copy_1d(const stream_copy_config& c, const std::vector<uint8_t>& in, uint64_t seed) {
  run_options o;
  o.seed = seed;
  return run_copy_1d(c, in, o);
}

// One run of stream_copy_2d(dst, src, in.size(), c) on the model.
inline outcome run_copy_2d(const stream_copy_config& c, const std::vector<uint8_t>& in, run_options o) {
  copy_world cw(o, in, 0x5A);
  return cw.run([&](void* d, const void* s) { return copy_plan::copy_2d(d, s, in.size(), c); });
}

// One run of stream_axpb_bf16(y, x, n, a, b, c) on the model: `x` holds the n elements' bits.
inline outcome run_axpb_bf16(const stream_copy_config& c, const std::vector<uint16_t>& x, float a, float b,
                             run_options o) {
  std::vector<uint8_t> in(x.size() * 2);
  std::memcpy(in.data(), x.data(), in.size());
  copy_world cw(o, in, 0xFF);
  return cw.run([&](void* y, const void* xs) { return copy_plan::axpb_bf16(y, xs, x.size(), a, b, c); });
}

}  // namespace hopper::kernels::on_model
