"""hopper's torch operators against torch.matmul and Tensor.copy_, with fresh random inputs and
poisoned outputs. Skips, saying why, without PyTorch, without an sm_90 GPU, or without the built
package (pip install --no-build-isolation ./python)."""
import math
import random

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip(f"{torch.cuda.get_device_name()} is not sm_90", allow_module_level=True)
hopper = pytest.importorskip("hopper", reason="the hopper package is not built (pip install ./python)")

SEED = random.SystemRandom().randrange(1 << 31)
print(f"test_ops seed {SEED}")


@pytest.fixture
def gen():
    return torch.Generator(device="cuda").manual_seed(SEED)


def randn(shape, gen, dtype=torch.bfloat16):
    return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(dtype)


def check_gemm(c, a, bt, k):
    """bt is B as N x K; the reference is fp32 matmul of the same bf16 values."""
    ref = torch.matmul(a.float(), bt.float().t())
    assert c.shape == ref.shape
    assert not torch.isnan(c).any(), "NaN left in the output (poison not overwritten)"
    torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=1e-3 * math.sqrt(k))


SHAPES = [(1, 8, 8), (7, 24, 40), (128, 256, 64), (300, 520, 1000), (129, 136, 456), (1000, 8, 4096),
          (2048, 2048, 2048), (128, 8192, 8192), (4096, 4096, 4096)]


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_nk_matches_matmul(m, n, k, gen):
    a, w = randn((m, k), gen), randn((n, k), gen)
    check_gemm(hopper.gemm(a, w), a, w, k)


@pytest.mark.parametrize("trial", range(12))
def test_gemm_random_shapes_layouts_and_outputs(trial, gen):
    rng = random.Random(SEED + trial)
    m, n, k = rng.randrange(1, 1500), 8 * rng.randrange(1, 200), 8 * rng.randrange(1, 300)
    out_dtype = rng.choice([None, torch.float32])
    if rng.random() < 0.5:
        a = randn((m, k), gen)  # row-major: lda = K
    else:
        m = 8 * (m // 8 + 1)  # column-major: lda = M, a multiple of 8 elements (16 bytes)
        a = randn((k, m), gen).t()
    if rng.random() < 0.5:
        b = randn((n, k), gen) if rng.random() < 0.5 else randn((k, n), gen).t()
        c, bt = hopper.gemm(a, b, out_dtype), b
    else:
        b = randn((k, n), gen) if rng.random() < 0.5 else randn((n, k), gen).t()
        c, bt = hopper.gemm(a, b, out_dtype, b_layout="kn"), b.t()
    assert c.dtype == (out_dtype or torch.bfloat16)
    check_gemm(c, a, bt, k)


def test_gemm_split_k_workspace_from_the_caching_allocator(gen):
    # Few tiles and a long K: the plan's rule splits K, so each call takes a workspace.
    a = randn((128, 16384), gen)
    w = randn((256, 16384), gen)
    for _ in range(3):
        check_gemm(hopper.gemm(a, w, torch.float32), a, w, 16384)


def test_gemm_plans_are_cached(gen):
    a, w = randn((256, 512), gen), randn((384, 512), gen)
    hopper.gemm(a, w)
    before = torch.ops.hopper.cached_plans()
    a2, w2 = randn((256, 512), gen), randn((384, 512), gen)
    check_gemm(hopper.gemm(a2, w2), a2, w2, 512)  # same problem, other buffers: the same plan
    assert torch.ops.hopper.cached_plans() == before


def test_gemm_on_the_current_stream(gen):
    a, w = randn((1024, 2048), gen), randn((1024, 2048), gen)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        c = hopper.gemm(a, w)
    s.synchronize()
    check_gemm(c, a, w, 2048)


def test_gemm_empty_and_zero_k(gen):
    assert hopper.gemm(randn((0, 64), gen), randn((8, 64), gen)).shape == (0, 8)
    z = hopper.gemm(torch.empty((4, 0), device="cuda", dtype=torch.bfloat16),
                    torch.empty((8, 0), device="cuda", dtype=torch.bfloat16))
    assert z.shape == (4, 8) and bool((z == 0).all())


def test_gemm_rejects_bad_arguments_by_name(gen):
    a, w = randn((64, 128), gen), randn((32, 128), gen)
    with pytest.raises(ValueError, match="a must be a CUDA tensor"):
        hopper.gemm(a.cpu(), w)
    with pytest.raises(TypeError, match="b must be bfloat16"):
        hopper.gemm(a, w.half())
    with pytest.raises(ValueError, match="K differs"):
        hopper.gemm(a, randn((32, 64), gen))
    with pytest.raises(ValueError, match="a has shape .* stride 1"):
        hopper.gemm(randn((64, 256), gen)[:, ::2], w)
    with pytest.raises(TypeError, match="out_dtype"):
        hopper.gemm(a, w, torch.float16)
    with pytest.raises(ValueError, match="b_layout"):
        hopper.gemm(a, w, b_layout="nn")
    with pytest.raises(ValueError, match="16"):  # a leading dimension of 12 elements (24 bytes)
        hopper.gemm(randn((64, 12), gen), randn((32, 12), gen))


@pytest.mark.parametrize("nbytes", [1, 15, 16, 17, 4095, 65536 + 7, 3 * 1024 * 1024 + 5, 64 * 1024 * 1024])
def test_copy_matches_tensor_copy(nbytes, gen):
    src = torch.randint(0, 256, (nbytes,), generator=gen, device="cuda", dtype=torch.uint8)
    dst = torch.full_like(src, 0xA5)
    assert hopper.copy_(dst, src) is dst
    ref = torch.full_like(src, 0xA5).copy_(src)
    assert torch.equal(dst, ref)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.int64])
