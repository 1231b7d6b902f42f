"""hopper-async's kernels as torch operators (torch.ops.hopper.*), for sm_90 GPUs (H100, H200).

    import hopper
    c = hopper.gemm(a, w)                  # a: M x K bf16, w: N x K (F.linear's weight), c = a @ w.T
    c = hopper.gemm(a, b, b_layout="kn")   # b: K x N, c = a @ b
    hopper.copy_(dst, src)                 # contiguous, same dtype and shape
    y = hopper.axpb(x, 2.0, 1.0)           # y = 2x + 1, bf16

Every operator runs on the current CUDA stream; the GEMM takes its split-K workspace from
PyTorch's caching allocator and caches its plans by shape, layout and alignment. Each has a fake
(meta) implementation, so torch.compile traces through it.
"""
import torch

from . import _C  # noqa: F401  (registers torch.ops.hopper)

__all__ = ["gemm", "copy_", "axpb"]


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


@torch.library.register_fake("hopper::gemm")
def _gemm_fake(a, b, out_dtype=None, b_nk=True):
    n = b.shape[0] if b_nk else b.shape[1]
    return a.new_empty((a.shape[0], n), dtype=out_dtype if out_dtype is not None else torch.bfloat16)


@torch.library.register_fake("hopper::copy_")
def _copy_fake(dst, src):
    return None


@torch.library.register_fake("hopper::axpb")
def _axpb_fake(x, a, b):
    return torch.empty_like(x)
