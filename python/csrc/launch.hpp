// The boundary between the PyTorch operators (ops.cpp, compiled with PyTorch's headers) and the
// library's kernels (kernels.cu, compiled by nvcc without them): plain pointers, sizes and a
// stream. Errors come back as exceptions: std::invalid_argument for bad input (naming the value),
// std::runtime_error for a CUDA error.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace hopper_torch {

// C (M x N, row-major, ldc) = A (M x K) . B^T, where B is N x K; each operand K-major (rows of
// K) or MN-major (columns), with its leading dimension in elements.
struct gemm_args {
  int device = 0;
  int64_t M = 0, N = 0, K = 0;
  bool a_k_major = true, b_k_major = true, out_f32 = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  const void* A = nullptr;
  const void* B = nullptr;
  void* C = nullptr;
};

struct workspace_need {
  size_t bytes = 0;            // 0: the schedule needs none
  size_t counters_offset = 0;  // counters from here to `bytes` must be zero before the run
};

// Finds (or makes) the cached plan of this problem (shape, layout, leading dimensions, output
// type, device and the pointers' alignment) and says what workspace a run needs.
workspace_need gemm_prepare(const gemm_args& g);
// Binds the cached plan to g's pointers and launches it on `stream` with `workspace`.
void gemm_run(const gemm_args& g, void* workspace, cudaStream_t stream);
// Plans made so far (for tests of the cache).
size_t gemm_cached_plans();

// O = softmax(scale Q K^T + mask) V for (batch, seq, heads, head_dim) tensors with their strides in
// elements (the head dimension contiguous); lse (may be null): [batch][heads][seq_q] fp32.
struct attention_args {
  int device = 0;
  int64_t batch = 0, heads = 0, kv_heads = 0, seq_q = 0, seq_k = 0, head_dim = 0;
  bool causal = false;
  double scale = 0;                                                                // 0: 1 / sqrt(head_dim)
  int64_t q_stride[3] = {}, k_stride[3] = {}, v_stride[3] = {}, o_stride[3] = {};  // batch, seq, head
  const void* Q = nullptr;
  const void* K = nullptr;
  const void* V = nullptr;
  void* O = nullptr;
  float* lse = nullptr;
};
void attention_run(const attention_args& a, cudaStream_t stream);

void copy_run(void* dst, const void* src, uint64_t bytes, cudaStream_t stream);
void axpb_run(void* y, const void* x, uint64_t n, float a, float b, cudaStream_t stream);

}  // namespace hopper_torch