def test_copy_dtypes_and_shapes(dtype, gen):
    src = randn((37, 129, 3), gen).to(dtype)
    dst = torch.empty_like(src).fill_(7)
    hopper.copy_(dst, src)
    assert torch.equal(dst, src)


def test_copy_rejects_bad_arguments_by_name(gen):
    src = randn((64, 64), gen)
    with pytest.raises(ValueError, match="src .* not contiguous"):
        hopper.copy_(torch.empty((64, 64), device="cuda", dtype=torch.bfloat16), src.t())
    with pytest.raises(ValueError, match="dst has shape"):
        hopper.copy_(torch.empty((64, 65), device="cuda", dtype=torch.bfloat16), src)
    with pytest.raises(TypeError, match="dst is Float but src is BFloat16"):
        hopper.copy_(torch.empty((64, 64), device="cuda"), src)
    big = randn((4096,), gen)
    with pytest.raises(ValueError, match="overlap"):
        hopper.copy_(big[8:2056], big[0:2048])
    with pytest.raises(ValueError, match="aligned"):
        hopper.copy_(big[1:1025], big[2048:3072])


@pytest.mark.parametrize("n", [1, 7, 8, 1000, 1 << 20, (1 << 24) + 3])
def test_axpb_matches_reference(n, gen):
    x = randn((n,), gen)
    a, b = random.Random(SEED + n).uniform(-3, 3), random.Random(SEED - n).uniform(-3, 3)
    y = hopper.axpb(x, a, b)
    ref = (x.float() * a + b)
    torch.testing.assert_close(y.float(), ref, rtol=8e-3, atol=1e-2)


def test_axpb_rejects_bad_arguments_by_name(gen):
    with pytest.raises(TypeError, match="x must be bfloat16"):
        hopper.axpb(randn((64,), gen, torch.float32), 1.0, 0.0)
    with pytest.raises(ValueError, match="x .* not contiguous"):
        hopper.axpb(randn((64, 64), gen).t(), 1.0, 0.0)


def test_torch_compile_traces_through_every_op(gen):
    a, w = randn((256, 512), gen), randn((128, 512), gen)

    @torch.compile(fullgraph=True)
    def f(a, w, dst):
        c = hopper.gemm(a, w, torch.float32)
        torch.ops.hopper.copy_(dst, c)
        return hopper.axpb(a, 2.0, 1.0), dst * 2

    dst = torch.empty((256, 128), device="cuda")
    y, d2 = f(a, w, dst)
    check_gemm(dst, a, w, 512)
    torch.testing.assert_close(d2, dst * 2)
    torch.testing.assert_close(y.float(), a.float() * 2 + 1, rtol=8e-3, atol=1e-2)


