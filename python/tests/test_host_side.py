"""What of the package runs without a GPU, on any PyTorch it supports: the extension loads and
registers its operators, a tensor on the CPU is rejected naming its argument, and the fake
implementations give the output's shape and dtype, and reject a K mismatch, while tracing.
Skips, saying why, without PyTorch or without the built package."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
hopper = pytest.importorskip("hopper", reason="the hopper package is not built (pip install ./python)")
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402


def test_operators_are_registered():
    for name in ("gemm", "copy_", "axpb", "cached_plans"):
        assert hasattr(torch.ops.hopper, name), name


@pytest.mark.parametrize("call, argument", [
    (lambda: hopper.gemm(torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(6, 8, dtype=torch.bfloat16)), "a"),
    (lambda: hopper.copy_(torch.zeros(16), torch.zeros(16)), "dst"),
    (lambda: hopper.axpb(torch.zeros(16, dtype=torch.bfloat16), 2.0, 1.0), "x"),
])
def test_cpu_tensors_are_rejected_by_name(call, argument):
    with pytest.raises(ValueError, match=f"{argument} must be a CUDA tensor"):
        call()


def test_fake_gemm_gives_shape_and_dtype():
    with FakeTensorMode():
        a = torch.empty(128, 64, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(96, 64, dtype=torch.bfloat16, device="cuda")
        c = hopper.gemm(a, w)
        assert tuple(c.shape) == (128, 96) and c.dtype == torch.bfloat16
        c = hopper.gemm(a, w.t(), out_dtype=torch.float32, b_layout="kn")
        assert tuple(c.shape) == (128, 96) and c.dtype == torch.float32


def test_fake_gemm_rejects_a_k_mismatch():
    with FakeTensorMode():
        a = torch.empty(128, 64, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(96, 48, dtype=torch.bfloat16, device="cuda")
        with pytest.raises(ValueError, match="a is 128 x 64 but b is 96 x 48 .N x K.: K differs"):
            hopper.gemm(a, w)
