// The attention problem as both launchers take it: the sizes, the mask, the softmax scale and
// where each tensor of the (batch, seq, heads, head_dim) layout keeps its elements. Plain C++.
#pragma once
#include <cmath>
#include <cstdint>

namespace hopper::attention {
// Where one tensor of the (batch, seq, heads, head_dim) layout keeps its elements: the strides of
// the three outer dimensions in elements (the head dimension is contiguous, as PyTorch and
// FlashAttention take it).
struct tensor_layout {
  int64_t batch = 0, seq = 0, head = 0;
};
// The packed layout of a (batch, seq, heads, head_dim) tensor.
inline tensor_layout packed_layout(int64_t seq, int64_t heads, int64_t head_dim) {
  return tensor_layout{seq * heads * head_dim, heads * head_dim, head_dim};
}

// O = softmax(scale Q K^T + mask) V for Q (batch, seq_q, heads, head_dim), K and V (batch, seq_k,
// kv_heads, head_dim), O like Q; each Q head h reads K/V head h / (heads / kv_heads). bf16.
struct problem {
  int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 1, seq_k = 1, head_dim = 128;
  bool causal = false;  // row i sees keys 0..i (top-left, as scaled_dot_product_attention)
  float scale = 0.0f;   // 0: 1 / sqrt(head_dim)
  tensor_layout q, k, v, o;
  // The problem with every tensor packed.
  static problem packed(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq_q, int64_t seq_k, int64_t head_dim,
                        bool causal = false) {
    problem p;
    p.batch = batch, p.heads = heads, p.kv_heads = kv_heads, p.seq_q = seq_q, p.seq_k = seq_k, p.head_dim = head_dim;
    p.causal = causal;
    p.q = p.o = packed_layout(seq_q, heads, head_dim);
    p.k = p.v = packed_layout(seq_k, kv_heads, head_dim);
    return p;
  }
  float softmax_scale() const { return scale != 0.0f ? scale : float(1.0 / std::sqrt(double(head_dim))); }
};

}  // namespace hopper::attention