# ---- argument fuzzing: random bad (and good) arguments for every operator ------------------------
# The oracle: the call returns the right result, or raises ValueError, TypeError or RuntimeError
# whose message starts with the operator's name and names one of its arguments. Never a crash, a
# hang, a CUDA error left behind, or a message about the kernel's internals.

_DTYPES = [torch.bfloat16, torch.float16, torch.float32, torch.int8, torch.int64]
_SIZES = [0, 1, 7, 8, 15, 16, 24, 64, 100, 128, 1000]


def _random_tensor(rng, gen, dims=None):
    """A tensor of random dtype, device, rank and layout; sometimes a huge stride-0 or strided view."""
    dims = rng.choice([0, 1, 2, 2, 2, 3]) if dims is None else dims
    shape = [rng.choice(_SIZES if dims < 3 else _SIZES[:6]) for _ in range(dims)]
    dtype = rng.choice(_DTYPES + [torch.bfloat16] * 4)
    device = "cpu" if rng.random() < 0.08 else "cuda"
    t = randn(shape, gen).to(dtype).to(device) if dtype.is_floating_point else torch.randint(
        -3, 4, shape, generator=gen, device="cuda", dtype=dtype).to(device)
    kind = rng.random()
    if kind < 0.1 and dims == 2:
        t = t.t()  # the other major
    elif kind < 0.15 and dims >= 1 and t.shape[-1] >= 2:
        t = t[..., ::2]  # a stride the kernels do not take
    elif kind < 0.2:
        t = torch.zeros((1,) * max(dims, 1), device=device, dtype=dtype).expand(
            *([rng.choice([1 << 31, (1 << 31) - 1, 1 << 40])] + [8] * (max(dims, 1) - 1)))
    elif kind < 0.25 and t.numel() > 1:
        t = t.reshape(-1)[1:]  # an offset of one element: misaligned
    return t


def _expect_named(err, op, names):
    msg = str(err)
    assert msg.startswith(f"hopper.{op}") or msg.startswith("hopper"), f"message without the operator: {msg}"
    assert any(n in msg for n in names), f"message names no argument of {op} {names}: {msg}"
    for internal in ("lda", "ldb", "ldc", "strides[", "stage copy"):
        assert internal not in msg, f"message names an internal '{internal}': {msg}"


@pytest.mark.parametrize("trial", range(4))
def test_gemm_argument_fuzz(trial, gen):
    rng = random.Random(SEED * 7 + trial)
    outcomes = {"ok": 0, "rejected": 0}
    for _ in range(150):
        a, b = _random_tensor(rng, gen), _random_tensor(rng, gen)
        out_dtype = rng.choice([None, None, torch.float32, torch.float16, torch.int8])
        layout = rng.choice(["nk", "nk", "kn", "xx"])
        try:
            c = hopper.gemm(a, b, out_dtype, b_layout=layout)
        except (ValueError, TypeError, RuntimeError) as e:
            _expect_named(e, "gemm", ["a ", "a:", "a's", "b ", "b:", "b's", "a is", "b is", "out_dtype", "b_layout",
                                      "K differs", "output"])
            outcomes["rejected"] += 1
            continue
        bt = b if layout == "nk" else b.t()
        if c.numel():
            check_gemm(c, a, bt, a.shape[1])
        outcomes["ok"] += 1
        torch.cuda.synchronize()  # a launch that went wrong shows here, not in a later test
    assert outcomes["ok"] + outcomes["rejected"] == 150
    print(f"gemm argument fuzz {trial}: {outcomes}")


@pytest.mark.parametrize("trial", range(2))
def test_copy_and_axpb_argument_fuzz(trial, gen):
    rng = random.Random(SEED * 11 + trial)
    for _ in range(150):
        src, dst = _random_tensor(rng, gen), _random_tensor(rng, gen)
        if rng.random() < 0.4 and src.device.type == "cuda" and src.numel() < (1 << 24):
            dst = torch.empty_like(src)  # a matching destination, sometimes with src's odd strides
        try:
            hopper.copy_(dst, src)
        except (ValueError, TypeError, RuntimeError) as e:
            _expect_named(e, "copy_", ["dst", "src"])
        except NotImplementedError as e:  # not expected: the operators are registered for CPU too
            pytest.fail(f"hopper.copy_ not dispatched: {e}")
        else:
            assert torch.equal(dst, src)
        x = _random_tensor(rng, gen, dims=rng.choice([0, 1, 2]))
        try:
            y = hopper.axpb(x, 2.0, -1.0)
        except (ValueError, TypeError, RuntimeError) as e:
            _expect_named(e, "axpb", ["x ", "x =", "x:"])
        else:
            torch.testing.assert_close(y.float(), x.float() * 2 - 1, rtol=8e-3, atol=1e-2)
        torch.cuda.synchronize()


