"""hopper-async's kernels as torch operators (torch.ops.hopper.*), for sm_90 GPUs (H100, H200).

    import hopper
    c = hopper.gemm(a, w)                  # a: M x K bf16, w: N x K (F.linear's weight), c = a @ w.T
    c = hopper.gemm(a, b, b_layout="kn")   # b: K x N, c = a @ b
    hopper.copy_(dst, src)                 # contiguous, same dtype and shape
    y = hopper.axpb(x, 2.0, 1.0)           # y = 2x + 1, bf16
    o = hopper.attention(q, k, v, causal=True)          # q: (batch, seq, heads, head_dim) bf16
    o, lse = hopper.attention(q, k, v, return_lse=True)

Every operator runs on the current CUDA stream; the GEMM takes its split-K workspace from
PyTorch's caching allocator and caches its plans by shape, layout and alignment. Each has a fake
(meta) implementation, so torch.compile traces through it.
"""
import torch

from . import _C  # noqa: F401  (registers torch.ops.hopper)

__all__ = ["gemm", "copy_", "axpb", "attention"]


def gemm(a, b, out_dtype=None, *, b_layout="nk"):
    """a (M x K, bf16) times b: b_layout "nk" (b is N x K, F.linear's weight) gives a @ b.T,
    "kn" (b is K x N) gives a @ b. out_dtype: None (bf16) or torch.float32. Either operand may be
    row- or column-major (a transposed view); other strides are rejected."""
    if b_layout not in ("nk", "kn"):
        raise ValueError(f"hopper.gemm: b_layout must be 'nk' (b is N x K) or 'kn' (b is K x N), got {b_layout!r}")
    return torch.ops.hopper.gemm(a, b, out_dtype, b_layout == "nk")


def copy_(dst, src):
    """Copies src into dst (both contiguous CUDA tensors of one dtype and shape); returns dst."""
    torch.ops.hopper.copy_(dst, src)
    return dst


def axpb(x, a, b):
    """y = a * x + b for a contiguous bf16 CUDA tensor x, computed in fp32, rounded to bf16."""
    return torch.ops.hopper.axpb(x, float(a), float(b))


def attention(q, k, v, causal=False, scale=None, return_lse=False):
    """softmax(scale q k^T + mask) v for q (batch, seq_q, heads, head_dim) and k, v (batch, seq_k,
    kv_heads, head_dim), bf16, head_dim 64, 128 or 256 and contiguous; kv_heads divides heads (Q
    head h reads K/V head h // (heads // kv_heads)). causal: row i sees keys 0..i (as
    scaled_dot_product_attention's is_causal). scale: None for 1/sqrt(head_dim). Returns out (like
    q), and with return_lse the row log-sum-exp (batch, heads, seq_q), fp32. The layout is
    FlashAttention's; F.scaled_dot_product_attention takes q.transpose(1, 2)."""
    out, lse = torch.ops.hopper.attention(q, k, v, bool(causal), None if scale is None else float(scale),
                                          bool(return_lse))
    return (out, lse) if return_lse else out


# ---- fake (meta) implementations: shapes and dtypes while tracing, with the eager checks' errors --


def _gemm_shape_check(a, b, out_dtype, b_nk):
    torch._check_type(a.dtype == torch.bfloat16, lambda: f"hopper.gemm: a must be bfloat16, got {a.dtype}")
    torch._check_type(b.dtype == torch.bfloat16, lambda: f"hopper.gemm: b must be bfloat16, got {b.dtype}")
    torch._check_value(a.dim() == 2, lambda: f"hopper.gemm: a must be 2-D (M x K), got {a.dim()}-D")
    torch._check_value(b.dim() == 2, lambda: f"hopper.gemm: b must be 2-D, got {b.dim()}-D")
    torch._check_type(out_dtype in (None, torch.bfloat16, torch.float32),
                      lambda: f"hopper.gemm: out_dtype must be bfloat16 or float32, got {out_dtype}")
    k_b = b.shape[1] if b_nk else b.shape[0]
    torch._check_value(a.shape[1] == k_b, lambda: (
        f"hopper.gemm: a is {a.shape[0]} x {a.shape[1]} but b is {b.shape[0]} x {b.shape[1]} "
        f"({'N x K' if b_nk else 'K x N'}): K differs"))
    return b.shape[0] if b_nk else b.shape[1]


