"""hopper.attention beside torch.nn.functional.scaled_dot_product_attention's cuDNN and flash
backends, in one process, on 16 heads x 16k tokens split as batch x sequence (1k, 4k, 16k), head
dims 64, 128, 256, causal and not; normal(0, 1) bf16 inputs. Two regimes, both after warm-up with
CUDA events: sustained (20 back-to-back calls per timed batch, 7 rounds alternating the three,
median) and burst (each call timed alone, 15 rounds, median). FLOPs: 4 b h s^2 d, halved for
causal. Writes Google Benchmark JSON (one entry per shape, attention/hd{D}/seq{S}/{full|causal},
counters ratio = ours / cuDNN and ratio_flash = ours / flash, sustained; the burst ratios beside
them) to the path given as the first argument, and prints one line per shape."""
import json
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import hopper

F = torch.nn.functional


def batch_ms(fn, n):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / n


def measure(fns, rounds, n):
    for fn in fns:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for _ in range(rounds):
        for t, fn in zip(times, fns):
            t.append(batch_ms(fn, n))
    return [statistics.median(t) for t in times]


def sdpa(backend, q, k, v, causal):
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def run():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
    return run


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench_attention.json"
    torch.manual_seed(0)
    entries = []
    for d in (64, 128, 256):
        for seq in (1024, 4096, 16384):
            for causal in (False, True):
                b, h = 16384 // seq, 16
                q, k, v = (torch.randn((b, seq, h, d), device="cuda").bfloat16() for _ in range(3))
                ours = lambda: hopper.attention(q, k, v, causal=causal)  # noqa: E731
                cudnn = sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)
                flash = sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal)
                ref = cudnn().transpose(1, 2)
                err = (ours().float() - ref.float()).abs().max().item()
                flops = 4.0 * b * h * seq * seq * d / (2 if causal else 1)
                sus = measure([ours, cudnn, flash], 7, 20)
                bur = measure([ours, cudnn, flash], 15, 1)
                tf = [flops / (t * 1e-3) / 1e12 for t in sus]
                name = f"attention/hd{d}/seq{seq}/{'causal' if causal else 'full'}"
                e = {"name": name, "run_name": name, "run_type": "iteration", "iterations": 7 * 20,
                     "real_time": sus[0] * 1e6, "cpu_time": sus[0] * 1e6, "time_unit": "ns",
                     "ratio": sus[1] / sus[0], "ratio_flash": sus[2] / sus[0],
                     "ratio_burst": bur[1] / bur[0], "ratio_flash_burst": bur[2] / bur[0],
                     "ours_tflops": tf[0], "cudnn_tflops": tf[1], "flash_tflops": tf[2],
                     "max_abs_err_vs_cudnn": err}
                entries.append(e)
                print(f"RATIO {name} cudnn {e['ratio']:.3f} flash {e['ratio_flash']:.3f} "
                      f"burst cudnn {e['ratio_burst']:.3f} | TFLOP/s ours {tf[0]:.0f} cudnn {tf[1]:.0f} "
                      f"flash {tf[2]:.0f} | max|err| {err:.1e}", flush=True)
                del q, k, v
    ctx = {"executable": "python/bench/bench_attention.py", "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(),
           "regime": "sustained (ratio, ratio_flash); burst (ratio_burst, ratio_flash_burst)"}
    with open(out, "w") as f:
        json.dump({"context": ctx, "benchmarks": entries}, f, indent=1)


if __name__ == "__main__":
    main()