# ---- autograd and tracing --------------------------------------------------------------------


@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("out_dtype", [None, torch.float32])
def test_gemm_backward_matches_matmul(b_layout, out_dtype, gen):
    m, n, k = 136, 200, 264
    a = randn((m, k), gen).requires_grad_()
    b = (randn((n, k), gen) if b_layout == "nk" else randn((k, n), gen)).requires_grad_()
    dc = randn((m, n), gen, torch.float32)
    c = hopper.gemm(a, b, out_dtype, b_layout=b_layout)
    c.backward(dc.to(c.dtype))
    # The reference: fp32 matmul of the same bf16 values, with the gradient the kernel reads (an
    # fp32 dC rounded to bf16; the backward's GEMMs take bf16 operands).
    a32, b32 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    c32 = a32 @ (b32.t() if b_layout == "nk" else b32)
    c32.backward(dc.to(c.dtype).to(torch.bfloat16).float())
    assert a.grad.dtype == torch.bfloat16 and b.grad.dtype == torch.bfloat16
    torch.testing.assert_close(a.grad.float(), a32.grad, rtol=1e-2, atol=1e-3 * math.sqrt(n))
    torch.testing.assert_close(b.grad.float(), b32.grad, rtol=1e-2, atol=1e-3 * math.sqrt(m))


def test_fake_gemm_checks_shapes_while_tracing(gen):
    a, w = randn((64, 128), gen), randn((32, 96), gen)  # K differs: 128 against 96

    @torch.compile(fullgraph=True)
    def f(a, w):
        return hopper.gemm(a, w)

    with pytest.raises(Exception, match="K differs"):
        f(a, w)


def test_torch_compile_trains_a_small_model(gen):
    torch.manual_seed(SEED)

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = torch.nn.Parameter(randn((256, 128), gen) * 0.1)
            self.w2 = torch.nn.Parameter(randn((64, 256), gen) * 0.1)

        def forward(self, x):
            return hopper.gemm(torch.relu(hopper.gemm(x, self.w1)), self.w2, torch.float32)

    model = Mlp()
    ref = Mlp()
    ref.load_state_dict(model.state_dict())
    step = torch.compile(lambda x: model(x).square().mean(), fullgraph=True)
    x = randn((512, 128), gen)
    loss = step(x)
    loss.backward()
    # The reference: the same model through torch.matmul, eager.
    h = torch.relu((x.float() @ ref.w1.float().t()).to(torch.bfloat16))
    (h.float() @ ref.w2.float().t()).square().mean().backward()
    torch.testing.assert_close(loss, (h.float() @ ref.w2.detach().float().t()).square().mean(), rtol=2e-2, atol=1e-3)
    for p, q in [(model.w1, ref.w1), (model.w2, ref.w2)]:
        assert p.grad is not None and p.grad.dtype == torch.bfloat16
        torch.testing.assert_close(p.grad.float(), q.grad.float(), rtol=5e-2, atol=2e-3)


def test_plan_cache_is_bounded(gen):
    a = randn((64, 64), gen)
    for i in range(300):  # 300 shapes, more than the cache holds
        w = randn((8 * (i + 1), 64), gen)
        c = hopper.gemm(a, w)
        if i % 50 == 0:
            check_gemm(c, a, w, 64)
    assert torch.ops.hopper.cached_plans() == 256
    w = randn((8, 64), gen)  # the first shape again: evicted long ago, planned afresh, still right
    check_gemm(hopper.gemm(a, w), a, w, 64)
    assert torch.ops.hopper.cached_plans() == 256


def test_output_too_large_names_the_operator(gen):
    a = randn((1 << 20, 8), gen)  # 16 MiB each; a @ b.T would be 2 TiB
    b = randn((1 << 20, 8), gen)
    with pytest.raises(torch.OutOfMemoryError, match=r"^hopper\.gemm: the output of shape \[1048576, 1048576\]"):
        hopper.gemm(a, b)
