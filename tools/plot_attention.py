#!/usr/bin/env python3
"""Attention forward against PyTorch's SDPA: the ratio (ours / cuDNN and ours / the flash backend,
by time, sustained; and ours / cuDNN in burst) for every shape, one panel per head dimension, from
the JSON that python/bench/bench_attention.py writes (entries attention/hd{D}/seq{S}/{full|causal}).
Usage: tools/plot_attention.py RESULTS_DIR (reads RESULTS_DIR/bench_attention.json, writes
RESULTS_DIR/attention_ratio.png, as the GPU suite calls every plot) or RESULTS.json OUT.png."""
import json
import os
import sys


def main():
    if len(sys.argv) == 2:
        src = os.path.join(sys.argv[1], "bench_attention.json")
        dst = os.path.join(sys.argv[1], "attention_ratio.png")
        if not os.path.exists(src):
            print(f"plot_attention: {src} not found, nothing to plot")
            return
    elif len(sys.argv) == 3:
        src, dst = sys.argv[1], sys.argv[2]
    else:
        sys.exit("usage: plot_attention.py RESULTS_DIR | RESULTS.json OUT.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_attention: matplotlib not available")
    with open(src) as f:
        entries = json.load(f)["benchmarks"]
    dims = sorted({int(e["name"].split("/")[1][2:]) for e in entries})
    fig, axes = plt.subplots(1, len(dims), figsize=(5 * len(dims), 4), sharey=True, squeeze=False)
    for ax, d in zip(axes[0], dims):
        mine = [e for e in entries if e["name"].split("/")[1] == f"hd{d}"]
        labels = [e["name"].split("/", 2)[2].replace("seq", "") for e in mine]
        x = range(len(mine))
        w = 0.27
        ax.bar([i - w for i in x], [e["ratio"] for e in mine], w, label="/ cuDNN (sustained)")
        ax.bar(list(x), [e["ratio_burst"] for e in mine], w, label="/ cuDNN (burst)")
        ax.bar([i + w for i in x], [e["ratio_flash"] for e in mine], w, label="/ flash (sustained)")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
        ax.set_title(f"head dim {d}")
    axes[0][0].set_ylabel("ratio (time of theirs / ours)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("hopper.attention vs scaled_dot_product_attention on the H200")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
