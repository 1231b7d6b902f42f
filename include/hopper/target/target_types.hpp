// A target's memory views by name, for code written once over a target (the kernels' bodies):
// gmem_of<Tg, E> and smem_of<Tg, E> are the global- and shared-memory views of elements E that
// target Tg hands out (hopper::gmem / smem on the GPU, the model's checked views on the host).
#pragma once

namespace hopper {

template <class Tg, class E>
using gmem_of = typename Tg::template gmem_t<E>;
template <class Tg, class E>
using smem_of = typename Tg::template smem_t<E>;

}  // namespace hopper
