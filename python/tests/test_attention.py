"""hopper.attention against torch.nn.functional.scaled_dot_product_attention on fp32 copies of the
same bf16 inputs, with fresh random inputs: every head dimension, causal and not, grouped-query
heads, sequence tails, cross attention, the LSE, torch.compile and bad inputs. Skips, saying why,
without PyTorch, without an sm_90 GPU, or without the built package."""
import math
import random

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip(f"{torch.cuda.get_device_name()} is not sm_90", allow_module_level=True)
hopper = pytest.importorskip("hopper", reason="the hopper package is not built (pip install ./python)")
F = torch.nn.functional

SEED = random.SystemRandom().randrange(1 << 31)
print(f"test_attention seed {SEED}")


def rand(shape, gen):
    return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).bfloat16()


def reference(q, k, v, causal, scale=None):
    """SDPA in fp32 on (batch, heads, seq, dim) views, K/V heads repeated for grouped queries; and
    the LSE from the same scores."""
    group = q.shape[2] // k.shape[2]
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
    kf, vf = kf.repeat_interleave(group, dim=1), vf.repeat_interleave(group, dim=1)
    out = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, scale=scale).transpose(1, 2)
    s = (qf @ kf.transpose(-1, -2)) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        mask = torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return out, torch.logsumexp(s, dim=-1)


CASES = [  # batch, seq_q, seq_k, heads, kv_heads, causal
    (1, 128, 128, 1, 1, False), (2, 129, 300, 3, 3, False), (1, 300, 129, 2, 2, True), (1, 77, 1000, 2, 1, True),
    (2, 257, 257, 8, 2, False), (1, 1000, 1000, 4, 4, True), (1, 1, 5, 1, 1, False),
]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "b{}_q{}_k{}_h{}/{}{}".format(*c[:5], "_causal" * c[5]))
def test_matches_sdpa(d, case):
    b, sq, sk, h, hk, causal = case
    gen = torch.Generator(device="cuda").manual_seed(SEED + d + sq)
    q, k, v = rand((b, sq, h, d), gen), rand((b, sk, hk, d), gen), rand((b, sk, hk, d), gen)
    out, lse = hopper.attention(q, k, v, causal=causal, return_lse=True)
    ref, ref_lse = reference(q, k, v, causal)
    assert out.shape == q.shape and out.dtype == torch.bfloat16
    assert not torch.isnan(out).any(), "NaN left in the output"
    torch.testing.assert_close(out.float(), ref, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(lse, ref_lse, rtol=1e-4, atol=1e-3)


def test_strided_inputs_and_scale():
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    qkv = rand((2, 333, 3, 4, 128), gen)  # one packed projection: q, k, v are strided views
    q, k, v = qkv.unbind(2)
    out = hopper.attention(q, k, v, causal=True, scale=0.2)
    ref, _ = reference(q, k, v, True, scale=0.2)
    torch.testing.assert_close(out.float(), ref, rtol=2e-2, atol=2e-2)


def test_compile():
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    q, k, v = rand((1, 256, 2, 64), gen), rand((1, 256, 2, 64), gen), rand((1, 256, 2, 64), gen)
    f = torch.compile(lambda q, k, v: hopper.attention(q, k, v, causal=True) * 2, fullgraph=True)
    torch.testing.assert_close(f(q, k, v), hopper.attention(q, k, v, causal=True) * 2)


@pytest.mark.parametrize("bad, message", [
    (lambda q, k, v: hopper.attention(q[..., :32].contiguous(), k[..., :32].contiguous(), v[..., :32].contiguous()),
     "head_dim 32"),
    (lambda q, k, v: hopper.attention(q, k[:, :, :3], v[:, :, :3]), "do not divide"),
    (lambda q, k, v: hopper.attention(q.float(), k, v), "bfloat16"),
    (lambda q, k, v: hopper.attention(q.cpu(), k, v), "CUDA tensor"),
    (lambda q, k, v: hopper.attention(q, k, v[:, :10]), "but v"),
    (lambda q, k, v: hopper.attention(q, k, v, scale=-1.0), "scale"),
    (lambda q, k, v: hopper.attention(q.transpose(1, 3), k, v), "head"),
])
def test_bad_input_names_the_argument(bad, message):
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    q, k, v = rand((1, 64, 4, 64), gen), rand((1, 64, 4, 64), gen), rand((1, 64, 4, 64), gen)
    with pytest.raises((ValueError, TypeError), match=message):
        bad(q, k, v)
