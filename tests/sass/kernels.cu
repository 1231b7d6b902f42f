// The kernels whose SASS tests/host/kernels_sass.cpp compares with tests/sass/kernels_reference.txt.
// The include order is part of the reference: the first declaration of the dynamic shared array
// `stage_mem` (stream_copy.cuh's, 1024-aligned) sets its alignment for every kernel of the unit.
// clang-format off
#include "kernels/copy/stream_copy.cuh"
#include "kernels/hazard_lab/hazard_lab.cuh"
#include "apps/pipeline_stream.cuh"
// clang-format on
namespace k = hopper::kernels;
namespace hl = hopper::kernels::hazard_lab::detail;
void* instances[] = {
    (void*)&k::stream_copy_1d_kernel<2, 0>,
    (void*)&k::stream_copy_1d_kernel<8, 1>,
    (void*)&k::stream_copy_1d_kernel<16, 2>,
    (void*)&k::stream_copy_2d_kernel<2, 0>,
    (void*)&k::stream_copy_2d_kernel<8, 1>,
    (void*)&k::stream_axpb_bf16_kernel<2, 0>,
    (void*)&k::stream_axpb_bf16_kernel<8, 1>,
    (void*)&k::stream_ldst_kernel<2, false, k::detail::st_kind::wb>,
    (void*)&k::stream_ldst_kernel<2, true, k::detail::st_kind::wb>,
    (void*)&k::stream_ldst_kernel<6, false, k::detail::st_kind::cs>,
    (void*)&k::stream_ldst_kernel<8, true, k::detail::st_kind::hint>,
    (void*)&hl::raw_proxy_bulk_store<true>,
    (void*)&hl::raw_proxy_bulk_store<false>,
    (void*)&hl::raw_proxy_dsmem_copy<true>,
    (void*)&hl::raw_proxy_dsmem_copy<false>,
    (void*)&hl::war_refill_before_release<true>,
    (void*)&hl::war_refill_before_release<false>,
    (void*)&hl::war_store_source_reuse<true>,
    (void*)&hl::war_store_source_reuse<false>,
    (void*)&hl::release_acquire_mbarrier<true>,
    (void*)&hl::release_acquire_mbarrier<false>,
    (void*)&hl::check_slots,
    (void*)&hopper::apps::pipeline_stream_kernel<4, false>,
    (void*)&hopper::apps::pipeline_stream_kernel<4, true>,
};
