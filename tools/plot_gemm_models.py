#!/usr/bin/env python3
"""The GEMM against cuBLAS on the shapes models run: the ratio (ours / cuBLAS, by time) by the
number of tokens M, one line per layer and one panel per model, from the Google Benchmark JSON
that bench_gemm_models writes (entries gemm_model/{model}/{layer}/M{m}, counter `ratio`).
Usage: tools/plot_gemm_models.py RESULTS_DIR (reads RESULTS_DIR/bench_gemm_models.json, writes
RESULTS_DIR/gemm_models_ratio.png, as the GPU suite calls every plot) or RESULTS.json OUT.png."""
import json
import os
import sys
from collections import defaultdict


def main():
    if len(sys.argv) == 2:
        src = os.path.join(sys.argv[1], "bench_gemm_models.json")
        dst = os.path.join(sys.argv[1], "gemm_models_ratio.png")
        if not os.path.exists(src):
            print(f"plot_gemm_models: {src} not found, nothing to plot")
            return
    elif len(sys.argv) == 3:
        src, dst = sys.argv[1], sys.argv[2]
    else:
        sys.exit("usage: plot_gemm_models.py RESULTS_DIR | RESULTS.json OUT.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_gemm_models: matplotlib not available")
    with open(src) as f:
        rows = [b for b in json.load(f).get("benchmarks", []) if b["name"].startswith("gemm_model/")]
    if not rows:
        sys.exit(f"plot_gemm_models: no gemm_model entries in {src}")
    series = defaultdict(lambda: defaultdict(list))  # model -> layer -> [(M, ratio)]
    for b in rows:
        _, model, layer, m = b["name"].split("/")[:4]
        series[model][f"{layer} (N {int(b['N'])}, K {int(b['K'])})"].append((int(m[1:]), b["ratio"]))
    models = sorted(series)
    fig, axes = plt.subplots(len(models), 1, figsize=(9, 3.2 * len(models)), sharex=True, squeeze=False)
    for ax, model in zip(axes[:, 0], models):
        for layer, pts in sorted(series[model].items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=layer)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(0.9, color="gray", linewidth=0.8, linestyle="--")
        ax.set_xscale("log", base=2)
        ax.set_title(model)
        ax.set_ylabel("ours / cuBLAS")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[-1, 0].set_xlabel("tokens M")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"plot_gemm_models: {len(rows)} entries -> {dst}")


if __name__ == "__main__":
    main()
