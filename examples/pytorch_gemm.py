"""Calling hopper-async from PyTorch (pip install --no-build-isolation ./python first).

A linear layer's forward through hopper.gemm, checked against torch.nn.functional.linear, then
traced by torch.compile (the operators have fake implementations)."""
import torch

import hopper


def main():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("pytorch example: needs an sm_90 GPU (H100, H200)")
        return
    x = torch.randn(4096, 1024, device="cuda").bfloat16()
    w = torch.randn(2048, 1024, device="cuda").bfloat16()  # N x K, as nn.Linear stores it
    y = hopper.gemm(x, w)                                   # x @ w.T, bf16 out, fp32 accumulation
    ref = torch.nn.functional.linear(x, w)
    err = ((y.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
    print(f"hopper.gemm {tuple(x.shape)} x {tuple(w.shape)}^T: max relative difference to F.linear {err:.1e}")

    @torch.compile(fullgraph=True)
    def layer(x, w):
        return torch.relu(hopper.gemm(x, w, torch.float32))

    z = layer(x, w)
    print(f"torch.compile: {tuple(z.shape)} {z.dtype}, matches: {torch.allclose(z, torch.relu(ref.float()), rtol=2e-2, atol=1e-1)}")


if __name__ == "__main__":
    main()