@torch.library.register_fake("hopper::gemm")
def _gemm_fake(a, b, out_dtype=None, b_nk=True):
    n = _gemm_shape_check(a, b, out_dtype, b_nk)
    return a.new_empty((a.shape[0], n), dtype=out_dtype if out_dtype is not None else torch.bfloat16)


@torch.library.register_fake("hopper::attention")
def _attention_fake(q, k, v, causal=False, scale=None, return_lse=False):
    for name, t in (("q", q), ("k", k), ("v", v)):
        torch._check_type(t.dtype == torch.bfloat16, lambda: f"hopper.attention: {name} must be bfloat16, got {t.dtype}")
        torch._check_value(t.dim() == 4, lambda: f"hopper.attention: {name} must be 4-D (batch, seq, heads, head_dim)")
    torch._check_value(k.shape == v.shape, lambda: f"hopper.attention: k has shape {list(k.shape)} but v {list(v.shape)}")
    torch._check_value(q.shape[3] == k.shape[3],
                       lambda: f"hopper.attention: q has head_dim {q.shape[3]} but k {k.shape[3]}")
    torch._check_value(q.shape[2] % k.shape[2] == 0,
                       lambda: f"hopper.attention: k's {k.shape[2]} heads do not divide q's {q.shape[2]}")
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty((q.shape[0], q.shape[2], q.shape[1]), dtype=torch.float32))


@torch.library.register_fake("hopper::copy_")
def _copy_fake(dst, src):
    torch._check_type(dst.dtype == src.dtype, lambda: f"hopper.copy_: dst is {dst.dtype} but src is {src.dtype}")
    torch._check_value(dst.shape == src.shape,
                       lambda: f"hopper.copy_: dst has shape {list(dst.shape)} but src {list(src.shape)}")
    return None


@torch.library.register_fake("hopper::axpb")
def _axpb_fake(x, a, b):
    torch._check_type(x.dtype == torch.bfloat16, lambda: f"hopper.axpb: x must be bfloat16, got {x.dtype}")
    return torch.empty_like(x)


# ---- autograd: the backward of C = A . B^T (b_nk) or A . B is two GEMMs through the same kernel,
# each operand read in the major it already has (a transposed view, never a copy):
#   b_nk: dA = dC . B      (B is N x K: the "kn" layout),  dB = dC^T . A
#   kn:   dA = dC . B^T    (B is K x N: the "nk" layout),  dB = A^T . dC
# The kernel reads bf16: an fp32 dC (out_dtype=torch.float32) is rounded to bf16 first, and the
# gradients are bf16, the inputs' dtype.


def _gemm_setup_context(ctx, inputs, output):
    a, b, _out_dtype, b_nk = inputs
    ctx.save_for_backward(a, b)
    ctx.b_nk = b_nk


def _gemm_backward(ctx, grad):
    a, b = ctx.saved_tensors
    g = grad.to(torch.bfloat16).contiguous()  # a broadcast gradient (sum's) has stride 0
    da = db = None
    if ctx.needs_input_grad[0]:
        da = torch.ops.hopper.gemm(g, b, None, not ctx.b_nk)
    if ctx.needs_input_grad[1]:
        db = torch.ops.hopper.gemm(g.t(), a, None, False) if ctx.b_nk else torch.ops.hopper.gemm(a.t(), g, None, False)
    return da, db, None, None


torch.library.register_autograd("hopper::gemm", _gemm_backward, setup_context=_gemm_setup_context)
