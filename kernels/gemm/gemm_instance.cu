// One translation unit that instantiates the main GEMM kernel (128 x 256 tiles, 4 stages,
// clusters of 2 x 1, bf16 out, both operands K-major) and nothing else, so that tests/host/gemm_sass.cpp
// can compile it to a cubin and inspect its SASS. HOPPER_GEMM_INSTANCE_* pick another instance.
#include "kernels/gemm/gemm_kernel.cuh"

#ifndef HOPPER_GEMM_INSTANCE_BN
#define HOPPER_GEMM_INSTANCE_BN 256
#define HOPPER_GEMM_INSTANCE_STAGES 4
#endif
#ifndef HOPPER_GEMM_INSTANCE_CLUSTER_M
#define HOPPER_GEMM_INSTANCE_CLUSTER_M 2
#endif
#ifndef HOPPER_GEMM_INSTANCE_CLUSTER_N
#define HOPPER_GEMM_INSTANCE_CLUSTER_N 1
#endif
#ifndef HOPPER_GEMM_INSTANCE_PINGPONG
#define HOPPER_GEMM_INSTANCE_PINGPONG false
#endif

#ifndef HOPPER_GEMM_INSTANCE_BM
#define HOPPER_GEMM_INSTANCE_BM 128
#endif
#ifndef HOPPER_GEMM_INSTANCE_OUT
#define HOPPER_GEMM_INSTANCE_OUT __nv_bfloat16
#endif

using instance_traits =
    hopper::gemm::kernel_traits<HOPPER_GEMM_INSTANCE_BM, HOPPER_GEMM_INSTANCE_BN, HOPPER_GEMM_INSTANCE_STAGES,
                                HOPPER_GEMM_INSTANCE_CLUSTER_M, HOPPER_GEMM_INSTANCE_CLUSTER_N,
                                HOPPER_GEMM_INSTANCE_OUT, false, false, HOPPER_GEMM_INSTANCE_PINGPONG>;

// Taking the address instantiates the kernel template.
void* hopper_gemm_instance() { return reinterpret_cast<void*>(&hopper::gemm::gemm_kernel<instance_traits>); }
